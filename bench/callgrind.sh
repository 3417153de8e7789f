#!/usr/bin/env bash
# Instructions per tools/call (issue #40), counted with callgrind, so deterministic enough to
# compare two commits on a shared machine where timings are not.
#
#   bash bench/callgrind.sh                              # builds --profile profiling
#   RESTMCP_BIN=path/to/restmcp bash bench/callgrind.sh  # skips the build
#   N1=300 N2=1200 REPEAT=2 bash bench/callgrind.sh      # the defaults are 300, 1200, 1
#   TRANSPORTS="http" bash bench/callgrind.sh            # "http stdio" by default
#   KEEP=dir bash bench/callgrind.sh                     # keeps callgrind's outputs in dir
#   BESIDE=path/to/spec bash bench/callgrind.sh          # a second API loaded beside items
#                                                        # (never called): bench/growth.sh
#
# Per transport, restmcp runs under `valgrind --tool=callgrind` twice: once for N1 and once
# for N2 sequential `tools/call getItem` of one client (bench/callgrind_client.py) against
# nginx on 127.0.0.1 answering a fixed 200-byte JSON body (the upstream of bench/run.sh,
# described by bench/items.yaml). Ir per call = (Ir(N2) - Ir(N1)) / (N2 - N1): start-up,
# the session's opening and shutdown are in both runs and cancel out.
#
# - http:  `restmcp serve` (the shipped defaults, so the console is on: loopback listener),
#          one keep-alive connection, a session (2025-11-25): initialize,
#          notifications/initialized, then the calls; restmcp stops on SIGTERM.
# - stdio: `restmcp stdio`, the same messages over stdin; restmcp stops when stdin closes.
#
# Before the calls, restmcp is left to go idle (no CPU used for 2 s): the validators of small
# tools compile on a background thread once it serves, for minutes under valgrind with a large
# API beside (BESIDE), and would otherwise be charged to whichever run lasted longer.
#
# Both configs set `[reload] enabled = false`: the reloader polls the files every 500 ms,
# which counts wall time (long under valgrind, and dependent on the machine's load), not
# calls. Logging is the default (`info`, one line per call, to a file); RUST_LOG is unset.
#
# valgrind and nginx are installed from Debian's packages when missing (needs root and
# apt-get). The build uses CARGO_TARGET_DIR (default the repository's target/) and `nice`;
# the runs are one process at a time.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
n1="${N1:-300}"
n2="${N2:-1200}"
repeat="${REPEAT:-1}"
transports="${TRANSPORTS:-http stdio}"
beside="${BESIDE:-}"
[[ -z $beside || -f $beside ]] || { echo "BESIDE=$beside is not a file" >&2; exit 1; }
[[ -z $beside || $beside == /* ]] || beside="$PWD/$beside"
(( n2 > n1 )) || { echo "callgrind: N2 must be larger than N1" >&2; exit 1; }
unset RUST_LOG

say() { echo "callgrind: $*" >&2; }
die() { echo "callgrind: $*" >&2; exit 1; }

# --- tools ---------------------------------------------------------------------------------

# apt_install, need_nginx, free_port, start_upstream
source "$root/bench/lib.sh"

need_nginx
command -v valgrind >/dev/null || apt_install valgrind

if [[ -n ${RESTMCP_BIN:-} ]]; then
    bin="$RESTMCP_BIN"; [[ "$bin" == /* ]] || bin="$root/$bin"
else
    target="${CARGO_TARGET_DIR:-}"
    [[ -n $target ]] || target="$root/target"
    say "building restmcp (--profile profiling, CARGO_TARGET_DIR=$target)"
    CARGO_TARGET_DIR="$target" nice -n 10 cargo build --profile profiling --locked --quiet
    bin="$target/profiling/restmcp"
fi
[[ -x $bin ]] || die "no binary at $bin"

# --- the upstream --------------------------------------------------------------------------

work="$(mktemp -d)"
server_pid=""
cleanup() {
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null || true
    [[ -f $work/nginx.pid ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

upstream_port="$(free_port)"
# The upstream of bench/run.sh.
start_upstream "$work" "$upstream_port"

# beside_api: the [apis] table of BESIDE, when set: loaded and listed, never called.
beside_api() {
    [[ -n $beside ]] || return 0
    printf '\n[apis.beside]\nspec = "%s"\nbase_url = "http://127.0.0.1:9"\ndiscovery = "all"\n' "$beside"
}

cat >"$work/http.toml" <<TOML
[server]
listen = "127.0.0.1:0"
max_in_flight_per_client = 0

[reload]
enabled = false

[apis.items]
spec = "$root/bench/items.yaml"
base_url = "http://127.0.0.1:$upstream_port"
discovery = "all"
$(beside_api)
TOML
cat >"$work/stdio.toml" <<TOML
[reload]
enabled = false

[apis.items]
spec = "$root/bench/items.yaml"
base_url = "http://127.0.0.1:$upstream_port"
discovery = "all"
$(beside_api)
TOML

# --- counting ------------------------------------------------------------------------------

valgrind_args=(--tool=callgrind --trace-children=no)

# ir OUT: the instructions of a callgrind run, summed over its output files (one per dump).
ir() {
    local files=("$1"*)
    awk '$1 == "totals:" { t[FILENAME] = $2 } $1 == "summary:" { s[FILENAME] = $2 }
         END { for (f in s) n += (f in t) ? t[f] : s[f]; for (f in t) if (!(f in s)) n += t[f]; printf "%.0f\n", n }' \
        "${files[@]}"
}

# run_http N OUT: restmcp serve under callgrind, N calls, SIGTERM, waits for it to exit.
run_http() {
    local n="$1" out="$2" log="$work/serve.log" url="" code=0
    : >"$log"
    valgrind "${valgrind_args[@]}" --callgrind-out-file="$out" \
        "$bin" serve --config "$work/http.toml" >"$log" 2>&1 &
    server_pid=$!
    # Ready once the banner is out (it follows the tool set's loading): no HTTP request
    # other than the client's reaches restmcp, so each run gets exactly the same ones.
    for _ in $(seq 9000); do
        url="$(sed -n 's/.*MCP over Streamable HTTP at \(http:[^ ,]*\/mcp\).*/\1/p' "$log" | head -1)"
        [[ -n $url ]] && break
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    [[ -n $url ]] || { cat "$log" >&2; die "restmcp serve did not start"; }
    # Background work that follows start-up (the validators of small tools) done first.
    "$python" bench/callgrind_client.py idle "$server_pid"
    "$python" bench/callgrind_client.py http "$url" "$n" >/dev/null ||
        { kill "$server_pid" 2>/dev/null; die "the HTTP client failed (log: $log)"; }
    kill -TERM "$server_pid"
    wait "$server_pid" || code=$?
    server_pid=""
    (( code == 0 )) || { cat "$log" >&2; die "restmcp serve exited with $code"; }
    grep -q "restmcp: stopped" "$log" || { cat "$log" >&2; die "restmcp serve did not stop cleanly"; }
}

# run_stdio N OUT: restmcp stdio under callgrind, N calls, closes stdin, waits for it to exit.
run_stdio() {
    local n="$1" out="$2"
    "$python" bench/callgrind_client.py stdio "$n" -- \
        valgrind "${valgrind_args[@]}" --callgrind-out-file="$out" --log-file="$work/valgrind-stdio.log" \
        "$bin" stdio --config "$work/stdio.toml" >/dev/null 2>"$work/stdio.log" ||
        { cat "$work/stdio.log" "$work/valgrind-stdio.log" >&2 2>/dev/null; die "the stdio run failed"; }
}

say "binary $bin"
say "N1=$n1 N2=$n2, transports: $transports, $repeat time(s) each"
rows=()
for round in $(seq "$repeat"); do
    for transport in $transports; do
        declare -A count=()
        for n in "$n1" "$n2"; do
            out="$work/cg.$transport.$round.$n.out"
            say "$transport, $n calls (round $round)"
            "run_$transport" "$n" "$out"
            count[$n]="$(ir "$out")"
            if [[ -n ${KEEP:-} ]]; then mkdir -p "$KEEP" && cp "$out"* "$KEEP"/; fi
            rm -f "$out"*
        done
        rows+=("$transport $round ${count[$n1]} ${count[$n2]}")
        unset count
    done
done

"$python" - "$n1" "$n2" "${rows[@]}" <<'PY'
import sys
n1, n2, *rows = sys.argv[1:]
n1, n2 = int(n1), int(n2)
print(f"{'transport':<10}{'round':>6}{'Ir(' + str(n1) + ')':>16}{'Ir(' + str(n2) + ')':>16}{'Ir per call':>14}")
for row in rows:
    transport, round_, a, b = row.split()
    a, b = int(a), int(b)
    print(f"{transport:<10}{round_:>6}{a:>16,}{b:>16,}{(b - a) / (n2 - n1):>14,.0f}")
PY
