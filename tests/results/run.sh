#!/usr/bin/env bash
# Bounded results that stay usable, with a real upstream, against the
# official MCP Python SDK:
#   tests/results/app.py  a FastAPI app (fastapi==0.165.0 under uvicorn==0.54.0, the pins of
#     tests/world/run-world.sh) holding 1000 numbered items, served by offset and limit, by
#     page and per_page, after a Stripe-style cursor, and all at once (paging-api.yaml); its
#     request log (GET /_seen) the witness of the page size it was asked for;
#   tests/results/python_paging.py  the official Python SDK (mcp==2.3.0) over Streamable HTTP at
#     2025-11-25 and 2026-07-28 against `restmcp serve` with max_result_tokens = 1000 (and
#     max_page_size = 50): whole items within the budget, the truncated note's numbers, and
#     `next` followed until there is none covering every item exactly once; see its docstring
#     for every check; also a long-running operation (202 Accepted, a status to poll) followed
#     to its end with progress;
#   tests/results/python_operations.py  long-running operations past their call
#     with the same app and SDK: the handle and the operation_status tool at 2025-11-25
#     and 2026-07-28, and the 2026-07-28 Tasks extension (tasks/get, tasks/cancel) driven
#     through the SDK's extension interface; it also runs tests/results/ts_operations.mjs, the
#     status-tool walk with the official TypeScript SDKs (@modelcontextprotocol/sdk 1.32.2 at
#     2025-11-25, @modelcontextprotocol/client 2.4.0 at 2026-07-28, the pins of
#     tests/interop/ts/package-lock.json); see its docstring for every check.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/results/run.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root); build it first.
# Needs python3 (3.11 or later) and PyPI (install only: the venv target/interop/python-venv of
# tests/interop/run-python.sh is reused, with fastapi and uvicorn added), node (>= 20) and npm
# (install only, when tests/interop/ts/node_modules lacks the SDKs: `npm ci` there). At run
# time only 127.0.0.1 is contacted.
# Output: one line per check (`ok N - ...` / `not ok N - ...`); exit status 1 when any failed,
# and then the work directory (configs, the output of every process) is kept and named.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# root, bin, venv, python; die, need_bin, need_python, setup_venv
source "$here/../lib/harness.sh"

requirements=("mcp==2.3.0" "fastapi==0.165.0" "uvicorn==0.54.0")

need_bin
for file in paging-api.yaml app.py python_paging.py python_operations.py ts_operations.mjs; do
  [[ -f "$here/$file" ]] || die "not found: $here/$file"
done
need_python
setup_venv "${requirements[@]}"
need_node "tests/results/ts_operations.mjs"
ts="$root/tests/interop/ts"
if [[ ! -f "$ts/node_modules/@modelcontextprotocol/sdk/package.json" || ! -f "$ts/node_modules/@modelcontextprotocol/client/package.json" ]]; then
  (cd "$ts" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || die "npm ci in $ts failed"
fi

status=0
cd "$here"
# Each test starts the app (uvicorn) and restmcp itself, and kills them on any exit.
"$venv/bin/python" python_paging.py --bin "$bin" || status=1
"$venv/bin/python" python_operations.py --bin "$bin" --ts "$ts" || status=1
if (( status != 0 )); then
  echo "run.sh: FAILED; the failing checks are listed above (the work directory named there is kept)" >&2
fi
exit "$status"
