#!/usr/bin/env bash
# Hostile clients against implementations nobody here
# wrote: what a hostile client does is raw HTTP, what must keep working (or be refused) is
# seen through the official MCP SDKs, and the upstream is a real one:
#   httpbin==0.10.4 under gunicorn==27.0.1, its access log (with each request's
#     Idempotency-Key and X-Mode headers) the witness of what reached it;
#   tests/fixtures/tasks-conformance/upstream.py for an operation that answers 202 +
#     Operation-Location (handles and tasks);
#   tests/hostile/python_hostile.py  the official Python SDK (mcp==2.3.0), raw httpx2 beside it;
#   tests/hostile/ts_hostile.mjs     the official TypeScript SDKs (@modelcontextprotocol/sdk
#     1.32.2 at 2025-11-25, @modelcontextprotocol/client 2.4.0 at 2025-11-25 and 2026-07-28,
#     from tests/interop/ts), raw fetch beside them.
# Each file's header lists its checks: (1) a request id already in flight in a session is
# refused at once while the SDK's call goes on, SSE answers count against the per-client
# stream cap (how each SDK surfaces the 429), /healthz answers; (2) a client holding every
# session does not lock another out, and what an SDK whose session was given up sees;
# (3) idempotency records, operation handles and tasks, confirmation states and legacy /sse
# sessions belong to the static token that made them; (4) a confirmation shows and binds a
# header argument (X-Mode: dry-run is not redeemed for purge-everything).
#
#   RESTMCP_BIN=path/to/restmcp bash tests/hostile/run.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root); build it first.
# Needs python3 (3.11 or later) and PyPI (install only: the venv target/interop/python-venv of
# tests/interop/run-python.sh is reused, with httpbin and gunicorn added) and node (>= 20) and
# npm (npm ci in tests/interop/ts, as tests/interop/run-ts.sh does). At run time only
# 127.0.0.1 is contacted. Output: one line per check (`ok N - ...` / `not ok N - ...`); exit
# status 1 when any failed, and then the work directories (configs, every process's output,
# httpbin's access log) are kept and named. About a minute.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# root, bin, venv, python; die, need_bin, need_python, need_node, setup_venv, start_httpbin, stop_httpbin, finish
source "$here/../lib/harness.sh"

requirements=("mcp==2.3.0" "httpbin==0.10.4" "gunicorn==27.0.1")
ts_dir="$root/tests/interop/ts"

need_bin
for f in hostile-api.yaml python_hostile.py ts_hostile.mjs; do
  [[ -f "$here/$f" ]] || die "not found: $here/$f"
done
need_python
need_node ts_hostile.mjs
[[ -f "$ts_dir/package-lock.json" ]] || die "no package-lock.json in $ts_dir"

setup_venv "${requirements[@]}"
(cd "$ts_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || die "npm ci failed in $ts_dir"

# One httpbin for both, with enough threads for the calls held in flight (/delay), its access
# log in a work directory of ours, in the format both test files parse.
work="$(mktemp -d "${TMPDIR:-/tmp}/restmcp-hostile-XXXXXX")"
trap stop_httpbin EXIT
trap 'exit 130' INT TERM HUP
start_httpbin "$work" 16 '%(h)s %(t)s "%(r)s" %(s)s idem="%({idempotency-key}i)s" mode="%({x-mode}i)s"'
echo "# httpbin $httpbin, access log $access_log"

status=0
started=$SECONDS
cd "$here"
"$venv/bin/python" python_hostile.py --bin "$bin" --httpbin "$httpbin" --access-log "$access_log" || status=1
node ts_hostile.mjs --bin "$bin" --python "$venv/bin/python" --httpbin "$httpbin" --access-log "$access_log" || status=1
echo "# tests/hostile: $((SECONDS - started)) s"

finish "$status" "$work"
