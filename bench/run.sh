#!/usr/bin/env bash
# Load benchmark (issue #8): restmcp's tools/call against the same upstream called directly.
#
#   bash bench/run.sh                 # 10 s per measurement
#   DURATION=30 bash bench/run.sh     # longer runs
#   RESTMCP_BIN=path/to/restmcp bash bench/run.sh   # skip the release build
#   CARGO_TARGET_DIR=DIR bash bench/run.sh          # build into DIR, and run that binary
#   ONLY=load bash bench/run.sh       # steps 1 and 2 only, one line per measurement
#   ROUNDS=3 bash bench/run.sh        # step 2 three times over, alternated: each round's
#                                     # figures, and the medians (the shares of proxy_pass
#                                     # vary less than its calls/s from run to run)
#   BESIDE=path/to/spec bash bench/run.sh           # a second API loaded beside items
#                                     # (discovery "all", never called): bench/growth.sh
#
# 1. Starts nginx on 127.0.0.1 answering GET /items/{id} with a fixed JSON body (the
#    upstream), and `restmcp serve` on 127.0.0.1 with bench/items.yaml pointed at it.
# 2. With wrk (bench/call.lua): the upstream directly, then tools/call getItem through
#    restmcp over Streamable HTTP with a session (2025-11-25) and stateless (2026-07-28),
#    each at 1 and 32 requests in flight. Prints calls/s, p50 and p99, and the ratios.
#    For scale it also measures nginx itself as a reverse proxy to the upstream, sent the
#    same tools/call requests: a proxy doing no MCP work at all, so the most any adapter
#    between the load tool and the upstream could reach on this machine.
#    restmcp's /metrics must count every call as ok, or the run fails. Each run also
#    reads the CPU time restmcp and the nginx worker used (/proc), printed per call.
# 3. stdio: a pipelined client (bench/stdio.py) keeps 32 calls in flight over stdin.
# 4. tools/list of the GitHub API over HTTP (bench/list_http.py), cold and warm.
# 5. Start-up (bench/startup.py): process start to the first complete tools/list, the warm
#    tools/list, and peak RSS, for Petstore and, when ../shared/specs is there, Stripe and
#    GitHub.
#
# nginx and wrk are installed from Debian's packages when missing (needs root and apt-get).
# Everything listens on and talks to 127.0.0.1 only, and all of it stops on exit.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
duration="${DURATION:-10}"
python="${PYTHON:-python3}"
only="${ONLY:-}"
rounds="${ROUNDS:-1}"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS=$rounds is not a positive number" >&2; exit 1; }
beside="${BESIDE:-}"
[[ -z $beside || -f $beside ]] || { echo "BESIDE=$beside is not a file" >&2; exit 1; }
[[ -z $beside || $beside == /* ]] || beside="$PWD/$beside"

say() { echo "bench: $*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }

# --- tools ---------------------------------------------------------------------------------

# apt_install, need_nginx, free_port, start_upstream
source "$root/bench/lib.sh"

need_nginx
command -v wrk >/dev/null || apt_install wrk

if [[ -n ${RESTMCP_BIN:-} ]]; then
    bin="$RESTMCP_BIN"; [[ "$bin" == /* ]] || bin="$root/$bin"
else
    # The binary built is the binary run: into CARGO_TARGET_DIR when it is set.
    target="${CARGO_TARGET_DIR:-}"
    [[ -n $target ]] || target="$root/target"
    say "building restmcp (release, CARGO_TARGET_DIR=$target)"
    CARGO_TARGET_DIR="$target" cargo build --release --locked --quiet
    bin="$target/release/restmcp"
fi
[[ -x $bin ]] || die "no binary at $bin"

# --- processes -----------------------------------------------------------------------------

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

upstream_port="$(free_port)"
proxy_port="$(free_port)"
# nginx as the upstream, and nginx as a reverse proxy to it: for scale, a proxy that does no
# MCP work at all.
start_upstream "$work" "$upstream_port" "    upstream items {
        server 127.0.0.1:$upstream_port;
        keepalive 64;
    }
    server {
        listen 127.0.0.1:$proxy_port;
        location / {
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
            proxy_pass http://items/items/42;
        }
    }"
# The one nginx worker (worker_processes 1) serves the upstream and the proxy alike.
for _ in $(seq 100); do
    nginx_worker="$(pgrep -P "$(cat "$work/nginx.pid" 2>/dev/null || echo 0)" | head -1 || true)"
    [[ -n $nginx_worker ]] && break
    sleep 0.05
done
[[ -n $nginx_worker ]] || die "nginx started no worker"

# beside_api: the [apis] table of BESIDE, when set: loaded and listed, never called.
beside_api() {
    [[ -n $beside ]] || return 0
    printf '\n[apis.beside]\nspec = "%s"\nbase_url = "http://127.0.0.1:9"\ndiscovery = "all"\n' "$beside"
}

# start_restmcp NAME SPEC: serves SPEC as API NAME, calling the upstream, on a free port;
# sets `port` and `pid` once it is ready.
start_restmcp() {
    local name="$1" spec="$2"
    port="$(free_port)"
    cat >"$work/$name.toml" <<TOML
[server]
listen = "127.0.0.1:$port"
max_in_flight_per_client = 0

[apis.$name]
spec = "$spec"
base_url = "http://127.0.0.1:$upstream_port"
discovery = "all"
$(beside_api)
TOML
    "$bin" serve --config "$work/$name.toml" >"$work/$name.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 300); do
        curl -fs -o /dev/null "http://127.0.0.1:$port/readyz" && return 0
        sleep 0.05
    done
    cat "$work/$name.log" >&2
    die "restmcp ($name) did not become ready"
}

start_restmcp items "$root/bench/items.yaml"
mcp_port="$port"
restmcp_pid="$pid"
mcp="http://127.0.0.1:$mcp_port/mcp"

# --- load ----------------------------------------------------------------------------------

# cpu_ticks PID: the user and system time PID has used, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# wrk LABEL CONNECTIONS URL [env...]: prints "label rps p50_ms p99_ms requests restmcp_us
# nginx_us" and checks errors. The last two are the CPU time (user and system) restmcp and
# the nginx worker used during the run, in µs per request: a share of proxy_pass depends on
# the machine (how its CPU runs user code against the kernel's), CPU per call travels better.
run_wrk() {
    local label="$1" connections="$2" url="$3" threads=1 out r0 n0 r1 n1
    shift 3
    (( connections > 1 )) && threads=2
    r0="$(cpu_ticks "$restmcp_pid")"; n0="$(cpu_ticks "$nginx_worker")"
    out="$(env "$@" wrk -t"$threads" -c"$connections" -d"${duration}s" --latency -s "$work/script.lua" "$url")"
    r1="$(cpu_ticks "$restmcp_pid")"; n1="$(cpu_ticks "$nginx_worker")"
    echo "$out" >"$work/wrk-$label.txt"
    if grep -q "Non-2xx\|Socket errors" <<<"$out"; then
        echo "$out" >&2; die "$label: wrk saw errors"
    fi
    awk -v label="$label" -v restmcp="$((r1 - r0))" -v nginx="$((n1 - n0))" -v hz="$(getconf CLK_TCK)" '
        function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
        function us(ticks) { return requests > 0 ? ticks * 1e6 / hz / requests : 0 }
        $1 == "50%" { p50 = ms($2) } $1 == "99%" { p99 = ms($2) }
        $1 == "Requests/sec:" { rps = $2 }
        / requests in / { requests = $1 }
        END { printf "%s %.0f %.3f %.3f %d %.2f %.2f\n", label, rps, p50, p99, requests, us(restmcp), us(nginx) }' <<<"$out"
}

ok_calls() {
    curl -fsS "http://127.0.0.1:$mcp_port/metrics" |
        awk '/^restmcp_tool_calls_total\{/ && /outcome="ok"/ { n += $NF } END { print n + 0 }'
}
# Calls that neither succeeded nor were cancelled (wrk drops its connections at the end of
# a run, which cancels the calls then in flight).
failed_calls() {
    curl -fsS "http://127.0.0.1:$mcp_port/metrics" |
        awk '/^restmcp_tool_calls_total\{/ && !/outcome="(ok|cancelled)"/ { n += $NF } END { print n + 0 }'
}

# A GET for the upstream; call.lua for restmcp.
printf 'wrk.method = "GET"\n' >"$work/direct.lua"
cp bench/call.lua "$work/call.lua"

# The session for the 2025-11-25 runs.
session="$(curl -fsS -D - -o /dev/null "$mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"4"}}}' |
    tr -d '\r' | awk -F': ' 'tolower($1) == "mcp-session-id" { print $2 }')"
[[ -n $session ]] || die "initialize returned no session id"
curl -fsS -o /dev/null "$mcp" -H 'Content-Type: application/json' -H "Mcp-Session-Id: $session" \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-11-25' \
    -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'

# One call first, to see it works end to end.
answer="$(curl -fsS "$mcp" -H 'Content-Type: application/json' -H "Mcp-Session-Id: $session" \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-11-25' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getItem","arguments":{"id":42}}}')"
grep -q '"structuredContent"' <<<"$answer" && ! grep -q '"isError":true' <<<"$answer" ||
    die "a test call did not succeed: $answer"

say "measuring ${duration}s each: upstream direct, nginx as a proxy, restmcp session (2025-11-25), restmcp stateless (2026-07-28)"
results=()
for round in $(seq "$rounds"); do
    for connections in 1 32; do
        (( rounds == 1 )) || say "round $round of $rounds, $connections in flight"
        cp "$work/direct.lua" "$work/script.lua"
        results+=("$(run_wrk "direct-c$connections" "$connections" "http://127.0.0.1:$upstream_port/items/42")")
        cp "$work/call.lua" "$work/script.lua"
        results+=("$(run_wrk "proxy-c$connections" "$connections" "http://127.0.0.1:$proxy_port/mcp" MCP_SESSION=)")
        for mode in session stateless; do
            before_ok="$(ok_calls)"; before_failed="$(failed_calls)"
            if [[ $mode == session ]]; then
                line="$(run_wrk "$mode-c$connections" "$connections" "$mcp" MCP_SESSION="$session")"
            else
                line="$(run_wrk "$mode-c$connections" "$connections" "$mcp" MCP_SESSION=)"
            fi
            results+=("$line")
            ok=$(( $(ok_calls) - before_ok )); failed=$(( $(failed_calls) - before_failed ))
            requests="$(awk '{ print $5 }' <<<"$line")"
            (( failed == 0 )) || die "$mode-c$connections: $failed calls did not succeed (see /metrics)"
            (( ok >= requests )) || die "$mode-c$connections: wrk counted $requests answers, restmcp $ok ok calls"
        done
    done
done
rss_serve="$(awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$restmcp_pid/status")"

if [[ $only == load ]]; then
    "$python" - "$rss_serve" "${results[@]}" <<'PY'
import statistics, sys
rss, *lines = sys.argv[1:]
rounds, cpu = {}, {}
for line in lines:
    label, rps, p50, p99, requests, restmcp_us, nginx_us = line.split()
    print(f"load {label} {rps} {p50} {p99}")
    rounds.setdefault(label, []).append((float(rps), float(p50), float(p99)))
    cpu.setdefault(label, []).append((float(restmcp_us), float(nginx_us)))
if len(rounds["proxy-c32"]) > 1:
    # Each round's share of proxy_pass at 32 in flight, then the medians.
    for mode in ("session", "stateless"):
        shares = [100 * r[0] / p[0] for r, p in zip(rounds[f"{mode}-c32"], rounds["proxy-c32"])]
        print(f"load share-{mode}-c32 " + " ".join(f"{s:.1f}" for s in shares)
              + f" median {statistics.median(shares):.1f}")
# CPU per call at 1 and 32 in flight, µs (user and system): the proxy's own is its worker's during
# the proxy run less the same worker's per request answered directly (the upstream's part).
for c in (1, 32):
    proxy = [p[1] - d[1] for p, d in zip(cpu[f"proxy-c{c}"], cpu[f"direct-c{c}"])]
    figures = {"proxy": proxy, "upstream": [d[1] for d in cpu[f"direct-c{c}"]]}
    for mode in ("session", "stateless"):
        figures[mode] = [r[0] for r in cpu[f"{mode}-c{c}"]]
    print(f"cpu-c{c} " + " ".join(f"{name} {statistics.median(v):.2f}" for name, v in figures.items())
          + " " + " ".join(f"{mode}/proxy {statistics.median(a / b for a, b in zip(figures[mode], proxy) if b > 0):.2f}"
                           for mode in ("session", "stateless") if any(b > 0 for b in proxy)))
print(f"load rss {rss}")
PY
    exit 0
fi

# --- stdio ---------------------------------------------------------------------------------

cat >"$work/stdio.toml" <<TOML
[apis.items]
spec = "$root/bench/items.yaml"
base_url = "http://127.0.0.1:$upstream_port"
TOML
stdio_line="$("$python" bench/stdio.py "$bin" "$work/stdio.toml" "$duration")"

# --- tools/list of a large API over HTTP -----------------------------------------------------

list_line="tools/list over HTTP: skipped (../shared/specs/real/github.json not found)"
github="$root/../shared/specs/real/github.json"
if [[ -f $github ]]; then
    start_restmcp github "$github"
    list_port="$port"
    github_pid="$pid"
    list_line="$("$python" bench/list_http.py "http://127.0.0.1:$list_port/mcp") (GitHub)"
    kill "$github_pid" 2>/dev/null || true
fi

# --- report --------------------------------------------------------------------------------

specs=("petstore=$root/specs/petstore.yaml")
for name in stripe github; do
    [[ -f $root/../shared/specs/real/$name.json ]] && specs+=("$name=$root/../shared/specs/real/$name.json")
done
"$python" bench/startup.py "$bin" "${specs[@]}" --runs 5 >"$work/startup.txt"

"$python" - "$rss_serve" "$stdio_line" "$list_line" "$work/startup.txt" "${results[@]}" <<'PY'
import json, statistics, sys
rss, stdio, list_line, startup_file, *lines = sys.argv[1:]
rounds = {}
cpu = {}
for line in lines:
    label, rps, p50, p99, requests, restmcp_us, nginx_us = line.split()
    rounds.setdefault(label, []).append((float(rps), float(p50), float(p99)))
    cpu.setdefault(label, []).append((float(restmcp_us), float(nginx_us)))
# With ROUNDS, each figure is the median of its rounds.
rows = {label: tuple(statistics.median(r[i] for r in runs) for i in range(3))
        for label, runs in rounds.items()}
if len(rounds["proxy-c32"]) > 1:
    print(f"medians of {len(rounds['proxy-c32'])} rounds; share of nginx proxy_pass at 32 in flight per round:")
    for mode in ("session", "stateless"):
        shares = [100 * r[0] / p[0] for r, p in zip(rounds[f"{mode}-c32"], rounds["proxy-c32"])]
        print(f"  restmcp {mode}: " + ", ".join(f"{s:.0f} %" for s in shares)
              + f" (median {statistics.median(shares):.0f} %)")
print(f"{'':<22}{'calls/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'vs direct':>12}")
for c in (1, 32):
    direct = rows[f"direct-c{c}"]
    print(f"{'upstream direct':<16} c{c:<4}{direct[0]:>10.0f}{direct[1]:>10.3f}{direct[2]:>10.3f}")
    for mode in ("proxy", "session", "stateless"):
        r = rows[f"{mode}-c{c}"]
        ratio = f"{100 * r[0] / direct[0]:.0f}% rps" if c > 1 else f"+{r[1] - direct[1]:.3f} ms"
        name = "nginx proxy_pass" if mode == "proxy" else "restmcp " + mode
        print(f"{name:<16} c{c:<4}{r[0]:>10.0f}{r[1]:>10.3f}{r[2]:>10.3f}{ratio:>12}")
proxy = [p[1] - d[1] for p, d in zip(cpu["proxy-c32"], cpu["direct-c32"])]
session = [r[0] for r in cpu["session-c32"]]
stateless = [r[0] for r in cpu["stateless-c32"]]
print(f"CPU per call at 32 in flight (user and system): nginx proxy_pass {statistics.median(proxy):.1f} µs "
      f"(its worker less the upstream's part), restmcp session {statistics.median(session):.1f} µs, "
      f"stateless {statistics.median(stateless):.1f} µs")
print(f"restmcp serve peak RSS: {rss} MB")
print(stdio)
print(list_line)
lines = open(startup_file).read().splitlines()
for line in lines[:-1]:
    print(line)
PY
