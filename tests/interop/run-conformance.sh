#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned
# in tests/interop/conformance/package-lock.json) against `restmcp serve`.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/interop/run-conformance.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root);
# build it first. Needs bash, npm with access to the npm registry (install only)
# and any node that runs npm: the suite itself needs Node >= 22, which comes
# from the npm registry as the `node` package into conformance/node_modules.
# At run time only 127.0.0.1 is contacted.
#
# restmcp serves the tools of tests/fixtures/echo-api.yaml (upstream
# http://127.0.0.1:9, never called by these scenarios) and, in mock mode with
# confirm = "destructive", those of tests/fixtures/confirm-conformance.yaml (the
# input-required-result-* scenarios' tools) on a free loopback port.
# Each scenario runs at the protocol revision named after its '@'; scenarios
# that belong to both revisions run once on each wire (the stateful initialize
# handshake of 2025-11-25, the stateless per-request _meta of 2026-07-28).
# Only scenarios that apply to a tools-only server are run: the others need
# prompts, resources, completions or the suite's own fixture tools
# (test_simple_text, test_input_required_result_*, ...). A handful of single
# checks that cannot apply to restmcp are listed, with reasons, in
# conformance/expected-failures.yaml; a scenario passes when the suite's runner
# reports no failure or warning outside that list.
#
# Output: one line per scenario ("pass NAME@REV" / "FAIL NAME@REV" plus the
# failing checks), then "conformance: N passed, M failed". Exit status 1 when
# any scenario failed. CONFORMANCE_RESULTS=DIR keeps the suite's checks.json
# files (and the server's stderr) in DIR.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
conf="$here/conformance"

bin="${RESTMCP_BIN:-target/debug/restmcp}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
spec="$root/tests/fixtures/echo-api.yaml"
confirm_spec="$root/tests/fixtures/confirm-conformance.yaml"

scenarios=(
  # 2025-11-25 (stateful wire)
  server-initialize@2025-11-25
  server-session-lifecycle@2025-11-25
  ping@2025-11-25
  tools-list@2025-11-25
  logging-set-level@2025-11-25
  server-sse-multiple-streams@2025-11-25
  dns-rebinding-protection@2025-11-25
  # 2026-07-28 (stateless wire)
  server-stateless@2026-07-28
  tools-list@2026-07-28
  server-sse-multiple-streams@2026-07-28
  dns-rebinding-protection@2026-07-28
  caching@2026-07-28
  http-header-validation@2026-07-28
  input-required-result-unsupported-methods@2026-07-28
  # Human confirmation (issue #24): the suite's tools test_input_required_result_* are
  # destructive operations of tests/fixtures/confirm-conformance.yaml, which restmcp asks
  # the user to confirm (input_required, signed requestState). The other
  # input-required-result-* scenarios need what a confirmation does not ask for: sampling,
  # roots, several questions or rounds, a key named user_name, prompts, or an answer
  # accepted without the state (ignore-extra-params sends none), or they declare a client
  # without elicitation and want a question anyway (capability-check: restmcp fails closed).
  input-required-result-result-type@2026-07-28
  input-required-result-request-state@2026-07-28
  input-required-result-tampered-state@2026-07-28
  input-required-result-missing-input-response@2026-07-28
  input-required-result-validate-input@2026-07-28
)

SCENARIO_TIMEOUT_S=180 # per scenario, around the suite's own 60 s
BANNER_TIMEOUT_S=20
STOP_TIMEOUT_S=10

die() { echo "run-conformance.sh: $*" >&2; exit 1; }

[[ -x "$bin" ]] || die "restmcp binary not found or not executable: $bin (set RESTMCP_BIN or run cargo build)"
[[ -f "$spec" ]] || die "spec not found: $spec"
[[ -f "$confirm_spec" ]] || die "spec not found: $confirm_spec"
command -v npm >/dev/null || die "npm not found"
command -v timeout >/dev/null || die "timeout (coreutils) not found"

# --- cleanup: nothing outlives this script ----------------------------------
work=""
server_pid=""
job_pid=""

# Runs a command (in directory $1) in the background and waits for it, so that
# a signal to this script is acted on at once; cleanup ends it. The command is
# always a `timeout ...`, which passes SIGTERM on to what it runs.
bounded() {
  local dir="$1" rc=0
  shift
  ( cd "$dir" && exec "$@" ) &
  job_pid=$!
  wait "$job_pid" || rc=$?
  job_pid=""
  return "$rc"
}

stop_server() {
  [[ -n "$server_pid" ]] || return 0
  if kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq $((STOP_TIMEOUT_S * 10))); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$server_pid" 2>/dev/null; then
      echo "run-conformance.sh: restmcp did not stop on SIGTERM within ${STOP_TIMEOUT_S}s; killing it" >&2
      kill -KILL "$server_pid" 2>/dev/null || true
    fi
  fi
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
cleanup() {
  if [[ -n "$job_pid" ]]; then
    kill -TERM "$job_pid" 2>/dev/null || true
    wait "$job_pid" 2>/dev/null || true
  fi
  stop_server
  [[ -z "$work" ]] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- install (the only step that uses the network: the npm registry) ---------
npm_flags=(--no-audit --no-fund --loglevel=error)
npm_cmd=ci
[[ -f "$conf/package-lock.json" ]] || npm_cmd=install
bounded "$conf" timeout -k 10 900 npm "$npm_cmd" "${npm_flags[@]}" >/dev/null \
  || die "npm $npm_cmd in $conf failed"

node="$conf/node_modules/node/bin/node"
suite="$conf/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[[ -x "$node" ]] || die "node from the npm 'node' package missing: $node"
[[ -f "$suite" ]] || die "conformance suite missing: $suite"
node_major="$(timeout 30 "$node" -p 'process.versions.node.split(".")[0]')"
(( node_major >= 22 )) || die "the suite needs node >= 22, $node is $node_major"

work="$(mktemp -d "${TMPDIR:-/tmp}/restmcp-conformance.XXXXXX")"
results="${CONFORMANCE_RESULTS:-$work/results}"
mkdir -p "$results"

free_port() {
  timeout 30 "$node" -e '
    const s = require("node:net").createServer();
    s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# --- start restmcp -----------------------------------------------------------
# From an empty directory (no stray config.toml) and without the caller's
# RESTMCP_* settings. A port taken between probing and binding makes restmcp
# exit at once; that is retried.
server_err="$results/restmcp-serve.stderr"
url=""
for attempt in 1 2 3; do
  port="$(free_port)"
  (
    cd "$work"
    for v in $(compgen -e | grep '^RESTMCP_' || true); do unset "$v"; done
    cat >config.toml <<TOML
[server]
listen = "127.0.0.1:$port"
[apis.echo]
spec = "$spec"
base_url = "http://127.0.0.1:9"
[apis.confirm]
spec = "$confirm_spec"
mock = true
confirm = "destructive"
TOML
    exec "$bin" serve --config config.toml
  ) </dev/null >/dev/null 2>"$server_err" &
  server_pid=$!
  deadline=$((SECONDS + BANNER_TIMEOUT_S))
  while (( SECONDS < deadline )); do
    if banner="$(grep -m1 -o 'MCP over Streamable HTTP at http://[^ ,;]*' "$server_err")"; then
      url="${banner##* at }"
      break
    fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -n "$url" ]] && break
  if kill -0 "$server_pid" 2>/dev/null; then
    stop_server
    die "no banner from restmcp serve within ${BANNER_TIMEOUT_S}s; stderr: $(head -c 2000 "$server_err")"
  fi
  stop_server
  echo "run-conformance.sh: restmcp serve exited early (attempt $attempt): $(head -c 500 "$server_err")" >&2
done
[[ -n "$url" ]] || die "restmcp serve did not start"
case "$url" in http://127.0.0.1:*) ;; *) die "unexpected MCP URL in the banner: $url" ;; esac

# --- scenarios -----------------------------------------------------------------
# Prints "    STATUS check-id: message" for each failed or warned check of one
# scenario run (args: results dir, scenario, baseline file) that the baseline
# does not excuse.
show_failures='
const fs = require("node:fs"), path = require("node:path");
const [dir, scenario, baselineFile] = process.argv.slice(1);
const excused = new Set(fs.readFileSync(baselineFile, "utf8").split("\n")
  .map((l) => /^\s*-\s*([^\s#]+)/.exec(l)?.[1]).filter(Boolean));
const runs = fs.readdirSync(dir).map((d) => path.join(dir, d, "checks.json")).filter((f) => fs.existsSync(f));
if (runs.length === 0) process.exit(1);
for (const f of runs)
  for (const c of JSON.parse(fs.readFileSync(f, "utf8"))) {
    if (c.status !== "FAILURE" && c.status !== "WARNING") continue;
    if (excused.has(scenario) || excused.has(scenario + ":" + c.id)) continue;
    const msg = String(c.errorMessage ?? c.description ?? "").replace(/\s+/g, " ").slice(0, 400);
    console.log("    " + c.status + " " + c.id + ": " + msg);
  }
'
passed=0
failed=0
started=$SECONDS
for entry in "${scenarios[@]}"; do
  name="${entry%@*}"
  rev="${entry#*@}"
  out="$results/$name@$rev"
  mkdir -p "$out"
  rc=0
  bounded "$work" timeout -k 5 "$SCENARIO_TIMEOUT_S" "$node" "$suite" server \
    --url "$url" --scenario "$name" --spec-version "$rev" \
    --expected-failures "$conf/expected-failures.yaml" \
    --timeout 60000 -o "$out" </dev/null >"$out/runner.log" 2>&1 || rc=$?
  if (( rc == 0 )); then
    passed=$((passed + 1))
    echo "pass $name@$rev"
  else
    failed=$((failed + 1))
    why=""
    (( rc == 124 || rc == 137 )) && why=" (timed out after ${SCENARIO_TIMEOUT_S}s)"
    echo "FAIL $name@$rev$why"
    # The checks held against restmcp (failures and warnings outside the
    # baseline), with the suite's messages; the runner's log if it left none.
    held="$(timeout 30 "$node" -e "$show_failures" "$out" "$name" "$conf/expected-failures.yaml" || true)"
    if [[ -n "$held" ]]; then
      echo "$held"
    else # no checks.json, or the runner failed for another reason (say, a stale baseline entry)
      sed 's/\x1b\[[0-9;]*m//g' "$out/runner.log" | tail -n 15 | sed 's/^/    /'
    fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "    restmcp serve is no longer running; stderr: $(tail -c 1000 "$server_err")"
    fi
  fi
done
elapsed=$((SECONDS - started))

stop_server
[[ -n "${CONFORMANCE_RESULTS:-}" ]] && echo "results: $results (${elapsed}s of scenarios)" >&2
echo "conformance: $passed passed, $failed failed"
(( failed == 0 ))
