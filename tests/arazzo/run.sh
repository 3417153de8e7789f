#!/usr/bin/env bash
# The Arazzo differential suite: each run of tests/arazzo/corpus/ (a workflow, its inputs, a
# script for the upstream, what to expect) through Redocly Respect (`redocly respect`, the
# reference executor) and through restmcp's workflow tool (one `restmcp serve` per case,
# called with the official MCP Python SDK over Streamable HTTP), both against the same scripted
# upstream (tests/arazzo/upstream.py, FastAPI), whose access log is the witness: the requests
# in order, success or failure, and restmcp's outputs against the case's expected values.
# Differences listed in tests/arazzo/known.yaml (with the clause each rests on) are expected;
# an unlisted one fails the run, and so does a listed one that no longer occurs.
# tests/arazzo/differential.py does the work and says how each run is judged.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/arazzo/run.sh [--only CASE]... [--side respect]
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root); build it first.
# `--side respect` runs the Respect side only (the corpus against the reference, no restmcp).
# Installs, once, into target/arazzo/: a venv (python >= 3.11, from PyPI: FastAPI, uvicorn,
# PyYAML and the MCP Python SDK, pinned below) and @redocly/cli from the npm registry (pinned
# in tests/arazzo/respect/package-lock.json). Respect needs node >= 20.19 (or 22.12): the
# machine's node when it is recent enough (ARAZZO_NPM_NODE=1: never), else the npm `node`
# package (22, pinned here), installed under target/arazzo/node.
# At run time only 127.0.0.1 is contacted (Respect's telemetry is turned off).
#
# Output: a line per run ("pass CASE/RUN: …" / "FAIL CASE/RUN: …" and what differed), then
# "arazzo: P passed, F failed". target/arazzo/work/ keeps each case's config.toml, Respect's
# JSON logs and output, both sides' requests and restmcp's log (ARAZZO_WORK=DIR elsewhere).
# Exit status 1 when any run failed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

bin="${RESTMCP_BIN:-target/debug/restmcp}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac

die() { echo "arazzo/run.sh: $*" >&2; exit 1; }
[[ -x "$bin" ]] || die "restmcp binary not found or not executable: $bin (set RESTMCP_BIN or run cargo build)"
command -v npm >/dev/null || die "npm not found"
command -v timeout >/dev/null || die "timeout (coreutils) not found"
python="${PYTHON:-python3}"
command -v "$python" >/dev/null || die "$python not found (set PYTHON)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "python >= 3.11 needed, found $("$python" --version 2>&1)"

state="$root/target/arazzo"
mkdir -p "$state"

# --- Python: the upstream, the SDK, the runner --------------------------------------------
requirements=("mcp==2.3.0" "fastapi==0.165.0" "uvicorn==0.54.0" "PyYAML==6.0.3")
venv="$state/venv"
if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv" || die "cannot create the venv $venv"
fi
want_py="$(printf '%s\n' "${requirements[@]}")"
if [[ "$(cat "$venv/.restmcp-installed" 2>/dev/null)" != "$want_py" ]]; then
  timeout -k 10 900 "$venv/bin/python" -m pip install -q --disable-pip-version-check "${requirements[@]}" \
    || die "pip install ${requirements[*]} failed"
  echo "$want_py" >"$venv/.restmcp-installed"
fi

# --- Respect: @redocly/cli from its lock file, installed under target/ --------------------
npm_flags=(--no-audit --no-fund --loglevel=error)
respect_dir="$state/respect"
lock="$here/respect/package-lock.json"
want_lock="$(cat "$here/respect/package.json" "$lock" | sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$respect_dir/node_modules/.restmcp-installed-from" 2>/dev/null)" != "$want_lock" ]]; then
  mkdir -p "$respect_dir"
  cp "$here/respect/package.json" "$lock" "$respect_dir/"
  (cd "$respect_dir" && timeout -k 10 900 npm ci "${npm_flags[@]}" >/dev/null) || die "npm ci in $respect_dir failed"
  echo "$want_lock" >"$respect_dir/node_modules/.restmcp-installed-from"
fi
cli="$respect_dir/node_modules/@redocly/cli/bin/cli.js"
[[ -f "$cli" ]] || die "@redocly/cli missing: $cli"

# --- node: the machine's when it is >= 20.19 (20.x) or >= 22.12, else the npm package -----
node_ok() {
  "$1" -e 'const [a, b] = process.versions.node.split(".").map(Number);
    process.exit((a === 20 && b >= 19) || (a === 22 && b >= 12) || a > 22 ? 0 : 1)' 2>/dev/null
}
node="$(command -v node || true)"
if [[ -n "${ARAZZO_NPM_NODE:-}" || -z "$node" ]] || ! node_ok "$node"; then
  node_dir="$state/node"
  node="$node_dir/node_modules/node/bin/node"
  if [[ ! -x "$node" ]]; then
    mkdir -p "$node_dir"
    (cd "$node_dir" && timeout -k 10 900 npm install "${npm_flags[@]}" --no-save --prefix "$node_dir" node@22.23.3 >/dev/null) \
      || die "npm install node@22.23.3 failed"
  fi
  node_ok "$node" || die "no usable node for Respect (needs >= 20.19): $node"
fi

export PYTHONDONTWRITEBYTECODE=1
exec "$venv/bin/python" "$here/differential.py" --bin "$bin" --node "$node" --respect "$cli" \
  --work "${ARAZZO_WORK:-$state/work}" "$@"
