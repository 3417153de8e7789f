#!/usr/bin/env python3
"""The largest API descriptions (issue #22): Microsoft Graph v1.0 and beta.

For each description given:
  * `restmcp check --spec SPEC`: wall time, peak RSS (the child's ru_maxrss) and the size
    of `tools/list` that `check` reports: the listing a client gets with the default
    `discovery = "auto"`, which for an API this large is the search tools, about 1 KB (the
    whole listing, in `all` mode, was 56 and 106 MB when `check` still reported that);
  * start → first complete `tools/list` over stdio with the API in `search` discovery mode
    (a config naming the spec, `discovery = "search"`): wall time from the fork, and peak
    RSS (VmHWM) once the list is read.

Usage: graph.py RESTMCP_BIN NAME=SPEC [NAME=SPEC ...] [--runs N]
Prints one line per spec, and the figures as JSON on the last line. Nothing is downloaded
here (bench/graph.sh fetches the descriptions from the npm registry).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from startup import VERSION, answer, peak_rss_mb, send


def check(binary: str, spec: str) -> dict:
    started = time.perf_counter()
    proc = subprocess.Popen([binary, "check", "--spec", spec], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=dict(os.environ, RUST_LOG="error"))
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    text = out.decode("utf-8", "replace")
    found = re.search(r"tools/list is (\d+) bytes", text)
    relaxed = re.search(r"(\d+) inputSchema\(s\) relaxed", text)
    return {"check_s": elapsed, "check_peak_rss_mb": usage.ru_maxrss / 1024,
            "list_bytes": int(found.group(1)) if found else None,
            "relaxed_inputs": int(relaxed.group(1)) if relaxed else 0,
            "exit": os.waitstatus_to_exitcode(status)}


def search_mode(binary: str, spec: str) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as config:
        config.write(f'[apis.graph]\nspec = "{os.path.abspath(spec)}"\n'
                     'base_url = "http://127.0.0.1:9"\ndiscovery = "search"\n')
    started = time.perf_counter()
    proc = subprocess.Popen([binary, "stdio", "--config", config.name], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, RUST_LOG="error"), cwd="/")
    try:
        send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "restmcp-bench", "version": "1"}}})
        answer(proc, 1)
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        tools = len(answer(proc, 2)["tools"])
        elapsed = time.perf_counter() - started
        rss = peak_rss_mb(proc.pid)
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=60)
        os.unlink(config.name)
    return {"search_start_to_list_s": elapsed, "search_peak_rss_mb": rss, "search_tools": tools}


def main() -> int:
    args = sys.argv[1:]
    runs = 3
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i:i + 2]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary, specs = os.path.abspath(args[0]), args[1:]
    figures = {}
    for item in specs:
        name, _, spec = item.partition("=")
        checks = [check(binary, spec) for _ in range(runs)]
        searches = [search_mode(binary, spec) for _ in range(runs)]
        figure = {
            "check_s": statistics.median(c["check_s"] for c in checks),
            "check_peak_rss_mb": max(c["check_peak_rss_mb"] for c in checks),
            "list_bytes": checks[0]["list_bytes"],
            "relaxed_inputs": checks[0]["relaxed_inputs"],
            "search_start_to_list_s": statistics.median(s["search_start_to_list_s"] for s in searches),
            "search_peak_rss_mb": max(s["search_peak_rss_mb"] for s in searches),
        }
        figures[name] = figure
        print(f"graph {name:<8} check {figure['check_s']:6.2f} s, peak RSS "
              f"{figure['check_peak_rss_mb']:6.0f} MB, tools/list as listed "
              f"{(figure['list_bytes'] or 0) / 1e3:6.1f} KB, {figure['relaxed_inputs']} inputSchemas relaxed "
              f"| search mode: start→tools/list {figure['search_start_to_list_s']:6.2f} s, "
              f"peak RSS {figure['search_peak_rss_mb']:6.0f} MB", flush=True)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
