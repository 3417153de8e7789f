#!/usr/bin/env python3
"""Interoperability test: restmcp against the official MCP Python SDK (mcp 2.x).

Starts a loopback upstream (the API of tests/fixtures/interop-api.yaml), then drives restmcp
over four transports with the SDK's own client:

  1. stdio                       (Client(stdio_client(params)), default mode "auto": discover first)
  2. Streamable HTTP, default    (Client(url), mode "auto": server/discover, 2026-07-28)
  3. Streamable HTTP, handshake  (Client(url, mode="legacy"): initialize lifecycle)
  4. legacy HTTP+SSE at /sse     (Client(sse_client(url), mode="legacy"))

The SDK's handshake offers 2025-11-25, also over the 2024-11-05 SSE transport, and
restmcp accepts it, so structuredContent exists there too; on SSE the text content is checked
as well (and alone, should a server ever negotiate 2024-11-05 or 2025-03-26).

Each transport: connect, tools/list, getItem, list (the SDK validates the outputSchema
itself), status 404, and a call with bad arguments.

Then the results matrix: every revision restmcp serves (2025-06-18, 2025-11-25, 2026-07-28)
over each transport (stdio, Streamable HTTP, legacy SSE), nine clients in all, each calling
the /results tools of tests/fixtures/interop-api.yaml and checking what the SDK hands its
caller (Client.call_tool validates structuredContent against the outputSchema; an SDK that
rejects a result is restmcp's bug):

  array, string, number, boolean  structuredContent is {"result": value} up to 2025-11-25 and
                                  the bare value on 2026-07-28, and the one text content is
                                  that same structured value serialized
  xml-or-json                     getPet's upstream answers XML unless Accept prefers JSON
                                  (Petstore's behaviour); the result must be the JSON object
  1.3 MiB body                    a 1.3 MiB JSON array, under the 4 MiB response cap: whole
                                  (as array above) where answers are plain JSON; where they are
                                  SSE events (legacy SSE), which the SDK refuses over 1 MiB,
                                  cut down like the large body
  large body                      a 6.3 MiB JSON array, over the cap: isError, no
                                  structuredContent, a prefix of the data and a truncation
                                  marker; then a call still works
  ..., progress                   both again over Streamable HTTP with a progress callback, so
                                  restmcp may answer with an SSE stream (initialize sessions do;
                                  2026-07-28 answers plain JSON unless a notification had to go
                                  first): the 1.3 MiB body must then be whole or cut as above

How the SDK is made to speak each revision: 2026-07-28 is its default mode ("auto":
server/discover first), 2025-11-25 is mode="legacy" (its initialize offers
LATEST_HANDSHAKE_VERSION), and 2025-06-18 is mode="legacy" with that constant swapped for the
connect (see OfferingHandshake; mcp 2.3.0 has no option for it). Every pair can be driven.

One line per check, then `interop-python: N passed, M failed`; exit 0 only when nothing
failed.

Usage: python_client.py --bin PATH/TO/restmcp --spec PATH/TO/interop-api.yaml
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request
from contextlib import AsyncExitStack
from pathlib import Path
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import anyio
from mcp import Client
from mcp.client import session as mcp_client_session
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
import harness  # noqa: E402 - tests/lib/harness.py: results and processes
from harness import CHILDREN, PASS_FAIL, Child, R, child_env, free_port, install_signals, kill_all, summary  # noqa: E402

TIMEOUT = 20.0  # seconds, for every single request
CONNECT_TIMEOUT = 2 * TIMEOUT  # discover may time out and fall back to initialize
TRANSPORT_TIMEOUT = 120.0  # seconds, for the checks and the close after connecting
HARD_LIMIT = 600  # seconds: the process kills itself (and its children) past this

# --------------------------------------------------------------------------------------
# Results: tests/lib/harness.py's, as PASS/FAIL lines

R.style = PASS_FAIL

# --------------------------------------------------------------------------------------
# The upstream API: loopback only.


class EchoHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle's algorithm the second waits for the
    # peer's delayed ACK (40 ms a call).
    disable_nagle_algorithm = True

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        path, sep, query = self.path.partition("?")
        status = 200
        if path.startswith("/_/status/"):
            try:
                status = int(path.rsplit("/", 1)[1])
            except ValueError:
                status = 400
            body: Any = {"error": "requested status"}
        elif path == "/_/list":
            body = [1, 2, 3]
        elif path.startswith("/results/"):
            self._results(path, query)
            return
        else:
            body = {"method": self.command, "path": path, "query": query if sep else None}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _results(self, path: str, query: str) -> None:
        """The /results operations of tests/fixtures/interop-api.yaml (see results_body)."""
        accept = self.headers.get("Accept")
        status, content_type, data = results_body(path, query, accept)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


# What the /results operations return (tests/interop/ts/client.mjs returns the same).
PET = {"id": 7, "name": "Rex", "status": "available", "tags": ["dog", "good"]}
PET_XML = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    "<Pet><id>7</id><name>Rex</name><status>available</status>"
    "<tags><tag>dog</tag><tag>good</tag></tags></Pet>"
)
PETS = [PET, {"id": 8, "name": "Tom", "status": "sold", "tags": []}]
GREETING = 'Hello, "world" \u2014 gr\u00fc\u00dfe \u2603'
TEMPERATURE = -12.5
FLAG = False
RECORD_COUNT = 60_000  # listRecords' default, 6.3 MiB: over restmcp's default 4 MiB max_response_bytes
MEDIUM_COUNT = 12_000  # 1.3 MiB: under that cap, over the 1 MiB the SDK takes in one SSE event
_RECORDS_TEXT: dict[int, str] = {}


def records(count: int) -> list[dict[str, Any]]:
    return [{"id": i, "name": f"record-{i:06d}", "note": "n" * 64} for i in range(count)]


def records_text(count: int = RECORD_COUNT) -> str:
    """The listRecords body for `count`, built once: a compact JSON array."""
    if count not in _RECORDS_TEXT:
        _RECORDS_TEXT[count] = json.dumps(records(count), separators=(",", ":"))
    return _RECORDS_TEXT[count]


def accept_prefers_json(accept: str | None) -> bool:
    """Petstore's choice between its two media types: JSON only when Accept gives
    application/json a higher q than application/xml (most specific range wins, RFC 9110
    12.5.1); XML when Accept is missing, `*/*`, or a tie."""
    if not accept:
        return False
    ranges: list[tuple[str, float]] = []
    for part in accept.split(","):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0].lower()
        if not media:
            continue
        q = 1.0
        for param in fields[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value.strip())
                except ValueError:
                    q = 0.0
        ranges.append((media, q))

    def quality(media: str) -> float:
        kind = media.split("/")[0] + "/*"
        for candidate in (media, kind, "*/*"):
            matches = [q for m, q in ranges if m == candidate]
            if matches:
                return max(matches)
        return 0.0

    return quality("application/json") > quality("application/xml")


# (path, Accept as received, media type answered) of every /results/pets/{id} request.
PET_REQUESTS: list[tuple[str, str | None, str]] = []


def results_body(path: str, query: str, accept: str | None) -> tuple[int, str, bytes]:
    """Status, Content-Type and body of a /results request."""
    json_type = "application/json"
    if path == "/results/pets":
        return 200, json_type, json.dumps(PETS).encode()
    if path == "/results/greeting":
        return 200, json_type, json.dumps(GREETING).encode()
    if path == "/results/temperature":
        return 200, json_type, json.dumps(TEMPERATURE).encode()
    if path == "/results/flag":
        return 200, json_type, json.dumps(FLAG).encode()
    if path == "/results/records":
        counts = [v for k, v in (p.partition("=")[::2] for p in query.split("&")) if k == "count"]
        count = int(counts[0]) if counts and counts[0].isdigit() else RECORD_COUNT
        return 200, json_type, records_text(min(max(count, 1), RECORD_COUNT)).encode()
    if path.startswith("/results/pets/"):
        if accept_prefers_json(accept):
            PET_REQUESTS.append((path, accept, json_type))
            return 200, json_type, json.dumps(PET).encode()
        PET_REQUESTS.append((path, accept, "application/xml"))
        return 200, "application/xml", PET_XML.encode()
    return 404, json_type, json.dumps({"error": "no such results path"}).encode()


def start_upstream() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="upstream", daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host}:{port}"


# --------------------------------------------------------------------------------------
# Child processes (tests/lib/harness.py: Child, CHILDREN, kill_all)


class HttpServer:
    """`restmcp serve` on a free loopback port; its output kept for diagnostics."""

    def __init__(self, binary: str, spec: str, base_url: str) -> None:
        self.port = free_port()
        # restmcp reads every RESTMCP_* variable as configuration and refuses unknown keys,
        # so the runner's own RESTMCP_BIN must not reach it (child_env).
        # Every tool listed, however large the spec (discovery = "auto" would serve GitHub's in
        # search mode): the transports' limits are under test.
        env = child_env({"RESTMCP_SERVER__LISTEN": f"127.0.0.1:{self.port}",
                         "RESTMCP_TOOLS__AUTO_BUDGET_TOKENS": "0"})
        self.child = Child(
            "restmcp serve",
            # The transports' own limits are under test here, not the result budget
            # (tests/results covers that one).
            [binary, "serve", "--spec", spec, "--base-url", base_url, "--max-result-tokens", "0"],
            env,
            Path.cwd(),
        )
        CHILDREN.append(self.child)
        self.proc = self.child.proc

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def wait_ready(self) -> None:
        """Until the port accepts connections (restmcp binds before printing its banner), then
        until /readyz says the tools are loaded: MCP requests get 503 before that, which a
        slow (loaded) machine shows."""
        await self.wait_listening()
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(f"{self.base}/readyz", timeout=5) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.base}/readyz not 200 after {TIMEOUT:.0f} s: {self.log_text()}")
            await anyio.sleep(0.1)

    async def wait_listening(self) -> None:
        """Until the port accepts connections."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"restmcp serve exited with {self.proc.returncode}: {self.log_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"nothing listening on 127.0.0.1:{self.port} after {TIMEOUT:.0f} s: {self.log_text()}"
                    ) from None
                await anyio.sleep(0.05)

    def log_text(self) -> str:
        return self.child.text()[-4000:]

    def stop(self) -> None:
        self.child.stop()


# --------------------------------------------------------------------------------------
# Helpers


def texts(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content if getattr(block, "type", "") == "text")


def parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def short(value: Any, limit: int = 300) -> str:
    s = value if isinstance(value, str) else json.dumps(value, default=str)
    return s if len(s) <= limit else s[:limit] + "..."


def describe(exc: BaseException) -> str:
    """harness.describe, an MCPError's data included."""
    return harness.describe(exc, data=True)


CHECK_NAMES = ["connect", "tools/list", "getItem", "list (outputSchema)", "status 404", "bad arguments"]


async def exercise(label: str, make_client: Callable[[], Any], text_too: bool, expect_version: str | None) -> None:
    """Connect with the SDK and run every check; each check is recorded exactly once."""
    done: set[str] = set()

    def record(check: str, ok: bool, detail: str = "") -> None:
        done.add(check)
        R.check(f"[{label}] {check}", ok, detail)

    async def step(check: str, body: Callable[[], Any]) -> None:
        try:
            with anyio.fail_after(TIMEOUT):
                ok, detail = await body()
        except TimeoutError:
            ok, detail = False, f"no answer within {TIMEOUT:.0f} s"
        except Exception as exc:  # the SDK raising is a failed check, not a crash
            ok, detail = False, describe(exc)
        record(check, ok, detail)

    async def run_checks(client: Any) -> None:
        version = client.protocol_version
        # structuredContent exists from 2025-06-18 on; before it, only the text says it.
        structured = version not in ("2024-11-05", "2025-03-26")
        check_text = text_too or not structured
        ok = expect_version is None or version == expect_version
        info = client.server_info
        record(
            "connect",
            ok,
            f"protocol {version}, server {info.name if info else None} {info.version if info else ''}".rstrip()
            + ("" if ok else f" (expected {expect_version})"),
        )

        async def tools_list() -> tuple[bool, str]:
            names: list[str] = []
            cursor = None
            for _ in range(50):
                page = await client.list_tools(cursor=cursor)
                names += [t.name for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
            missing = [n for n in ("getItem", "status", "list") if n not in names]
            return not missing, f"{len(names)} tools" + (f", missing {missing}" if missing else "")

        await step("tools/list", tools_list)

        async def get_item() -> tuple[bool, str]:
            r = await client.call_tool("getItem", {"id": "7", "limit": 2})
            ok, detail = r.is_error is False, [f"isError={r.is_error}"]
            echoes = []
            if structured:
                echoes.append(("structuredContent", r.structured_content))
            if check_text:
                echoes.append(("text", parse_json(texts(r))))
            for where, echo in echoes:
                ok = ok and isinstance(echo, dict)
                ok = ok and echo.get("path") == "/echo/items/7" and echo.get("query") == "limit=2"
                detail.append(f"{where}={short(echo)}")
            return ok, " ".join(detail)

        await step("getItem", get_item)

        async def list_call() -> tuple[bool, str]:
            # Client.call_tool runs the SDK's outputSchema validation (not disabled here).
            r = await client.call_tool("list", {})
            ok, detail = r.is_error is False, [f"isError={r.is_error}"]
            if structured:
                # 2026-07-28 allows any JSON value, so restmcp sends the array unwrapped there.
                expected = [1, 2, 3] if version == "2026-07-28" else {"result": [1, 2, 3]}
                ok = ok and r.structured_content == expected
                detail.append(f"structuredContent={short(r.structured_content)}")
            if check_text:
                # restmcp's text is the structured value, serialized (the array wrapped).
                ok = ok and parse_json(texts(r)) == {"result": [1, 2, 3]}
                detail.append(f"text={short(texts(r))}")
            return ok, " ".join(detail)

        await step("list (outputSchema)", list_call)

        async def status_404() -> tuple[bool, str]:
            r = await client.call_tool("status", {"code": 404})
            text = texts(r)
            return r.is_error is True and "404" in text, f"isError={r.is_error} text={short(text, 200)}"

        await step("status 404", status_404)

        async def bad_arguments() -> tuple[bool, str]:
            # Two violations: `id` is required and missing; `limit` is not an integer.
            r = await client.call_tool("getItem", {"limit": "x"})
            text = texts(r)
            ok = r.is_error is True and "id" in text and "limit" in text
            return ok, f"isError={r.is_error} text={short(text, 300)}"

        await step("bad arguments", bad_arguments)

    phase = f"connect timed out after {CONNECT_TIMEOUT:.0f} s"
    try:
        # One scope for the whole transport (a scope cannot end while the client's task groups
        # live): the connect gets CONNECT_TIMEOUT, then the deadline moves for the checks.
        with anyio.fail_after(CONNECT_TIMEOUT) as scope:
            async with AsyncExitStack() as stack:
                try:
                    client = await stack.enter_async_context(make_client())
                except Exception as exc:
                    record("connect", False, describe(exc))
                    client = None
                scope.deadline = anyio.current_time() + TRANSPORT_TIMEOUT
                phase = f"transport timed out after {TRANSPORT_TIMEOUT:.0f} s more"
                if client is not None:
                    await run_checks(client)
    except TimeoutError:
        for check in CHECK_NAMES:
            if check not in done:
                record(check, False, phase)
        return
    except Exception as exc:  # e.g. an error while closing the connection
        R.check(f"[{label}] close", False, describe(exc))
    for check in CHECK_NAMES:
        if check not in done:
            record(check, False, "not run (connect failed)")


# --------------------------------------------------------------------------------------
# Results that are not objects, on every revision restmcp serves and every transport


RESULT_REVISIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
RESULT_CHECK_NAMES = [
    "connect",
    "tools/list",
    "array",
    "string",
    "number",
    "boolean",
    "xml-or-json",
    "1.3 MiB body",
    "large body",
    "after large body",
]
# Streamable HTTP answers a call that asked for progress with an SSE stream, whose events
# the SDK caps at 1 MiB like the legacy SSE transport's.
PROGRESS_CHECK_NAMES = ["1.3 MiB body, progress", "large body, progress", "after large body, progress"]


class OfferingHandshake:
    """`Client(..., mode="legacy")` whose `initialize` offers `version` rather than the SDK's
    LATEST_HANDSHAKE_VERSION (2025-11-25). mcp 2.3.0 has no option for the offered version:
    ClientSession.initialize reads that module constant, so it is swapped for the connect
    only. The SDK then speaks whichever of its HANDSHAKE_PROTOCOL_VERSIONS the server answers
    (protocol headers and result parsing follow the negotiated version)."""

    def __init__(self, version: str, client: Any) -> None:
        self.version = version
        self.client = client

    async def __aenter__(self) -> Any:
        saved = mcp_client_session.LATEST_HANDSHAKE_VERSION
        mcp_client_session.LATEST_HANDSHAKE_VERSION = self.version  # type: ignore[misc]
        try:
            return await self.client.__aenter__()
        finally:
            mcp_client_session.LATEST_HANDSHAKE_VERSION = saved  # type: ignore[misc]

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.client.__aexit__(*exc)


def client_for(revision: str, target: Callable[[], Any]) -> Any:
    """The SDK client that speaks `revision`: the default mode (server/discover) for
    2026-07-28, the initialize handshake for the others. `target` makes the transport (a
    URL for Streamable HTTP, a transport context for stdio and SSE)."""
    if revision == "2026-07-28":
        return Client(target(), read_timeout_seconds=TIMEOUT)
    client = Client(target(), mode="legacy", read_timeout_seconds=TIMEOUT)
    return client if revision == "2025-11-25" else OfferingHandshake(revision, client)


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON (Python's `False == 0` and `1 == 1.0` would hide a wrong type)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def shaped(value: Any, revision: str) -> Any:
    """The structuredContent a JSON body must arrive as: objects as they are; anything else
    wrapped as {"result": ...} up to 2025-11-25, bare on 2026-07-28 (which allows any value)."""
    return value if isinstance(value, dict) or revision == "2026-07-28" else {"result": value}


def text_blocks(result: Any) -> list[str]:
    return [block.text for block in result.content if getattr(block, "type", "") == "text"]


def judge_value(r: Any, value: Any, revision: str) -> tuple[bool, str]:
    """A success whose structuredContent is `value` shaped for `revision` and whose one text
    content is exactly that structured value, serialized."""
    expected = shaped(value, revision)
    blocks = text_blocks(r)
    text_value = parse_json(blocks[0]) if len(blocks) == 1 else None
    ok = (
        r.is_error is False
        and same_json(r.structured_content, expected)
        and len(blocks) == 1
        and same_json(text_value, expected)
    )
    detail = f"isError={r.is_error} structuredContent={short(r.structured_content, 200)}"
    detail += f" text={short(blocks, 200)}"
    if not ok:
        detail += f" (expected both to be {short(expected, 200)})"
    return ok, detail


def judge_truncated(r: Any, count: int, revision: str) -> tuple[bool, str]:
    """isError, no structuredContent, a text that is a prefix of the data (of the body as the
    upstream sent it, or of the text a complete result would have had: the structured value
    serialized) and a text with the truncation marker."""
    wholes = [records_text(count), json.dumps(shaped(records(count), revision), separators=(",", ":"))]

    def is_data(text: str) -> bool:
        return any(whole.startswith(text) for whole in wholes)

    blocks = text_blocks(r)
    data = [t for t in blocks if len(t) >= 1024 and is_data(t)]
    markers = [t for t in blocks if "truncated" in t.lower() and not is_data(t)]
    ok = r.is_error is True and r.structured_content is None and bool(data) and bool(markers)
    sizes = ", ".join(str(len(t)) for t in blocks)
    detail = (
        f"isError={r.is_error} structuredContent={short(r.structured_content, 80)}"
        f" text blocks of {sizes or 'none'} chars; data prefix {'yes' if data else 'NO'}"
        f"; marker {short(markers[0], 160) if markers else 'NONE'}"
    )
    if not ok:
        detail += f"; first text {short(blocks[0] if blocks else '', 200)}"
    return ok, detail


async def call_for_value(
    client: Any, tool: str, arguments: dict[str, Any], value: Any, revision: str
) -> tuple[bool, str]:
    return judge_value(await client.call_tool(tool, arguments), value, revision)


async def on_progress(_progress: float, _total: float | None, _message: str | None) -> None:
    pass


async def call_medium(client: Any, revision: str, framing: str) -> tuple[bool, str]:
    """listRecords(count=MEDIUM_COUNT) answers 1.3 MiB of JSON, under the 4 MiB cap. framing
    "json" (stdio, Streamable HTTP): the whole array. "sse" (legacy SSE, where every answer
    is an SSE event, which the SDK refuses over 1 MiB): cut down to fit like a truncated body.
    "progress" (Streamable HTTP, asking for progress: the answer is an SSE stream if restmcp
    had to send a notification first, else plain JSON): either, and the detail says which."""
    arguments = {"count": MEDIUM_COUNT}
    if framing == "json":
        return await call_for_value(client, "listRecords", arguments, records(MEDIUM_COUNT), revision)
    r = await client.call_tool(
        "listRecords", arguments, progress_callback=on_progress if framing == "progress" else None
    )
    if framing == "progress" and r.is_error is False:
        ok, detail = judge_value(r, records(MEDIUM_COUNT), revision)
        return ok, f"whole: {detail}"
    ok, detail = judge_truncated(r, MEDIUM_COUNT, revision)
    return ok, f"cut: {detail}" if framing == "progress" else detail


async def call_large(client: Any, revision: str, progress: bool) -> tuple[bool, str]:
    """listRecords answers ~6.3 MiB, over the 4 MiB cap (and far over the 1 MiB the SDK takes
    in one SSE event): a truncated result with a marker, and as the tool has an outputSchema
    and the truncated JSON cannot be checked against it, isError with no structuredContent."""
    r = await client.call_tool("listRecords", {}, progress_callback=on_progress if progress else None)
    return judge_truncated(r, RECORD_COUNT, revision)


async def call_still_works(client: Any, item: str) -> tuple[bool, str]:
    """The session outlived what came before: an ordinary call (an object result, the same
    on every revision) answers."""
    r = await client.call_tool("getItem", {"id": item})
    sc = r.structured_content
    ok = r.is_error is False and isinstance(sc, dict) and sc.get("path") == f"/echo/items/{item}"
    return ok, f"isError={r.is_error} structuredContent={short(sc, 200)}"


async def exercise_results(
    label: str, make_client: Callable[[], Any], revision: str, progress: bool, sse: bool
) -> None:
    """Connect one SDK client speaking `revision` and call the /results tools of
    tests/fixtures/interop-api.yaml; each check is recorded exactly once. `sse`: the
    transport carries every answer as an SSE event (legacy SSE); `progress`: also make the
    calls that ask for progress (Streamable HTTP answers those with an SSE stream)."""
    names = RESULT_CHECK_NAMES + (PROGRESS_CHECK_NAMES if progress else [])
    done: set[str] = set()

    def record(check: str, ok: bool, detail: str = "") -> None:
        done.add(check)
        R.check(f"[{label}] {check}", ok, detail)

    async def step(check: str, body: Callable[[], Any]) -> None:
        started = time.monotonic()
        try:
            with anyio.fail_after(TIMEOUT):
                ok, detail = await body()
        except TimeoutError:
            ok, detail = False, f"no answer within {TIMEOUT:.0f} s"
        except Exception as exc:  # the SDK raising is a failed check, not a crash
            ok, detail = False, describe(exc)
        record(check, ok, f"[{time.monotonic() - started:.1f} s] {detail}")

    async def run_checks(client: Any) -> None:
        version = client.protocol_version
        expected = "" if version == revision else f" (expected {revision})"
        record("connect", version == revision, f"protocol {version}{expected}")

        async def tools_list() -> tuple[bool, str]:
            tools: dict[str, Any] = {}
            cursor = None
            for _ in range(50):
                page = await client.list_tools(cursor=cursor)
                tools.update((t.name, t) for t in page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
            wanted = ["listPets", "getGreeting", "getTemperature", "getFlag", "getPet", "listRecords"]
            missing = [n for n in wanted if n not in tools]
            no_schema = [n for n in wanted if n in tools and tools[n].output_schema is None]
            ok = not missing and not no_schema
            return ok, f"{len(tools)} tools" + (f", missing {missing}" if missing else "") + (
                f", no outputSchema: {no_schema}" if no_schema else ""
            )

        await step("tools/list", tools_list)
        await step("array", lambda: call_for_value(client, "listPets", {}, PETS, version))
        await step("string", lambda: call_for_value(client, "getGreeting", {}, GREETING, version))
        await step("number", lambda: call_for_value(client, "getTemperature", {}, TEMPERATURE, version))
        await step("boolean", lambda: call_for_value(client, "getFlag", {}, FLAG, version))

        async def xml_or_json() -> tuple[bool, str]:
            before = len(PET_REQUESTS)
            ok, detail = await call_for_value(client, "getPet", {"petId": 7}, PET, version)
            seen = PET_REQUESTS[before:]
            accept, answered = (seen[-1][1], seen[-1][2]) if seen else (None, "no request")
            ok = ok and answered == "application/json"
            return ok, f"Accept {accept!r} got {answered}; {detail}"

        await step("xml-or-json", xml_or_json)
        await step("1.3 MiB body", lambda: call_medium(client, version, "sse" if sse else "json"))
        await step("large body", lambda: call_large(client, version, progress=False))
        await step("after large body", lambda: call_still_works(client, "after"))
        if progress:
            await step("1.3 MiB body, progress", lambda: call_medium(client, version, "progress"))
            await step("large body, progress", lambda: call_large(client, version, progress=True))
            await step("after large body, progress", lambda: call_still_works(client, "after-progress"))

    phase = f"connect timed out after {CONNECT_TIMEOUT:.0f} s"
    try:
        with anyio.fail_after(CONNECT_TIMEOUT) as scope:
            async with AsyncExitStack() as stack:
                try:
                    client = await stack.enter_async_context(make_client())
                except Exception as exc:
                    record("connect", False, describe(exc))
                    client = None
                scope.deadline = anyio.current_time() + TRANSPORT_TIMEOUT
                phase = f"transport timed out after {TRANSPORT_TIMEOUT:.0f} s more"
                if client is not None:
                    await run_checks(client)
    except TimeoutError:
        for check in names:
            if check not in done:
                record(check, False, phase)
        return
    except Exception as exc:  # e.g. an error while closing the connection
        R.check(f"[{label}] close", False, describe(exc))
    for check in names:
        if check not in done:
            record(check, False, "not run (connect failed)")


async def results_matrix(binary: str, spec: str, upstream_url: str) -> None:
    """exercise_results for every revision restmcp serves over stdio, Streamable HTTP and
    legacy SSE: nine clients, each on its own restmcp process."""
    records_text(RECORD_COUNT), records_text(MEDIUM_COUNT)  # built before any call's clock starts
    for revision in RESULT_REVISIONS:
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as stdio_log:
            params = StdioServerParameters(
                command=binary, args=["stdio", "--spec", spec, "--base-url", upstream_url, "--max-result-tokens", "0"]
            )
            failed_before = R.failed
            await exercise_results(
                f"results stdio {revision}",
                lambda: client_for(revision, lambda: stdio_client(params, errlog=stdio_log)),
                revision,
                progress=False,
                sse=False,
            )
            if R.failed > failed_before:
                stdio_log.seek(0)
                print(f"--- restmcp stdio stderr ---\n{stdio_log.read()[-4000:]}\n---", flush=True)

        transports: list[tuple[str, Callable[[str], Any], bool]] = [
            ("streamable-http", lambda base: f"{base}/mcp", True),
            ("sse", lambda base: sse_client(f"{base}/sse", timeout=TIMEOUT), False),
        ]
        for transport, target, progress in transports:
            sse = transport == "sse"
            label = f"results {transport} {revision}"
            server = HttpServer(binary, spec, upstream_url)
            try:
                try:
                    await server.wait_ready()
                except Exception as exc:
                    R.check(f"[{label}] connect", False, f"restmcp serve not ready: {describe(exc)}")
                    continue
                failed_before = R.failed
                await exercise_results(
                    label,
                    lambda: client_for(revision, lambda: target(server.base)),
                    revision,
                    progress,
                    sse,
                )
                if R.failed > failed_before:
                    print(f"--- restmcp serve log ({label}) ---\n{server.log_text()}\n---", flush=True)
            finally:
                server.stop()


# --------------------------------------------------------------------------------------


async def main_async(binary: str, spec: str) -> None:
    upstream, upstream_url = start_upstream()
    print(f"upstream echo API at {upstream_url}; restmcp {binary}; spec {spec}", flush=True)
    try:
        # (1) stdio; the server's stderr goes to a file, shown when a check failed.
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as stdio_log:
            params = StdioServerParameters(
                command=binary, args=["stdio", "--spec", spec, "--base-url", upstream_url, "--max-result-tokens", "0"]
            )
            failed_before = R.failed
            await exercise(
                "stdio",
                lambda: Client(stdio_client(params, errlog=stdio_log), read_timeout_seconds=TIMEOUT),
                text_too=False,
                expect_version="2026-07-28",
            )
            if R.failed > failed_before:
                stdio_log.seek(0)
                print(f"--- restmcp stdio stderr ---\n{stdio_log.read()[-4000:]}\n---", flush=True)

        # (2)-(4): one `restmcp serve` per transport so a failure in one cannot hide another.
        variants: list[tuple[str, Callable[[str], Any], bool, str | None]] = [
            (
                "streamable-http auto",
                lambda base: Client(f"{base}/mcp", read_timeout_seconds=TIMEOUT),
                False,
                "2026-07-28",
            ),
            (
                "streamable-http initialize",
                lambda base: Client(f"{base}/mcp", mode="legacy", read_timeout_seconds=TIMEOUT),
                False,
                "2025-11-25",
            ),
            (
                "sse (2024-11-05 transport)",
                lambda base: Client(
                    sse_client(f"{base}/sse", timeout=TIMEOUT), mode="legacy", read_timeout_seconds=TIMEOUT
                ),
                True,
                None,
            ),
        ]
        for label, factory, text_too, expect_version in variants:
            server = HttpServer(binary, spec, upstream_url)
            try:
                try:
                    await server.wait_ready()
                except Exception as exc:
                    for check in CHECK_NAMES:
                        R.check(f"[{label}] {check}", False, f"restmcp serve not ready: {describe(exc)}")
                    continue
                failed_before = R.failed
                await exercise(label, lambda: factory(server.base), text_too, expect_version)
                if R.failed > failed_before:
                    print(f"--- restmcp serve log ({label}) ---\n{server.log_text()}\n---", flush=True)
            finally:
                server.stop()

        await results_matrix(binary, spec, upstream_url)
    finally:
        upstream.shutdown()
        upstream.server_close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="path to the restmcp binary")
    parser.add_argument("--spec", required=True, help="path to tests/fixtures/interop-api.yaml")
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    spec = os.path.abspath(args.spec)
    if not os.access(binary, os.X_OK):
        print(f"restmcp binary not found or not executable: {binary}", file=sys.stderr)
        print("interop-python: 0 passed, 1 failed", flush=True)
        return 1

    install_signals("interop-python", HARD_LIMIT)
    started = time.monotonic()
    try:
        asyncio.run(main_async(binary, spec))
    except BaseException as exc:  # noqa: BLE001 - report, never hang or lose the summary
        traceback.print_exc()
        R.check("run", False, describe(exc))
    finally:
        kill_all()
        signal.alarm(0)
    print(f"(took {time.monotonic() - started:.1f} s)", flush=True)
    return summary("interop-python")


if __name__ == "__main__":
    sys.exit(main())
