#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned
# in tests/interop/conformance/package-lock.json) against `restmcp serve`.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/interop/run-conformance.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp (relative to the repo root);
# build it first. Needs bash, python3 (standard library only), npm with access
# to the npm registry (install only) and any node that runs npm: the suite
# itself needs Node >= 22, which comes from the npm registry as the `node`
# package into conformance/node_modules. At run time only 127.0.0.1 is contacted.
#
# restmcp serves the tools of tests/fixtures/echo-api.yaml (upstream
# http://127.0.0.1:9, never called by these scenarios) and, in mock mode with
# confirm = "destructive", those of tests/fixtures/confirm-conformance.yaml (the
# input-required-result-* scenarios' tools) on a free loopback port. A second
# `restmcp serve`, on its own port with its own config, serves the tasks-*
# scenarios (SEP-2663, the Tasks extension): the tools of
# tests/fixtures/tasks-conformance/tasks-api.yaml, named after the suite's
# fixture tools, whose upstream is tests/fixtures/tasks-conformance/upstream.py
# on a third port. An operation that answers 202 with a status monitor becomes a
# task for a client that declares the extension.
# Each scenario runs at the protocol revision named after its '@'; scenarios
# that belong to both revisions run once on each wire (the stateful initialize
# handshake of 2025-11-25, the stateless per-request _meta of 2026-07-28).
# Only scenarios that apply to a tools-only server are run: the others need
# prompts, resources, completions or the suite's own fixture tools
# (test_simple_text, test_input_required_result_*, ...). A handful of single
# checks that cannot apply to restmcp are listed, with reasons, in
# conformance/expected-failures.yaml; a scenario passes when the suite's runner
# reports no failure or warning outside that list, and each listed check that
# ends in "# fails-with: TEXT" failed with a message that starts with TEXT (an
# entry excused for one reason does not hide a failure for another).
#
# Output: one line per scenario ("pass NAME@REV" / "FAIL NAME@REV" plus the
# failing checks), then "conformance: N passed, M failed". Exit status 1 when
# any scenario failed. CONFORMANCE_RESULTS=DIR keeps the suite's checks.json
# files (and the servers' stderr and the tasks upstream's log) in DIR.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
conf="$here/conformance"

bin="${RESTMCP_BIN:-target/debug/restmcp}"
case "$bin" in /*) ;; *) bin="$root/$bin" ;; esac
spec="$root/tests/fixtures/echo-api.yaml"
confirm_spec="$root/tests/fixtures/confirm-conformance.yaml"
tasks_spec="$root/tests/fixtures/tasks-conformance/tasks-api.yaml"
tasks_upstream="$root/tests/fixtures/tasks-conformance/upstream.py"

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
  # Human confirmation: the suite's tools test_input_required_result_* are
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
  # Tasks extension (SEP-2663; long-running operations), against the second
  # server. The suite runs these extension scenarios on the 2026-07-28 wire by default
  # and only with --force at a named revision (they are not on its spec timeline), so
  # they are run with --force at 2026-07-28. At 2025-11-25 its wire-schema-valid check
  # holds tasks/get and tasks/cancel to that revision's own, older tasks shapes (ttl, a
  # Task as the cancel answer), which the extension replaces. Single checks that ask
  # for what a REST operation cannot do (a JSON-RPC-level failure inside a task, input
  # asked inside a task, a tool that requires a task) are in expected-failures.yaml.
  tasks-lifecycle@2026-07-28
  tasks-capability-negotiation@2026-07-28
  tasks-wire-fields@2026-07-28
  tasks-request-state-removal@2026-07-28
  tasks-request-headers@2026-07-28
  tasks-dispatch-and-envelope@2026-07-28
  tasks-required-task-error@2026-07-28
  tasks-mrtr-input@2026-07-28
  # test_tool_with_task is confirmed by the user (input_required), then its 202 makes the
  # answer to the confirmed call a task: the composition this scenario is about.
  tasks-mrtr-composition@2026-07-28
  # A placeholder in this version of the suite (one SKIPPED check, nothing sent); kept so
  # that a suite update that fills it in runs it.
  tasks-status-notifications@2026-07-28
)

SCENARIO_TIMEOUT_S=180 # per scenario, around the suite's own 60 s
BANNER_TIMEOUT_S=20 # also for the tasks upstream's "listening on" line
STOP_TIMEOUT_S=10

die() { echo "run-conformance.sh: $*" >&2; exit 1; }

[[ -x "$bin" ]] || die "restmcp binary not found or not executable: $bin (set RESTMCP_BIN or run cargo build)"
[[ -f "$spec" ]] || die "spec not found: $spec"
[[ -f "$confirm_spec" ]] || die "spec not found: $confirm_spec"
[[ -f "$tasks_spec" ]] || die "spec not found: $tasks_spec"
[[ -f "$tasks_upstream" ]] || die "upstream not found: $tasks_upstream"
command -v python3 >/dev/null || die "python3 not found"
command -v npm >/dev/null || die "npm not found"
command -v timeout >/dev/null || die "timeout (coreutils) not found"

# --- cleanup: nothing outlives this script ----------------------------------
work=""
server_pid=""       # restmcp for every scenario but tasks-*
tasks_server_pid="" # restmcp for tasks-*
upstream_pid=""     # upstream.py, the tasks server's upstream
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

# stop_process PID WHAT: SIGTERM, then SIGKILL after STOP_TIMEOUT_S; reaps it.
stop_process() {
  local pid="$1" what="$2"
  [[ -n "$pid" ]] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq $((STOP_TIMEOUT_S * 10))); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "run-conformance.sh: $what did not stop on SIGTERM within ${STOP_TIMEOUT_S}s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || true
}
stop_servers() {
  stop_process "$server_pid" "restmcp"
  server_pid=""
  stop_process "$tasks_server_pid" "restmcp (tasks)"
  tasks_server_pid=""
  stop_process "$upstream_pid" "the tasks upstream (upstream.py)"
  upstream_pid=""
}
cleanup() {
  if [[ -n "$job_pid" ]]; then
    kill -TERM "$job_pid" 2>/dev/null || true
    wait "$job_pid" 2>/dev/null || true
  fi
  stop_servers
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

# --- start the servers ---------------------------------------------------------
# Each restmcp runs from its own empty directory (no stray config.toml) and
# without the caller's RESTMCP_* settings. A port taken between probing and
# binding makes restmcp exit at once; that is retried.
#
# start_restmcp NAME WRITE_CONFIG STDERR: WRITE_CONFIG PORT prints the config;
# sets started_pid and started_url (the MCP endpoint from the banner).
start_restmcp() {
  local name="$1" write_config="$2" err="$3" dir="$work/$1" attempt port banner deadline
  mkdir -p "$dir"
  started_pid=""
  started_url=""
  for attempt in 1 2 3; do
    port="$(free_port)"
    "$write_config" "$port" >"$dir/config.toml"
    (
      cd "$dir"
      for v in $(compgen -e | grep '^RESTMCP_' || true); do unset "$v"; done
      exec "$bin" serve --config config.toml
    ) </dev/null >/dev/null 2>"$err" &
    started_pid=$!
    deadline=$((SECONDS + BANNER_TIMEOUT_S))
    while (( SECONDS < deadline )); do
      if banner="$(grep -m1 -o 'MCP over Streamable HTTP at http://[^ ,;]*' "$err")"; then
        started_url="${banner##* at }"
        break
      fi
      kill -0 "$started_pid" 2>/dev/null || break
      sleep 0.1
    done
    [[ -n "$started_url" ]] && break
    if kill -0 "$started_pid" 2>/dev/null; then
      stop_process "$started_pid" "restmcp ($name)"
      die "no banner from restmcp serve ($name) within ${BANNER_TIMEOUT_S}s; stderr: $(head -c 2000 "$err")"
    fi
    stop_process "$started_pid" "restmcp ($name)"
    started_pid=""
    echo "run-conformance.sh: restmcp serve ($name) exited early (attempt $attempt): $(head -c 500 "$err")" >&2
  done
  [[ -n "$started_url" ]] || die "restmcp serve ($name) did not start"
  case "$started_url" in http://127.0.0.1:*) ;; *) die "unexpected MCP URL in the banner ($name): $started_url" ;; esac
}

main_config() {
  cat <<TOML
[server]
listen = "127.0.0.1:$1"
[apis.echo]
spec = "$spec"
base_url = "http://127.0.0.1:9"
[apis.confirm]
spec = "$confirm_spec"
mock = true
confirm = "destructive"
TOML
}
tasks_config() {
  cat <<TOML
[server]
listen = "127.0.0.1:$1"
[apis.tasks]
spec = "$tasks_spec"
base_url = "$upstream_url"
# tasks-mrtr-composition: the user confirms the call (input_required), then it is sent.
confirm = ["test_tool_with_task"]
TOML
}

server_err="$results/restmcp-serve.stderr"
start_restmcp main main_config "$server_err"
server_pid="$started_pid"
url="$started_url"

# The tasks upstream picks a free port itself and says which.
upstream_log="$results/tasks-upstream.log"
python3 "$tasks_upstream" 0 </dev/null >"$upstream_log" 2>&1 &
upstream_pid=$!
upstream_url=""
deadline=$((SECONDS + BANNER_TIMEOUT_S))
while (( SECONDS < deadline )); do
  if line="$(grep -m1 -o 'listening on http://127\.0\.0\.1:[0-9]*' "$upstream_log")"; then
    upstream_url="${line#listening on }"
    break
  fi
  kill -0 "$upstream_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -n "$upstream_url" ]] || die "the tasks upstream did not start: $(head -c 2000 "$upstream_log")"

tasks_server_err="$results/restmcp-serve-tasks.stderr"
start_restmcp tasks tasks_config "$tasks_server_err"
tasks_server_pid="$started_pid"
tasks_url="$started_url"

# --- scenarios -----------------------------------------------------------------
# Prints "    STATUS check-id: message" for each failed or warned check of one
# scenario run (args: results dir, scenario, baseline file) that the baseline
# does not excuse, or excuses only with a "# fails-with: TEXT" its message does
# not start with.
show_failures='
const fs = require("node:fs"), path = require("node:path");
const [dir, scenario, baselineFile] = process.argv.slice(1);
const excused = new Map(fs.readFileSync(baselineFile, "utf8").split("\n")
  .map((l) => /^\s*-\s*([^\s#]+)\s*(?:#\s*fails-with:\s*(.*\S))?/.exec(l))
  .filter(Boolean).map((m) => [m[1], m[2]]));
const runs = fs.readdirSync(dir).map((d) => path.join(dir, d, "checks.json")).filter((f) => fs.existsSync(f));
if (runs.length === 0) process.exit(1);
for (const f of runs)
  for (const c of JSON.parse(fs.readFileSync(f, "utf8"))) {
    if (c.status !== "FAILURE" && c.status !== "WARNING") continue;
    const msg = String(c.errorMessage ?? c.description ?? "").replace(/\s+/g, " ");
    const key = excused.has(scenario + ":" + c.id) ? scenario + ":" + c.id : excused.has(scenario) ? scenario : null;
    if (key !== null) {
      const because = excused.get(key);
      if (because === undefined || msg.startsWith(because)) continue;
      console.log("    " + c.status + " " + c.id + " (excused only when its message starts with \"" + because + "\"): " + msg.slice(0, 400));
      continue;
    }
    console.log("    " + c.status + " " + c.id + ": " + msg.slice(0, 400));
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
  # tasks-* go to the tasks server; --force: see the list above.
  case "$name" in
    tasks-*) target="$tasks_url" target_pid="$tasks_server_pid" target_err="$tasks_server_err" force=(--force) ;;
    *) target="$url" target_pid="$server_pid" target_err="$server_err" force=() ;;
  esac
  rc=0
  bounded "$work" timeout -k 5 "$SCENARIO_TIMEOUT_S" "$node" "$suite" server \
    --url "$target" --scenario "$name" --spec-version "$rev" "${force[@]}" \
    --expected-failures "$conf/expected-failures.yaml" \
    --timeout 60000 -o "$out" </dev/null >"$out/runner.log" 2>&1 || rc=$?
  # The checks held against restmcp (failures and warnings outside the baseline, or
  # excused for another reason than the one they failed with), with the suite's messages.
  held="$(timeout 30 "$node" -e "$show_failures" "$out" "$name" "$conf/expected-failures.yaml" || true)"
  if (( rc == 0 )) && [[ -z "$held" ]]; then
    passed=$((passed + 1))
    echo "pass $name@$rev"
  else
    failed=$((failed + 1))
    why=""
    (( rc == 124 || rc == 137 )) && why=" (timed out after ${SCENARIO_TIMEOUT_S}s)"
    echo "FAIL $name@$rev$why"
    if [[ -n "$held" ]]; then
      echo "$held"
    else # no checks.json, or the runner failed for another reason (say, a stale baseline entry)
      sed 's/\x1b\[[0-9;]*m//g' "$out/runner.log" | tail -n 15 | sed 's/^/    /'
    fi
    if ! kill -0 "$target_pid" 2>/dev/null; then
      echo "    restmcp serve is no longer running; stderr: $(tail -c 1000 "$target_err")"
    fi
    if [[ "$name" == tasks-* ]] && ! kill -0 "$upstream_pid" 2>/dev/null; then
      echo "    the tasks upstream is no longer running; its log: $(tail -c 1000 "$upstream_log")"
    fi
  fi
done
elapsed=$((SECONDS - started))

stop_servers
[[ -n "${CONFORMANCE_RESULTS:-}" ]] && echo "results: $results (${elapsed}s of scenarios)" >&2
echo "conformance: $passed passed, $failed failed"
(( failed == 0 ))
