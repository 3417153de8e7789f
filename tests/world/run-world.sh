#!/usr/bin/env bash
# The third-party suite: restmcp against httpbin and a FastAPI app, driven by the
# official MCP Python SDK (see tests/world/world.py for the checks).
#
#   RESTMCP_BIN=path/to/restmcp bash tests/world/run-world.sh [--only d1,d5]
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repository root). Installs
# pinned versions from PyPI into target/world/venv (reused when present): the MCP Python SDK
# the interop suite uses, FastAPI, uvicorn, python-multipart, httpbin and gunicorn. Needs
# python3 (3.11 or later); the suite's own traffic stays on 127.0.0.1. GitHub's description in
# ../shared/specs/real/github.json is read when present (SHARED_DIR overrides where).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# A relative RESTMCP_BIN is taken from the caller's directory; the default from the repo root.
bin="${RESTMCP_BIN:-$root/target/debug/restmcp}"
[[ "$bin" == /* ]] || bin="$PWD/$bin"
cd "$root"

venv="target/world/venv"
# No __pycache__ left in tests/world by the app the suite imports.
export PYTHONDONTWRITEBYTECODE=1
python="${PYTHON:-python3}"
shared="${SHARED_DIR:-$root/../shared}"
requirements=(
    "mcp==2.3.0"
    "fastapi==0.165.0"
    "uvicorn==0.54.0"
    "python-multipart==0.0.34"
    "httpbin==0.10.4"
    "gunicorn==27.0.1"
)

if [[ ! -x "$bin" ]]; then
    echo "run-world.sh: restmcp binary not found at $bin (build it, or set RESTMCP_BIN)" >&2
    exit 1
fi

if [[ ! -x "$venv/bin/python" ]]; then
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv"
fi
# A no-op (and no download) when the venv already has these versions.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${requirements[@]}"

args=(--bin "$bin")
[[ -d "$shared/specs" ]] && args+=(--shared "$shared")
exec "$venv/bin/python" tests/world/world.py "${args[@]}" "$@"
