#!/usr/bin/env python3
"""Large APIs with no `discovery` key, through the official MCP Python SDK (mcp 2.3.0).

One configuration serves Microsoft Graph v1.0 (11,422 operations, a tools/list of about 14
million estimated tokens if listed whole) and Petstore (19 tools), neither with a
`discovery` key, so `discovery = "auto"` decides. Over stdio, at 2025-11-25 (initialize)
and 2026-07-28 (the SDK's default), the SDK's client must see:

  tools/list     search_tools, call_tool and Petstore's 19 tools, nothing of Graph's, and
                 the whole listing under the default budget (25,000 tokens of 4 bytes);
  search_tools   finds Graph's `GET /users/{user-id}` tool (users_user_GetUser) for
                 "get a user", with its definition;
  call_tool      calls that tool with the arguments its definition requires, through
                 restmcp, and the loopback upstream sees `GET /users/u1`;

and `restmcp check` says `"auto" chose "search"` for Graph and `"auto" chose "all"` for
Petstore.

Usage: python_large.py --bin PATH/TO/restmcp --graph PATH/TO/graph.json --petstore PATH
Prints one line per check; exit 0 only when none failed.
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import json
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

BUDGET_TOKENS = 25_000
failed = 0


def record(name: str, ok: bool, detail: str) -> None:
    global failed
    failed += 0 if ok else 1
    print(f"{'ok' if ok else 'not ok'} - {name}: {detail}", flush=True)


class Upstream(http.server.BaseHTTPRequestHandler):
    """Answers every request with a small JSON object naming it."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = json.dumps({"value": [], "path": self.path}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


async def session(label: str, client: Client) -> None:
    async with client:
        names: list[str] = []
        listed: list[dict] = []
        cursor = None
        for _ in range(50):
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            listed += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                break
        tokens = len(json.dumps({"tools": listed}, separators=(",", ":"))) // 4
        record(f"{label} tools/list", names[:2] == ["search_tools", "call_tool"] and len(names) == 21
               and "getPetById" in names, f"{len(names)} tools: {names[:4]}…")
        record(f"{label} tools/list size", tokens < BUDGET_TOKENS, f"≈ {tokens} tokens")
        found = await client.call_tool("search_tools", {"query": "get a user", "limit": 10})
        results = (found.structured_content or {}).get("tools", [])
        names = [t["name"] for t in results]
        record(f"{label} search_tools", not found.is_error and "users_user_GetUser" in names, json.dumps(names))
        # The arguments the definition search_tools returned asks for, each a string.
        schema = next((t["inputSchema"] for t in results if t["name"] == "users_user_GetUser"), {})
        arguments = {name: "u1" for name in schema.get("required", [])}
        called = await client.call_tool("call_tool", {"name": "users_user_GetUser", "arguments": arguments})
        # call_tool has no outputSchema of its own: the answer may come wrapped in
        # {"result": ...}.
        answer = called.structured_content or {}
        answer = answer.get("result", answer)
        record(f"{label} call_tool", called.is_error is False and answer.get("path") == "/users/u1",
               json.dumps(called.structured_content)[:160])


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--graph", required=True)
    parser.add_argument("--petstore", required=True)
    args = parser.parse_args()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    upstream = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory() as work:
        config = Path(work) / "config.toml"
        config.write_text(
            "[reload]\nenabled = false\n"
            f"[apis.graph]\nspec = \"{Path(args.graph).resolve()}\"\nbase_url = \"{upstream}\"\n"
            f"[apis.petstore]\nspec = \"{Path(args.petstore).resolve()}\"\nbase_url = \"{upstream}\"\n"
        )
        check = subprocess.run([args.bin, "check", "--config", str(config)], capture_output=True, text=True)
        lines = [line.strip() for line in check.stdout.splitlines() if "tools/list ≈" in line]
        record("check graph", any('"auto" chose "search"' in line and "over tools.auto_budget_tokens" in line
                                  for line in lines), " | ".join(lines))
        record("check petstore", any('"auto" chose "all"' in line for line in lines), " | ".join(lines))
        params = StdioServerParameters(command=args.bin, args=["stdio", "--config", str(config)],
                                       env={"RUST_LOG": "warn"})
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog:
            for label, mode in (("stdio 2025-11-25", "legacy"), ("stdio 2026-07-28", "auto")):
                try:
                    await session(label, Client(stdio_client(params, errlog=errlog), mode=mode,
                                                read_timeout_seconds=300))
                except Exception as error:  # noqa: BLE001 - any failure is a failed check
                    record(label, False, f"{type(error).__name__}: {error}")
            if failed:
                errlog.seek(0)
                print(f"--- restmcp stderr ---\n{errlog.read()[-4000:]}\n---", flush=True)
    server.shutdown()
    print(f"large: {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
