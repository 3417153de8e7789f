#!/usr/bin/env python3
"""Start-up figures: process start to the first complete `tools/list`, and peak RSS.

For each spec, starts `restmcp stdio --spec SPEC --mock` (mock mode, so no upstream is
needed and nothing leaves the machine), writes `initialize`, `notifications/initialized` and
`tools/list` at once, and times from the fork to the moment the whole `tools/list` answer
(every page) has been read. Peak RSS is the process's VmHWM, read before stdin is closed.
Then the same `tools/list` is asked again on the warm process, to time serving it alone.

Usage: startup.py RESTMCP_BIN NAME=SPEC [NAME=SPEC ...] [--runs N]
Prints one line per spec, and the figures as JSON on the last line.
"""

from __future__ import annotations

import json
import os
import statistics
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
    env = dict(os.environ, RUST_LOG="error")
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
        results = [once(binary, spec) for _ in range(runs)]
        figure = {
            "tools": results[0]["tools"],
            "start_to_list_ms": statistics.median(r["start_to_list_ms"] for r in results),
            "list_ms": statistics.median(r["list_ms"] for r in results),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in results),
        }
        figures[name] = figure
        print(f"startup {name:<12} {figure['tools']:>5} tools  start→tools/list "
              f"{figure['start_to_list_ms']:7.1f} ms  tools/list (warm, stdio) "
              f"{figure['list_ms']:6.2f} ms  peak RSS {figure['peak_rss_mb']:6.1f} MB", flush=True)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
