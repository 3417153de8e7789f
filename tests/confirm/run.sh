#!/usr/bin/env bash
# Confirmation by a human, through the protocol, against the official MCP
# SDKs, with a real upstream:
#   httpbin==0.10.4 under gunicorn==27.0.1 as the upstream, its access log (gunicorn
#     --access-logfile) the witness of what did or did not reach it;
#   tests/confirm/python_confirm.py  the official Python SDK (mcp==2.3.0): stdio and Streamable
#     HTTP at 2025-11-25 (elicitation/create on the session; legacy HTTP+SSE too) and at
#     2026-07-28 (the input_required result, which the SDK answers and retries by itself), the callback
#     accepting, declining and cancelling, a client without elicitation (fail closed), the
#     body shown and shortened (confirm = "writes"), the opt-out (without_elicitation =
#     "proceed"); and raw 2026-07-28 JSON-RPC for what no SDK does: a tampered, replayed,
#     expired requestState, one for other arguments, another tool or another key;
#   tests/confirm/ts_confirm.mjs     the official TypeScript SDKs (@modelcontextprotocol/sdk
#     1.32.2 and @modelcontextprotocol/client 2.4.0, from tests/interop/ts), when present.
# Both get the same httpbin, started here: --httpbin URL --access-log FILE.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/confirm/run.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root); build it first.
# Needs python3 (3.11 or later) and PyPI (install only: the venv target/interop/python-venv of
# tests/interop/run-python.sh is reused, with httpbin and gunicorn added) and, for the
# TypeScript part, node (>= 20) and npm with access to the npm registry (npm ci in
# tests/interop/ts, as tests/interop/run-ts.sh does). At run time only 127.0.0.1 is contacted.
# Output: one line per check (`ok N - ...` / `not ok N - ...`); exit status 1 when any failed,
# and then the work directories (configs, stderr of every process, httpbin's access log) are
# kept and named.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# root, bin, venv, python; die, need_bin, need_python, need_node, setup_venv, start_httpbin, stop_httpbin, finish
source "$here/../lib/harness.sh"

requirements=("mcp==2.3.0" "httpbin==0.10.4" "gunicorn==27.0.1")
ts_dir="$root/tests/interop/ts"

need_bin
[[ -f "$here/confirm-api.yaml" ]] || die "spec not found: $here/confirm-api.yaml"
[[ -f "$here/python_confirm.py" ]] || die "not found: $here/python_confirm.py"
need_python

ts=0
if [[ -f "$here/ts_confirm.mjs" ]]; then
  ts=1
  need_node ts_confirm.mjs
  [[ -f "$ts_dir/package-lock.json" ]] || die "no package-lock.json in $ts_dir"
fi

setup_venv "${requirements[@]}"
if (( ts )); then
  (cd "$ts_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || die "npm ci failed in $ts_dir"
fi

# One httpbin for both, on a free loopback port, its access log in a work directory of ours.
work="$(mktemp -d "${TMPDIR:-/tmp}/restmcp-confirm-XXXXXX")"
trap stop_httpbin EXIT
trap 'exit 130' INT TERM HUP
start_httpbin "$work" 4 '%(h)s %(t)s "%(r)s" %(s)s %(b)s'
echo "# httpbin $httpbin, access log $access_log"

status=0
cd "$here"
"$venv/bin/python" python_confirm.py --bin "$bin" --httpbin "$httpbin" --access-log "$access_log" || status=1
if (( ts )); then
  node ts_confirm.mjs --bin "$bin" --python "$venv/bin/python" --httpbin "$httpbin" --access-log "$access_log" || status=1
else
  echo "# ts_confirm.mjs not found beside run.sh: the TypeScript SDK part was not run"
fi

finish "$status" "$work"
