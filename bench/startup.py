#!/usr/bin/env python3
"""Start-up figures: process start to the first complete `tools/list`, and peak RSS.

For each spec, over stdio: starts `restmcp stdio --spec SPEC` (its upstream is a closed
port on 127.0.0.1; nothing is called), writes `initialize`, `notifications/initialized` and
`tools/list` at once, and times from the fork to the moment the whole `tools/list` answer
(every page) has been read. Peak RSS is the process's VmHWM, read before stdin is closed.
Then the same `tools/list` is asked again on the warm process, to time serving it alone.

Over Streamable HTTP: starts `restmcp serve` for the spec on a free loopback port and
sends 2026-07-28 `tools/list` requests (every page) until one succeeds, timing from the
fork; peak RSS as above.

Every tool is listed (`discovery = "all"`, or `tools.auto_budget_tokens = 0` with `--spec`):
the figures are of the whole listing, as before `discovery = "auto"` became the default.

Usage: startup.py RESTMCP_BIN NAME=SPEC [NAME=SPEC ...] [--runs N]
Prints one line per spec, and the figures as JSON on the last line.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import statistics
import tempfile
import subprocess
import sys
import time

VERSION = "2025-11-25"


def send(proc: subprocess.Popen, message: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def answer(proc: subprocess.Popen, want_id: int) -> dict:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"restmcp exited before answering request {want_id}")
        message = json.loads(line)
        if message.get("id") == want_id:
            if "error" in message:
                raise RuntimeError(f"request {want_id} failed: {message['error']}")
            return message["result"]


def list_all(proc: subprocess.Popen, first_id: int) -> tuple[int, int]:
    """Every page of tools/list; returns (tools, next free id)."""
    tools, cursor, request_id = 0, None, first_id
    while True:
        params = {"cursor": cursor} if cursor else {}
        send(proc, {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params})
        result = answer(proc, request_id)
        request_id += 1
        tools += len(result["tools"])
        cursor = result.get("nextCursor")
        if not cursor:
            return tools, request_id


def peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def once(binary: str, spec: str) -> dict:
    env = dict(os.environ, RUST_LOG="error", RESTMCP_TOOLS__AUTO_BUDGET_TOKENS="0")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [binary, "stdio", "--spec", spec, "--base-url", "http://127.0.0.1:9"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd="/",
    )
    try:
        send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "restmcp-bench", "version": "1"}}})
        answer(proc, 1)
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools, next_id = list_all(proc, 2)
        first_list = time.perf_counter() - started
        warm = []
        for _ in range(5):
            t0 = time.perf_counter()
            _, next_id = list_all(proc, next_id)
            warm.append(time.perf_counter() - t0)
        rss = peak_rss_mb(proc.pid)
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=30)
    return {"tools": tools, "start_to_list_ms": first_list * 1000,
            "list_ms": statistics.median(warm) * 1000, "peak_rss_mb": rss}


META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "restmcp-bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def list_over_http(port: int) -> bool:
    """Every page of tools/list as 2026-07-28 requests; False until the server answers."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        cursor = None
        while True:
            params = {"_meta": META, **({"cursor": cursor} if cursor else {})}
            conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}),
                         {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                          "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
            response = conn.getresponse()
            body = response.read()
            if response.status != 200:
                return False
            # The cursor is at the start or the end; parsing megabytes would dwarf the server.
            ends = (body[:300] + body[-300:]).decode("utf-8", "replace")
            marker = '"nextCursor":"'
            cursor = ends[ends.index(marker) + len(marker):].split('"')[0] if marker in ends else None
            if not cursor:
                return True
    except OSError:
        return False


def once_http(binary: str, spec: str) -> dict:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as config:
        config.write(f'[server]\nlisten = "127.0.0.1:{port}"\n[apis.api]\nspec = "{spec}"\n'
                     f'base_url = "http://127.0.0.1:9"\ndiscovery = "all"\n')
    started = time.perf_counter()
    proc = subprocess.Popen([binary, "serve", "--config", config.name], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=dict(os.environ, RUST_LOG="error"), cwd="/")
    try:
        deadline = started + 60
        while not list_over_http(port):
            if proc.poll() is not None or time.perf_counter() > deadline:
                raise RuntimeError("restmcp serve never answered tools/list")
            time.sleep(0.002)
        elapsed = time.perf_counter() - started
        rss = peak_rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        os.unlink(config.name)
    return {"start_to_list_ms": elapsed * 1000, "peak_rss_mb": rss}


def main() -> int:
    args = sys.argv[1:]
    runs = 5
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
        # restmcp runs in `/` (so that nothing of this checkout is found by accident): a
        # relative spec path is taken from where this script was started.
        spec = os.path.abspath(spec)
        results = [once(binary, spec) for _ in range(runs)]
        figure = {
            "tools": results[0]["tools"],
            "start_to_list_ms": statistics.median(r["start_to_list_ms"] for r in results),
            "list_ms": statistics.median(r["list_ms"] for r in results),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in results),
        }
        over_http = [once_http(binary, spec) for _ in range(runs)]
        figure["http_start_to_list_ms"] = statistics.median(r["start_to_list_ms"] for r in over_http)
        figure["http_peak_rss_mb"] = max(r["peak_rss_mb"] for r in over_http)
        figures[name] = figure
        print(f"startup {name:<10} {figure['tools']:>5} tools  stdio: start→tools/list "
              f"{figure['start_to_list_ms']:6.1f} ms, warm tools/list {figure['list_ms']:6.2f} ms, "
              f"peak RSS {figure['peak_rss_mb']:5.1f} MB  |  HTTP: start→tools/list "
              f"{figure['http_start_to_list_ms']:6.1f} ms, peak RSS {figure['http_peak_rss_mb']:5.1f} MB",
              flush=True)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
