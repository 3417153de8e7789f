#!/usr/bin/env python3
"""stdio throughput: tools/call getItem pipelined over `restmcp stdio`, 32 in flight.

Usage: stdio.py RESTMCP_BIN CONFIG SECONDS
Prints one line: calls/s and how many calls, after checking every answer succeeded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

IN_FLIGHT = 32


def main() -> int:
    binary, config, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    proc = subprocess.Popen(
        [binary, "stdio", "--config", config],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=dict(os.environ, RUST_LOG="error"),
    )
    assert proc.stdin and proc.stdout
    write = proc.stdin
    write.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "restmcp-bench", "version": "1"}}}).encode() + b"\n")
    write.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    write.flush()
    json.loads(proc.stdout.readline())

    slots = threading.Semaphore(IN_FLIGHT)
    stop = threading.Event()
    sent = 0

    def writer() -> None:
        nonlocal sent
        while not stop.is_set():
            slots.acquire()
            sent += 1
            write.write(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"getItem","arguments":{"id":%d}}}\n'
                        % (sent, sent % 1000 + 1))
            write.flush()

    started = time.perf_counter()
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    done = failed = 0
    deadline = started + seconds
    while True:
        line = proc.stdout.readline()
        if not line:
            break
        # Cheap checks: a full json.loads per answer would make the client the bottleneck.
        if b'"isError":true' in line or b'"error"' in line or b'"structuredContent"' not in line:
            failed += 1
        done += 1
        slots.release()
        if time.perf_counter() >= deadline:
            break
    elapsed = time.perf_counter() - started
    stop.set()
    slots.release()
    proc.kill()
    proc.wait()
    print(f"stdio pipelined, {IN_FLIGHT} in flight: {done / elapsed:,.0f} calls/s ({done} calls, {failed} failed)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
