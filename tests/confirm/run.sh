#!/usr/bin/env bash
# Confirmation by a human, through the protocol (issue 24, part 1), against the official MCP
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
root="$(cd "$here/../.." && pwd)"

bin="${RESTMCP_BIN:-target/debug/restmcp}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac

die() { echo "run.sh: $*" >&2; exit 1; }

venv="$root/target/interop/python-venv"
python="${PYTHON:-python3}"
requirements=("mcp==2.3.0" "httpbin==0.10.4" "gunicorn==27.0.1")
ts_dir="$root/tests/interop/ts"

[[ -x "$bin" ]] || die "restmcp binary not found or not executable: $bin (set RESTMCP_BIN or run cargo build)"
[[ -f "$here/confirm-api.yaml" ]] || die "spec not found: $here/confirm-api.yaml"
[[ -f "$here/python_confirm.py" ]] || die "not found: $here/python_confirm.py"
command -v "$python" >/dev/null || die "$python not found (set PYTHON)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python >= 3.11 needed, found $("$python" --version 2>&1)"

ts=0
if [[ -f "$here/ts_confirm.mjs" ]]; then
  ts=1
  command -v node >/dev/null || die "node not found (needed for ts_confirm.mjs)"
  command -v npm >/dev/null || die "npm not found (needed for ts_confirm.mjs)"
  node_major="$(node -p 'process.versions.node.split(".")[0]')"
  (( node_major >= 20 )) || die "node >= 20 needed, found $(node --version)"
  [[ -f "$ts_dir/package-lock.json" ]] || die "no package-lock.json in $ts_dir"
fi

if [[ ! -x "$venv/bin/python" ]]; then
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv" || die "cannot create the venv $venv"
fi
# A no-op (and no download) when the venv already has these versions.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${requirements[@]}" \
  || die "pip install ${requirements[*]} failed"
if (( ts )); then
  (cd "$ts_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || die "npm ci failed in $ts_dir"
fi
# No __pycache__ written by the test's Python processes.
export PYTHONDONTWRITEBYTECODE=1

# One httpbin for both, on a free loopback port, its access log in a work directory of ours.
work="$(mktemp -d "${TMPDIR:-/tmp}/restmcp-confirm-XXXXXX")"
httpbin_pid=""
cleanup() {
  if [[ -n "$httpbin_pid" ]]; then
    kill "$httpbin_pid" 2>/dev/null || true
    wait "$httpbin_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

access_log="$work/httpbin-access.log"
httpbin=""
for attempt in 1 2 3; do
  port="$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  (cd "$work" && exec "$venv/bin/python" -m gunicorn --bind "127.0.0.1:$port" --workers 1 --threads 4 \
    --access-logfile "$access_log" --access-logformat '%(h)s %(t)s "%(r)s" %(s)s %(b)s' \
    httpbin:app) 2>"$work/httpbin.stderr" &
  httpbin_pid=$!
  for _ in $(seq 1 100); do
    if grep -q "Listening at: http://" "$work/httpbin.stderr" 2>/dev/null; then
      httpbin="http://127.0.0.1:$port"
      break
    fi
    kill -0 "$httpbin_pid" 2>/dev/null || break
    sleep 0.2
  done
  [[ -n "$httpbin" ]] && break
  cleanup
  httpbin_pid=""
done
[[ -n "$httpbin" ]] || die "httpbin (gunicorn) did not start; its stderr: $(tail -n 20 "$work/httpbin.stderr")"
echo "# httpbin $httpbin, access log $access_log"

status=0
cd "$here"
"$venv/bin/python" python_confirm.py --bin "$bin" --httpbin "$httpbin" --access-log "$access_log" || status=1
if (( ts )); then
  node ts_confirm.mjs --bin "$bin" --python "$venv/bin/python" --httpbin "$httpbin" --access-log "$access_log" || status=1
else
  echo "# ts_confirm.mjs not found beside run.sh: the TypeScript SDK part was not run"
fi

cleanup
httpbin_pid=""
if (( status != 0 )); then
  echo "run.sh: FAILED; the failing checks are listed above (httpbin's access log and stderr kept in $work)" >&2
else
  rm -rf "$work"
fi
exit "$status"
