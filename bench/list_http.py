#!/usr/bin/env python3
"""tools/list over Streamable HTTP: the time to fetch every page, cold and warm.

Usage: list_http.py URL
Opens a session (2025-11-25) on URL (…/mcp), then asks for the whole tool list 11 times on
one keep-alive connection. The first is cold (the pages are serialized then); the figure
for the rest is their median. Prints one line.
"""

from __future__ import annotations

import http.client
import json
import statistics
import sys
import time
import urllib.parse


def main() -> int:
    url = urllib.parse.urlsplit(sys.argv[1])
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(body: dict, extra: dict | None = None) -> tuple[http.client.HTTPResponse, bytes]:
        conn.request("POST", url.path, json.dumps(body), {**headers, **(extra or {})})
        response = conn.getresponse()
        return response, response.read()

    response, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "restmcp-bench", "version": "1"}}})
    session = response.getheader("mcp-session-id")
    if not session:
        print("no session id", file=sys.stderr)
        return 1
    extra = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, extra)

    def whole_list() -> tuple[float, int, int]:
        started = time.perf_counter()
        cursor, pages, size = None, 0, 0
        while True:
            params = {"cursor": cursor} if cursor else {}
            _, body = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}, extra)
            pages += 1
            size += len(body)
            # The cursor is at the start or the end of the result; parsing megabytes in Python
            # would dwarf the server's time.
            ends = (body[:300] + body[-300:]).decode("utf-8", "replace")
            marker = '"nextCursor":"'
            cursor = ends[ends.index(marker) + len(marker):].split('"')[0] if marker in ends else None
            if not cursor:
                return time.perf_counter() - started, pages, size

    cold, pages, size = whole_list()
    warm = statistics.median(whole_list()[0] for _ in range(10))
    print(f"tools/list over HTTP: {size / 1e6:.1f} MB in {pages} pages, cold {cold * 1e3:.1f} ms, "
          f"warm {warm * 1e3:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
