#!/usr/bin/env bash
# Runs restmcp's fuzz targets with libFuzzer, each for a fixed time, and fails if any
# crashes. A smoke run (the default, 60 s each) or a campaign:
#
#   bash fuzz/run.sh                          # every target, 60 s each, one after another
#   bash fuzz/run.sh 1800 spec_load           # one target for 30 minutes
#
# Needs only the Rust toolchain: cargo-fuzz is installed when missing, and the targets
# build on stable (RUSTC_BOOTSTRAP=1 unlocks the flags cargo-fuzz passes) without a
# sanitizer, since restmcp's own code is safe Rust; debug assertions are on, so integer
# overflow is a crash. The corpus starts from seeds/ and grows in corpus/ (not committed);
# a crash is saved in artifacts/TARGET/ and ends the run with a non-zero status.
set -euo pipefail
cd "$(dirname "$0")"
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(spec_load call_arguments response_mapping mcp_message)

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --version 0.13.2
export RUSTC_BOOTSTRAP=1
cargo fuzz build -s none -a
failed=()
for target in "${targets[@]}"; do
    case "$target" in
        mcp_message) dict=dict/jsonrpc.dict ;;
        *) dict=dict/openapi.dict ;;
    esac
    mkdir -p "corpus/$target" "artifacts/$target"
    cp -n seeds/"$target"/* "corpus/$target/"
    echo "== $target for ${seconds}s"
    if cargo fuzz run -s none -a "$target" -- \
        -max_total_time="$seconds" -dict="$dict" -max_len=65536 -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 >"artifacts/$target.log" 2>&1; then
        grep -E "^stat::number_of_executed_units|DONE" "artifacts/$target.log" | tail -n 2
    else
        failed+=("$target")
        grep -E "panicked|ERROR|SUMMARY|Test unit written" -A3 "artifacts/$target.log" | head -n 20
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "crashed: ${failed[*]} (inputs in fuzz/artifacts/, logs in fuzz/artifacts/TARGET.log)"
    exit 1
fi
echo "no crashes"
