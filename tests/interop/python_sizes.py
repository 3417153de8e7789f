#!/usr/bin/env python3
"""Interoperability test: message sizes the official MCP Python SDK (mcp 2.x) accepts.

The SDK refuses an SSE event over 1 MiB (httpx2's EventSource, max_event_size): on the legacy
HTTP+SSE transport that ends the whole session, on Streamable HTTP that request. restmcp pages
`tools/list` by bytes (every page under 512 KiB) and cuts a result too large for one event to fit
(server.max_message_bytes). With the SDK's own client, over `restmcp serve`:

  1. GitHub's whole tools/list (../shared/specs/real/github.json, 1,223 operations) over legacy
     SSE: every page read, every tool received once, then a call still works.
  2. A tool whose result is several MiB over legacy SSE: it comes back cut with the marker (a
     tool with an outputSchema as isError saying why, one without as a success), and the
     session goes on.
  3. The same over Streamable HTTP when the answer is an SSE stream (a session's call with a
     progress callback); answered as plain JSON (no such limit) the result comes whole.

One line per check, then `interop-python-sizes: N passed, M failed`; exit 0 only when nothing
failed. Without the GitHub spec the first check is skipped, unless CI is set (then it fails).

Usage: python_sizes.py --bin PATH/TO/restmcp --spec PATH/TO/echo-api.yaml --github PATH/TO/github.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Awaitable, Callable

import anyio
from mcp import Client
from mcp.client.sse import sse_client

# python_client puts tests/lib on sys.path and sets harness.R's style to PASS_FAIL.
from python_client import HttpServer, describe, short, texts
from harness import R, child_env, install_signals, kill_all, summary  # noqa: I001 - tests/lib/harness.py, after python_client

TIMEOUT = 60.0  # seconds, for every single request (a GitHub page is 0.5 MB through a debug build)
HARD_LIMIT = 600  # seconds: the process kills itself (and its children) past this
SSE_EVENT_LIMIT = 1024 * 1024  # the SDK's max_event_size
BIG_JSON_BYTES = 3 * 1024 * 1024  # under max_response_bytes (4 MiB): only the transport cuts it
BIG_TEXT_BYTES = 6 * 1024 * 1024  # over max_response_bytes: cut by the upstream cap, then again

# --------------------------------------------------------------------------------------
# The upstream: loopback only. Large bodies under /echo/items/big and /echo/files/big (the
# echo spec's getItem, which has an outputSchema, and getFile, which has none); a small JSON
# object everywhere else.


def big_json() -> bytes:
    item = {"name": 'say "hi"', "path": "C:\\dir\\file", "note": "tab\there \u2713"}
    one = json.dumps(item, ensure_ascii=False)
    count = BIG_JSON_BYTES // len(one.encode())
    return ('{"items":[' + ",".join([one] * count) + "]}").encode()


BIG_JSON = big_json()
BIG_TEXT = ('line of text with "quotes" and \u00fcn\u00efc\u00f6d\u00e9\n' * (BIG_TEXT_BYTES // 43)).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        path = self.path.partition("?")[0]
        if path == "/echo/items/big":
            body, kind = BIG_JSON, "application/json"
        elif path == "/echo/files/big":
            body, kind = BIG_TEXT, "text/plain; charset=utf-8"
        else:
            body, kind = json.dumps({"ok": True, "path": path}).encode(), "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


def start_upstream() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="upstream", daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}"


# --------------------------------------------------------------------------------------


async def check(name: str, body: Callable[[], Awaitable[tuple[bool, str]]]) -> bool:
    """Runs one check; the SDK raising is a failed check, not a crash."""
    try:
        with anyio.fail_after(TIMEOUT * 4):
            ok, detail = await body()
    except TimeoutError:
        ok, detail = False, f"no answer within {TIMEOUT * 4:.0f} s"
    except Exception as exc:
        ok, detail = False, describe(exc)
    R.check(name, ok, detail)
    return ok


async def with_server(binary: str, spec: str, upstream: str, label: str, body: Callable[[str], Awaitable[None]]) -> None:
    server = HttpServer(binary, spec, upstream)
    try:
        try:
            await server.wait_ready()
        except Exception as exc:
            R.check(f"[{label}] start", False, f"restmcp serve not ready: {describe(exc)}")
            return
        failed_before = R.failed
        try:
            await body(server.base)
        except Exception as exc:  # connecting or closing failed: the checks not run fail
            R.check(f"[{label}] session", False, describe(exc))
        if R.failed > failed_before:
            print(f"--- restmcp serve log ({label}) ---\n{server.log_text()}\n---", flush=True)
    finally:
        server.stop()


def sse(base: str) -> Client:
    return Client(sse_client(f"{base}/sse", timeout=TIMEOUT, sse_read_timeout=TIMEOUT), mode="legacy", read_timeout_seconds=TIMEOUT)


def github_tool_names(binary: str, github: str) -> list[str]:
    """The names of `restmcp tools --json`: the whole tools/list a client gets, in order
    (restmcp's own status tool included: GitHub documents 202 answers)."""
    # None of the runner's RESTMCP_* variables; every tool listed, as HttpServer lists them
    # (discovery = "auto" would serve GitHub in search mode).
    env = child_env({"RESTMCP_TOOLS__AUTO_BUDGET_TOKENS": "0"})
    out = subprocess.run(
        [binary, "tools", "--json", "--spec", github],
        capture_output=True,
        check=True,
        env=env,
        timeout=TIMEOUT * 2,
    ).stdout
    return [t["name"] for t in json.loads(out)["tools"]]


async def github_over_legacy_sse(binary: str, github: str, upstream: str) -> None:
    """GitHub's whole tools/list through the SDK over legacy SSE, then a call."""
    label = "github over legacy SSE"
    expected = github_tool_names(binary, github)

    async def body(base: str) -> None:
        async with sse(base) as client:
            tools: list[Any] = []
            pages = 0

            async def list_all() -> tuple[bool, str]:
                nonlocal pages
                cursor = None
                while True:
                    page = await client.list_tools(cursor=cursor)
                    pages += 1
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
                # restmcp's own status tool of long-running operations is listed beside
                # the API's tools (GitHub documents 202 answers); `restmcp tools --json`
                # prints the same listing, so the names must be the same, in order.
                own = [t.name for t in tools if t.title == "Status of a long-running operation"]
                names = [t.name for t in tools]
                ok = (names == expected and len(set(names)) == len(expected) and len(own) == 1
                      and len(names) > 1000)
                return ok, (
                    f"{len(names)} tools ({len(set(names))} distinct, {len(expected)} expected "
                    f"as `restmcp tools --json` prints them), {len(own)} of restmcp's own, "
                    f"in {pages} pages"
                )

            listed = await check(f"[{label}] tools/list, every page", list_all)

            async def call_after() -> tuple[bool, str]:
                # A tool with no required argument; its result, error or not, proves the session.
                tool = next(t for t in tools if not t.input_schema.get("required"))
                r = await client.call_tool(tool.name, {})
                return bool(r.content), f"{tool.name}: isError={r.is_error} {short(texts(r), 120)}"

            if listed:
                await check(f"[{label}] a call after listing", call_after)
            else:
                R.check(f"[{label}] a call after listing", False, "not run (listing failed)")

    await with_server(binary, github, upstream, label, body)


def cut_with_note(r: Any) -> tuple[bool, str]:
    """getItem's cut result: isError, a first text saying why, the data, the marker."""
    blocks = [getattr(b, "text", "") for b in r.content]
    ok = (
        r.is_error is True
        and r.structured_content is None
        and len(blocks) == 3
        and "too large for this transport" in blocks[0]
        and blocks[1].startswith('{"items":[{')
        and blocks[2].startswith("[result truncated: ")
    )
    size = sum(len(b.encode()) for b in blocks)
    return ok, f"isError={r.is_error} {len(blocks)} texts, {size} bytes; first: {short(blocks[0], 160)} last: {short(blocks[-1], 200)}"


def cut_text(r: Any) -> tuple[bool, str]:
    """getFile's cut result: a success, a prefix of the body, the upstream size cap's marker
    (the body is over max_response_bytes), then the transport's."""
    blocks = [getattr(b, "text", "") for b in r.content]
    ok = (
        r.is_error is False
        and len(blocks) == 3
        and BIG_TEXT.decode().startswith(blocks[0])
        and len(blocks[0].encode()) > SSE_EVENT_LIMIT // 2
        and blocks[1].startswith("[response truncated: ")
        and blocks[2].startswith("[result truncated: ")
    )
    return ok, f"isError={r.is_error} {len(blocks)} texts, {len(blocks[0].encode())} bytes shown; last: {short(blocks[-1], 200)}"


async def still_alive(client: Any, progress: Any = None) -> tuple[bool, str]:
    r = await client.call_tool("getItem", {"id": "7"}, progress_callback=progress)
    ok = r.is_error is False and isinstance(r.structured_content, dict) and r.structured_content.get("ok") is True
    return ok, f"isError={r.is_error} structuredContent={short(r.structured_content)}"


async def large_results(binary: str, spec: str, upstream: str) -> None:
    async def over_legacy_sse(base: str) -> None:
        label = "large result over legacy SSE"
        async with sse(base) as client:
            await check(f"[{label}] getItem (outputSchema)", lambda: _call(client, "getItem", {"id": "big"}, cut_with_note))
            await check(f"[{label}] getFile (no outputSchema)", lambda: _call(client, "getFile", {"path": "big"}, cut_text))
            await check(f"[{label}] session alive", lambda: still_alive(client))

    async def over_streamable_http(base: str) -> None:
        label = "large result over Streamable HTTP"
        # A session (the initialize handshake) answers a call that asks for progress with an
        # SSE stream: the result is cut to fit one event.
        async with Client(f"{base}/mcp", mode="legacy", read_timeout_seconds=TIMEOUT) as client:

            async def progress(done: float, total: float | None, message: str | None) -> None:
                pass

            await check(
                f"[{label}] getItem, SSE answer",
                lambda: _call(client, "getItem", {"id": "big"}, cut_with_note, progress),
            )
            await check(
                f"[{label}] getFile, SSE answer",
                lambda: _call(client, "getFile", {"path": "big"}, cut_text, progress),
            )
            await check(f"[{label}] session alive", lambda: still_alive(client, progress))

        # 2026-07-28, no progress: plain JSON, which the SDK reads whatever its size.
        async with Client(f"{base}/mcp", read_timeout_seconds=TIMEOUT) as client:

            async def whole() -> tuple[bool, str]:
                # Plain JSON has no size limit in the SDK: the result comes whole, structured.
                r = await client.call_tool("getItem", {"id": "big"})
                items = (r.structured_content or {}).get("items")
                expected = json.loads(BIG_JSON)["items"]
                ok = r.is_error is False and items == expected
                return ok, f"isError={r.is_error} {len(items or [])} items of {len(expected)}"

            await check(f"[{label}] getItem, plain JSON answer, whole", whole)

    await with_server(binary, spec, upstream, "large result over legacy SSE", over_legacy_sse)
    await with_server(binary, spec, upstream, "large result over Streamable HTTP", over_streamable_http)


async def _call(client: Any, name: str, arguments: dict[str, Any], judge: Callable[[Any], tuple[bool, str]], progress: Any = None) -> tuple[bool, str]:
    r = await client.call_tool(name, arguments, progress_callback=progress)
    return judge(r)


async def main_async(binary: str, spec: str, github: str | None) -> None:
    upstream, upstream_url = start_upstream()
    print(f"upstream at {upstream_url}; restmcp {binary}", flush=True)
    try:
        if github is not None:
            await github_over_legacy_sse(binary, github, upstream_url)
        await large_results(binary, spec, upstream_url)
    finally:
        upstream.shutdown()
        upstream.server_close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="path to the restmcp binary")
    parser.add_argument("--spec", required=True, help="path to tests/fixtures/echo-api.yaml")
    parser.add_argument("--github", required=True, help="path to ../shared/specs/real/github.json")
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    spec = os.path.abspath(args.spec)
    github: str | None = os.path.abspath(args.github)
    if not os.path.exists(github):
        if os.environ.get("CI"):
            R.check("github spec", False, f"{github} is missing; CI must have ../shared beside the repo")
        else:
            print(f"skipped: {github} not present", flush=True)
        github = None

    install_signals("interop-python-sizes", HARD_LIMIT)
    started = time.monotonic()
    try:
        asyncio.run(main_async(binary, spec, github))
    except BaseException as exc:  # noqa: BLE001 - report, never hang or lose the summary
        traceback.print_exc()
        R.check("run", False, describe(exc))
    finally:
        kill_all()
        signal.alarm(0)
    print(f"(took {time.monotonic() - started:.1f} s)", flush=True)
    return summary("interop-python-sizes")


if __name__ == "__main__":
    sys.exit(main())
