#!/usr/bin/env bash
# restmcp as an OAuth 2.1 resource server acting for its users,
# tested against a real OpenID provider and a real upstream:
#   oidc-provider, pinned in tests/oauth/package-lock.json and run by
#     tests/oauth/provider.mjs (configuration, plus the RFC 8693 token-exchange
#     grant oidc-provider lacks);
#   httpbin==0.10.4 under gunicorn as the upstream (tests/oauth/echo-api.yaml);
#   the official MCP Python SDK (mcp==2.3.0) as the OAuth client.
# What is checked, and why:
#   tests/oauth/test.mjs        the resource server (discovery and the 401
#     challenge, valid / wrong audience / expired / tampered / alg:none JWTs,
#     missing scope, opaque tokens through introspection, key rotation, the
#     static token beside OAuth, no secret in stderr), then token exchange
#     towards httpbin (end to end, the cache, one re-exchange after a 401,
#     refused and unreachable exchanges, no user behind a static token), then
#     scope-aware tools (users with different scopes see different tools/list
#     results; a call without the tool's scope gets 403 insufficient_scope and
#     never reaches httpbin; cacheScope "private" on 2026-07-28), then
#     introspection rationed and trusted for a bounded time
#     (a flood of made-up opaque tokens costs the provider `burst`
#     introspections, then 429 with Retry-After; what a valid token on the
#     same address sees; a revoked token refused within
#     introspection_cache_seconds);
#   tests/oauth/python_oauth.py the SDK's OAuth client given only restmcp's
#     URL: discovery, dynamic registration, code + PKCE through the provider's
#     login page, then a tool whose upstream sees an exchanged, per-user token;
#     scope-aware tools through the SDK: its step-up on 403 insufficient_scope
#     (authorizing again for the challenged scope) and the retried call.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/oauth/run.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root);
# build it first. Needs node (>= 20; oidc-provider 9 warns that it prefers 22
# but runs on 20) and npm with access to the npm registry, python3 (3.11 or
# later) and PyPI (install only; the venv target/interop/python-venv of
# tests/interop/run-python.sh is reused, with httpbin and gunicorn added). At
# run time only 127.0.0.1 is contacted. Output: one line per check, the failing
# checks again at the end; exit status 1 when any failed, and the work
# directories (configs, stderr of every process) are kept and named.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

bin="${RESTMCP_BIN:-target/debug/restmcp}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
spec="$root/specs/petstore.yaml"

die() { echo "run.sh: $*" >&2; exit 1; }

venv="$root/target/interop/python-venv"
python="${PYTHON:-python3}"
requirements=("mcp==2.3.0" "httpbin==0.10.4" "gunicorn==27.0.1")

[[ -x "$bin" ]] || die "restmcp binary not found or not executable: $bin (set RESTMCP_BIN or run cargo build)"
[[ -f "$spec" ]] || die "spec not found: $spec"
command -v node >/dev/null || die "node not found"
command -v npm >/dev/null || die "npm not found"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
(( node_major >= 20 )) || die "node >= 20 needed, found $(node --version)"

command -v "$python" >/dev/null || die "$python not found (set PYTHON)"

cd "$here"
npm ci --no-audit --no-fund --loglevel=error >/dev/null || die "npm ci failed in $here"
if [[ ! -x "$venv/bin/python" ]]; then
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv" || die "cannot create the venv $venv"
fi
# A no-op (and no download) when the venv already has these versions.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${requirements[@]}" \
  || die "pip install ${requirements[*]} failed"
# No __pycache__ written by the test's Python processes.
export PYTHONDONTWRITEBYTECODE=1

status=0
node --test-reporter=spec test.mjs --bin "$bin" --spec "$spec" --python "$venv/bin/python" || status=1
"$venv/bin/python" python_oauth.py --bin "$bin" --node "$(command -v node)" || status=1
if (( status != 0 )); then
  echo "run.sh: FAILED; the failing checks are listed above" >&2
fi
exit "$status"
