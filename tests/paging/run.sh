#!/usr/bin/env bash
# Bounded results that stay usable (issue 24, part 4), with a real upstream, against the
# official MCP Python SDK:
#   tests/paging/app.py  a FastAPI app (fastapi==0.165.0 under uvicorn==0.54.0, the pins of
#     tests/world/run-world.sh) holding 1000 numbered items, served by offset and limit, by
#     page and per_page, after a Stripe-style cursor, and all at once (paging-api.yaml); its
#     request log (GET /_seen) the witness of the page size it was asked for;
#   tests/paging/python_paging.py  the official Python SDK (mcp==2.3.0) over Streamable HTTP at
#     2025-11-25 and 2026-07-28 against `restmcp serve` with max_result_tokens = 1000 (and
#     max_page_size = 50): whole items within the budget, the truncated note's numbers, and
#     `next` followed until there is none covering every item exactly once; see its docstring
#     for every check; also a long-running operation (202 Accepted, a status to poll) followed
#     to its end with progress (issue 24, part 3).
#
#   RESTMCP_BIN=path/to/restmcp bash tests/paging/run.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root); build it first.
# Needs python3 (3.11 or later) and PyPI (install only: the venv target/interop/python-venv of
# tests/interop/run-python.sh is reused, with fastapi and uvicorn added). At run time only
# 127.0.0.1 is contacted.
# Output: one line per check (`ok N - ...` / `not ok N - ...`); exit status 1 when any failed,
# and then the work directory (configs, the output of every process) is kept and named.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# root, bin, venv, python; die, need_bin, need_python, setup_venv
source "$here/../lib/harness.sh"

requirements=("mcp==2.3.0" "fastapi==0.165.0" "uvicorn==0.54.0")

need_bin
for file in paging-api.yaml app.py python_paging.py; do
  [[ -f "$here/$file" ]] || die "not found: $here/$file"
done
need_python
setup_venv "${requirements[@]}"

status=0
cd "$here"
# The test starts the app (uvicorn) and restmcp itself, and kills them on any exit.
"$venv/bin/python" python_paging.py --bin "$bin" || status=1
if (( status != 0 )); then
  echo "run.sh: FAILED; the failing checks are listed above (the work directory named there is kept)" >&2
fi
exit "$status"
