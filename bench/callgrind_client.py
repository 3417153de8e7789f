#!/usr/bin/env python3
"""The client of bench/callgrind.sh: N sequential tools/call getItem, one at a time.

Usage:
  callgrind_client.py http URL N           # Streamable HTTP, one keep-alive connection,
                                           # a session (2025-11-25), then N calls
  callgrind_client.py stdio N -- CMD ...   # starts CMD (restmcp stdio under valgrind),
                                           # N calls over its stdin, then closes stdin and
                                           # waits for it to exit
  callgrind_client.py idle PID             # waits until PID has used no CPU for 2 s

Before the calls, restmcp is left to finish what follows its start-up (the validators of
small tools are compiled on a background thread), so the calls are not charged for it.

Every answer must carry structuredContent and no error, or it exits 1. Only the standard
library; nothing here is timed, so its own speed does not matter.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
import urllib.parse

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "restmcp-callgrind", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(i: int) -> bytes:
    return (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":'
            b'{"name":"getItem","arguments":{"id":%d}}}' % (i, i % 1000 + 1))


def check(i: int, answer: bytes) -> None:
    if b'"structuredContent"' not in answer or b'"isError":true' in answer or b'"error"' in answer:
        sys.exit(f"call {i} did not succeed: {answer[:500]!r}")


def over_http(url: str, n: int) -> int:
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(body: bytes, extra: dict | None = None) -> tuple[http.client.HTTPResponse, bytes]:
        conn.request("POST", parts.path, body, {**headers, **(extra or {})})
        response = conn.getresponse()
        return response, response.read()

    response, body = post(json.dumps(INITIALIZE).encode())
    session = response.getheader("mcp-session-id")
    if response.status != 200 or not session:
        sys.exit(f"initialize: {response.status}, no session id: {body[:500]!r}")
    extra = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    response, body = post(json.dumps(INITIALIZED).encode(), extra)
    if response.status >= 300:
        sys.exit(f"notifications/initialized: {response.status} {body[:500]!r}")
    for i in range(1, n + 1):
        response, body = post(call(i), extra)
        if response.status != 200:
            sys.exit(f"call {i}: HTTP {response.status} {body[:500]!r}")
        check(i, body)
    conn.close()
    print(f"http: {n} calls ok")
    return 0


def cpu_ticks(pid: int) -> int:
    """The CPU time `pid` has used (user and system), in clock ticks."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def wait_idle(pid: int, quiet: float = 2.0, limit: float = 1800.0) -> None:
    """Waits until `pid` has used no CPU for `quiet` seconds: restmcp compiles the
    validators of small tools on a background thread once it serves, which under valgrind
    can last minutes for a large API; calls counted while it runs would be charged for it."""
    deadline = time.monotonic() + limit
    last, still_since = cpu_ticks(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = cpu_ticks(pid)
        if now != last:
            last, still_since = now, time.monotonic()
        elif time.monotonic() - still_since >= quiet:
            return
    sys.exit(f"restmcp (pid {pid}) did not go idle within {limit:.0f} s")


def over_stdio(n: int, command: list[str]) -> int:
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout

    def send(line: bytes) -> None:
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()

    def answer(want: int) -> bytes:
        # Skips notifications and anything else that is not the answer to `want`.
        marker = b'"id":%d' % want
        while True:
            line = proc.stdout.readline()
            if not line:
                sys.exit(f"restmcp stdio closed its output before answering {want}")
            if marker + b"," in line or marker + b"}" in line:
                return line

    send(json.dumps(INITIALIZE).encode())
    answer(0)
    wait_idle(proc.pid)
    send(json.dumps(INITIALIZED).encode())
    for i in range(1, n + 1):
        send(call(i))
        check(i, answer(i))
    proc.stdin.close()
    proc.stdout.read()
    code = proc.wait(timeout=300)
    if code != 0:
        sys.exit(f"restmcp stdio exited with {code}")
    print(f"stdio: {n} calls ok")
    return 0


def main() -> int:
    mode = sys.argv[1]
    if mode == "idle":
        wait_idle(int(sys.argv[2]))
        return 0
    if mode == "http":
        return over_http(sys.argv[2], int(sys.argv[3]))
    if mode == "stdio" and sys.argv[3] == "--":
        return over_stdio(int(sys.argv[2]), sys.argv[4:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
