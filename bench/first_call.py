#!/usr/bin/env python3
"""The first calls after start: how long each of the first stateless (2026-07-28)
`tools/call` requests takes once `restmcp serve` is ready, with no `tools/list` before them.

Starts `restmcp serve` for SPEC on a free loopback port (every tool listed,
`discovery = "all"`; the upstream is a closed port on 127.0.0.1, so each call answers at
once with an error result, after restmcp has resolved and dispatched it), waits for
`/readyz`, lets the server settle for 3 s, then times CALLS sequential calls of TOOL, each
on a new connection. The first call is where a cost made once per snapshot shows (it is paid
again after every hot reload).

Usage: first_call.py RESTMCP_BIN SPEC TOOL [--calls N]
Prints one line per call, and the figures as JSON on the last line.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

VERSION = "2026-07-28"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port: int, body: dict) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": body["method"],
        "Mcp-Name": body["params"]["name"],
    }
    conn.request("POST", "/mcp", json.dumps(body), headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def ready(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/readyz")
        response = conn.getresponse()
        response.read()
        return response.status == 200
    except OSError:
        return False


def main() -> None:
    args = sys.argv[1:]
    calls = 5
    if "--calls" in args:
        at = args.index("--calls")
        calls = int(args[at + 1])
        del args[at : at + 2]
    if len(args) != 3:
        sys.exit(__doc__)
    binary, spec, tool = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2]
    port = free_port()
    with tempfile.TemporaryDirectory() as dir:
        config = os.path.join(dir, "config.toml")
        with open(config, "w") as f:
            f.write(
                f'[server]\nlisten = "127.0.0.1:{port}"\n[reload]\nenabled = false\n'
                f'[apis.api]\nspec = "{spec}"\nbase_url = "http://127.0.0.1:9"\n'
                'max_retries = 0\ndiscovery = "all"\n'
            )
        server = subprocess.Popen(
            [binary, "--config", config, "serve"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 300
            while not ready(port):
                if server.poll() is not None or time.monotonic() > deadline:
                    sys.exit("restmcp did not become ready")
                time.sleep(0.1)
            time.sleep(3)
            times = []
            for i in range(1, calls + 1):
                body = {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "tools/call",
                    "params": {
                        "name": tool,
                        "arguments": {},
                        "_meta": {
                            "io.modelcontextprotocol/protocolVersion": VERSION,
                            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                            "io.modelcontextprotocol/clientCapabilities": {},
                        },
                    },
                }
                started = time.perf_counter()
                status, data = post(port, body)
                elapsed = (time.perf_counter() - started) * 1000
                answer = json.loads(data)
                if status != 200 or "result" not in answer:
                    sys.exit(f"call {i} was not answered with a result: {status} {data[:200]!r}")
                times.append(elapsed)
                print(f"call {i}: {elapsed:8.1f} ms")
        finally:
            server.terminate()
            server.wait()
    print(json.dumps({"tool": tool, "calls_ms": times}))


if __name__ == "__main__":
    main()
