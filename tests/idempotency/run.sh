#!/usr/bin/env bash
# Idempotency for non-idempotent operations, with a real upstream, a real
# Redis and two restmcp replicas sharing it, against the official MCP Python SDK:
#   httpbin==0.10.4 under gunicorn==27.0.1 as the upstream, its access log (gunicorn
#     --access-logfile, each line ending with the request's Idempotency-Key header) the witness
#     of what did or did not reach it, and with which key;
#   redis-server from Debian's package, started by the test on free loopback ports (nothing
#     saved to disk): one shared by replicas A and B (and E1, E2 behind OAuth), one with a
#     password, one stopped and frozen mid-test;
#   tests/idempotency/python_idempotency.py  the official Python SDK (mcp==2.3.0) over
#     Streamable HTTP at 2025-11-25 and 2026-07-28, and raw 2026-07-28 JSON-RPC (httpx2) for the
#     confirmation states; see its docstring for every check.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/idempotency/run.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root); build it first.
# redis-server is installed from the Debian packages when not found (needs root and apt-get;
# policy-rc.d keeps the package from starting its own service on 6379, which this test never
# uses either way). Needs python3 (3.11 or later) and PyPI (install only: the venv
# target/interop/python-venv of tests/interop/run-python.sh is reused, with httpbin and
# gunicorn added). At run time only 127.0.0.1 is contacted.
# Output: one line per check (`ok N - ...` / `not ok N - ...`); exit status 1 when any failed,
# and then the work directories (configs, the output of every process, httpbin's access log)
# are kept and named.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# root, bin, venv, python; die, need_bin, need_python, setup_venv, start_httpbin, stop_httpbin, finish
source "$here/../lib/harness.sh"
# install_from_debian
source "$here/../lib/apt.sh"

say() { echo "# $*"; }

requirements=("mcp==2.3.0" "httpbin==0.10.4" "gunicorn==27.0.1")

need_bin
[[ -f "$here/idem-api.yaml" ]] || die "spec not found: $here/idem-api.yaml"
[[ -f "$here/python_idempotency.py" ]] || die "not found: $here/python_idempotency.py"
need_python

# --- redis-server --------------------------------------------------------------------------

find_redis() {
  command -v redis-server || { [[ -x /usr/bin/redis-server ]] && echo /usr/bin/redis-server; }
}

redis_bin="$(find_redis)" || { install_from_debian redis-server redis-server; redis_bin="$(find_redis)" || die "redis-server still not found"; }

# --- the Python SDK, httpbin, gunicorn -----------------------------------------------------

setup_venv "${requirements[@]}"

# --- httpbin, on a free loopback port, its access log in a work directory of ours -----------

work="$(mktemp -d "${TMPDIR:-/tmp}/restmcp-idem-XXXXXX")"
trap stop_httpbin EXIT
trap 'exit 130' INT TERM HUP
# The request's Idempotency-Key header ends each line ("-" when there was none): the test
# reads which key reached httpbin, and how often. 8 threads: a slow call (/delay/3) and the
# checks' own requests run at once.
start_httpbin "$work" 8 '%(h)s %(t)s "%(r)s" %(s)s %(b)s key="%({idempotency-key}i)s"'
say "httpbin $httpbin, access log $access_log; $("$redis_bin" --version)"

status=0
cd "$here"
"$venv/bin/python" python_idempotency.py --bin "$bin" --redis-server "$redis_bin" \
  --httpbin "$httpbin" --access-log "$access_log" || status=1

finish "$status" "$work"
