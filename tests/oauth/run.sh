#!/usr/bin/env bash
# restmcp as an OAuth 2.1 resource server (issue 23), tested against a real
# OpenID provider: oidc-provider, pinned in tests/oauth/package-lock.json and
# run by tests/oauth/provider.mjs with configuration only. What is checked, and
# why: tests/oauth/test.mjs (discovery and the 401 challenge, valid / wrong
# audience / expired / tampered / alg:none JWTs, missing scope, opaque tokens
# through introspection, key rotation, the static token beside OAuth, no
# secret in restmcp's stderr).
#
#   RESTMCP_BIN=path/to/restmcp bash tests/oauth/run.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root);
# build it first. Needs node (>= 20; oidc-provider 9 warns that it prefers 22
# but runs on 20) and npm with access to the npm registry (install only). At run
# time only 127.0.0.1 is contacted. Output: one line per check (node:test spec
# reporter), the failing checks again at the end with the status and
# WWW-Authenticate seen; exit status 1 when any failed, and the work directory
# (config.toml, restmcp.stderr, provider.stderr) is kept and named.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

bin="${RESTMCP_BIN:-target/debug/restmcp}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
spec="$root/specs/petstore.yaml"

die() { echo "run.sh: $*" >&2; exit 1; }

[[ -x "$bin" ]] || die "restmcp binary not found or not executable: $bin (set RESTMCP_BIN or run cargo build)"
[[ -f "$spec" ]] || die "spec not found: $spec"
command -v node >/dev/null || die "node not found"
command -v npm >/dev/null || die "npm not found"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
(( node_major >= 20 )) || die "node >= 20 needed, found $(node --version)"

cd "$here"
npm ci --no-audit --no-fund --loglevel=error >/dev/null || die "npm ci failed in $here"

status=0
node --test-reporter=spec test.mjs --bin "$bin" --spec "$spec" || status=$?
if (( status != 0 )); then
  echo "run.sh: FAILED (exit $status); the failing checks are listed above" >&2
fi
exit "$status"
