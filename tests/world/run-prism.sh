#!/usr/bin/env bash
# The Prism suite: every tool of the shipped, fixture and shared API descriptions called with
# generated arguments (`restmcp selftest --live`) against Stoplight Prism (`prism mock`, pinned
# with Node 24 in tests/world/prism/package-lock.json), which validates each request against the
# same description. Any request Prism rejects (4xx), and any call that gets no answer, fails the
# run unless tests/world/prism-known.yaml lists it with the clause that shows Prism is wrong (or
# the fix of restmcp under way); a listed case that no longer fails also fails the run.
# tests/world/prism/run.mjs does the work and says how each call is judged.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/world/run-prism.sh [--only LABEL]...
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root); build it first.
# Needs bash, and npm with access to the npm registry (install only); Node 24 comes from the
# npm registry as the `node` package. At run time only 127.0.0.1 is contacted. The shared
# specs are read from ../shared/specs (RESTMCP_SHARED_SPECS overrides it) and skipped, with a
# note, when it is absent.
#
# Output: a line per spec ("pass LABEL: …" / "FAIL LABEL: …" plus the failing calls), then
# "prism: N specs …" with the totals. Per spec, target/world/prism/LABEL/ keeps the
# config.toml, the selftest report, Prism's log and the relay's log of every exchange
# (PRISM_RESULTS=DIR puts them elsewhere). Exit status 1 when any spec failed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dir="$here/prism"

bin="${RESTMCP_BIN:-target/debug/restmcp}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac

die() { echo "run-prism.sh: $*" >&2; exit 1; }
[[ -x "$bin" ]] || die "restmcp binary not found or not executable: $bin (set RESTMCP_BIN or run cargo build)"
command -v npm >/dev/null || die "npm not found"
command -v timeout >/dev/null || die "timeout (coreutils) not found"

# --- install (the only step that uses the network: the npm registry) ---------
# Prism's @scarf/scarf dependency would report the install; it is told not to.
export SCARF_ANALYTICS=false DO_NOT_TRACK=1
# `npm ci` wipes node_modules and takes a minute, so it runs only when node_modules was not
# installed from this very lock file.
npm_flags=(--no-audit --no-fund --loglevel=error)
lock="$dir/package-lock.json"
stamp="$dir/node_modules/.restmcp-installed-from"
want="$(sha256sum "$lock" | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  (cd "$dir" && timeout -k 10 900 npm ci "${npm_flags[@]}" >/dev/null) || die "npm ci in $dir failed"
  echo "$want" >"$stamp"
fi

node="$dir/node_modules/node/bin/node"
[[ -x "$node" ]] || die "node from the npm 'node' package missing: $node"
node_major="$(timeout 30 "$node" -p 'process.versions.node.split(".")[0]')"
(( node_major >= 24 )) || die "Prism 5.16 needs node >= 24.18, $node is $node_major"

exec "$node" "$dir/run.mjs" --bin "$bin" \
  --shared "${RESTMCP_SHARED_SPECS:-$root/../shared/specs}" \
  --known "$root/tests/world/prism-known.yaml" \
  --results "${PRISM_RESULTS:-$root/target/world/prism}" \
  "$@"
