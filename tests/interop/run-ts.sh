#!/usr/bin/env bash
# Interoperability test of restmcp with the official MCP TypeScript SDK: the 1.x
# @modelcontextprotocol/sdk and, for the revisions 1.x cannot speak (2025-06-18,
# 2026-07-28), the 2.x @modelcontextprotocol/client, both pinned in
# tests/interop/ts/package-lock.json. What is checked: tests/interop/ts/client.mjs.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/interop/run-ts.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root);
# build it first. Needs node (>= 20) and npm with access to the npm registry.
# Dependencies are installed into tests/interop/ts/node_modules.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
ts="$here/ts"

bin="${RESTMCP_BIN:-target/debug/restmcp}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
spec="${RESTMCP_SPEC:-$root/tests/fixtures/interop-api.yaml}"

if [[ ! -x "$bin" ]]; then
  echo "run-ts.sh: restmcp binary not found or not executable: $bin (set RESTMCP_BIN or run cargo build)" >&2
  exit 1
fi
command -v node >/dev/null || { echo "run-ts.sh: node not found" >&2; exit 1; }
command -v npm >/dev/null || { echo "run-ts.sh: npm not found" >&2; exit 1; }

cd "$ts"
npm_flags=(--no-audit --no-fund --loglevel=error)
if [[ -f package-lock.json ]]; then
  npm ci "${npm_flags[@]}" >/dev/null
else
  npm install "${npm_flags[@]}" >/dev/null
fi

exec node client.mjs --bin "$bin" --spec "$spec"
