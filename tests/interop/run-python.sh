#!/usr/bin/env bash
# Interop test: restmcp against the official MCP Python SDK (mcp 2.3.0): python_client.py
# (every transport and check), then python_sizes.py (message sizes the SDK accepts).
#
#   RESTMCP_BIN=path/to/restmcp bash tests/interop/run-python.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repository root). The venv
# lives in target/interop/python-venv and is reused when present. Needs python3 (3.11 or
# later) and PyPI; the test's own traffic stays on 127.0.0.1.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# A relative RESTMCP_BIN is taken from the caller's directory; the default from the repo root.
bin="${RESTMCP_BIN:-$root/target/debug/restmcp}"
[[ "$bin" == /* ]] || bin="$PWD/$bin"
cd "$root"

sdk_version="2.3.0"
spec="tests/fixtures/interop-api.yaml"      # python_client.py
sizes_spec="tests/fixtures/echo-api.yaml"  # python_sizes.py (getItem and getFile)
venv="target/interop/python-venv"
python="${PYTHON:-python3}"

if [[ ! -x "$bin" ]]; then
    echo "run-python.sh: restmcp binary not found at $bin (build it, or set RESTMCP_BIN)" >&2
    exit 1
fi

if [[ ! -x "$venv/bin/python" ]]; then
    mkdir -p "$(dirname "$venv")"
    "$python" -m venv "$venv"
fi
# A no-op (and no download) when the venv already has this version.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "mcp==$sdk_version"

status=0
"$venv/bin/python" tests/interop/python_client.py --bin "$bin" --spec "$spec" || status=1
# Message sizes (python_sizes.py): GitHub's whole tools/list over legacy SSE, and results of
# several MiB. The spec lives in ../shared beside the repository (skipped when absent, unless CI).
"$venv/bin/python" tests/interop/python_sizes.py --bin "$bin" --spec "$sizes_spec" \
    --github "$root/../shared/specs/real/github.json" || status=1
exit "$status"
