#!/usr/bin/env bash
# Resources, resource templates, subscriptions, prompts and completions (issue 36) through the
# official MCP SDKs, against a real upstream whose ETag changes:
#   tests/surface/app.py  a FastAPI app (fastapi==0.165.0 under uvicorn==0.54.0, the pins of
#     tests/world/run-world.sh): notes with an ETag and Cache-Control max-age, 304 to a matching
#     If-None-Match, a PNG badge per note, notes by priority; its request log (GET /_log) the
#     witness of what the subscriptions' polls sent;
#   surface-api.yaml, surface.overlay.yaml, config.toml  its description, the overlay making
#     the GET operations resources and templates (with completions) and giving a prompt, and
#     restmcp's configuration ([resources] poll_seconds = 1, a prompt, forward_headers);
#   tests/surface/python_surface.py  the official Python SDK (mcp==2.3.0) over stdio and
#     Streamable HTTP at 2025-11-25 and 2026-07-28 and over legacy SSE, then plain 2026-07-28
#     JSON-RPC over HTTP (ttlMs and cacheScope, -32602 with data.uri, input_required and its
#     retry, subscriptions/listen); see its docstring for every check;
#   tests/surface/ts_surface.mjs  the same through the official TypeScript SDKs
#     (@modelcontextprotocol/sdk 1.32.2 at 2025-11-25 over stdio, Streamable HTTP and legacy
#     SSE; @modelcontextprotocol/client 2.4.0 at 2026-07-28 over stdio and Streamable HTTP, the
#     pins of tests/interop/ts/package-lock.json), run by python_surface.py.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/surface/run.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root); build it first.
# Needs python3 (3.11 or later) and PyPI (install only: the venv target/interop/python-venv of
# tests/interop/run-python.sh is reused, with fastapi and uvicorn added), node (>= 20) and npm
# (install only, when tests/interop/ts/node_modules lacks the SDKs: `npm ci` there). At run
# time only 127.0.0.1 is contacted. About 2 minutes (subscriptions poll once a second and each
# client watches for quiet and for a change).
# Output: one line per check (`ok N - ...` / `not ok N - ...`); exit status 1 when any failed,
# and then the work directory (the output of every process) is kept and named.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# root, bin, venv, python; die, need_bin, need_python, need_node, setup_venv
source "$here/../lib/harness.sh"

requirements=("mcp==2.3.0" "fastapi==0.165.0" "uvicorn==0.54.0")

need_bin
for file in surface-api.yaml surface.overlay.yaml config.toml app.py python_surface.py ts_surface.mjs; do
  [[ -f "$here/$file" ]] || die "not found: $here/$file"
done
need_python
setup_venv "${requirements[@]}"
need_node "tests/surface/ts_surface.mjs"
ts="$root/tests/interop/ts"
if [[ ! -f "$ts/node_modules/@modelcontextprotocol/sdk/package.json" || ! -f "$ts/node_modules/@modelcontextprotocol/client/package.json" ]]; then
  (cd "$ts" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || die "npm ci in $ts failed"
fi

cd "$here"
# It starts the app (uvicorn) and restmcp itself, and kills them on any exit.
if ! "$venv/bin/python" python_surface.py --bin "$bin" --ts "$ts"; then
  echo "run.sh: FAILED; the failing checks are listed above (the work directory named there is kept)" >&2
  exit 1
fi
