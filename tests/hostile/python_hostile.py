#!/usr/bin/env python3
"""Hostile clients against the official MCP Python SDK.

What a hostile client does is raw HTTP (httpx2, the SDK's own HTTP client); what must keep
working, or be refused, is seen through the SDK (mcp==2.3.0). The upstream is httpbin 0.10.4
under gunicorn (nobody here wrote it), whose access log, written with each request's
Idempotency-Key and X-Mode headers, is the witness of what reached it; before reading it a
check sends httpbin a marker request and waits for its line (tests/lib/harness.py AccessLog).
Long-running operations go to tests/fixtures/tasks-conformance/upstream.py (standard library:
202 + Operation-Location). Every client is on 127.0.0.1, so clients are told apart by their
static tokens (A, B, C: random per run), as the book's "Security model" (docs/src/security.md) says.

Servers (`restmcp serve`, all on 127.0.0.1 and free ports, killed on any exit), each serving
tests/hostile/hostile-api.yaml as the API "hostile" on httpbin, with tokens A, B and C:
  S1  max_streams_per_client = 2, max_sse_streams = 3 (item 1);
  S2  max_sessions = 5 (item 2);
  S3  identity_key_env, a confirmation key, the API as "shop" with idempotency_header =
      "Idempotency-Key" and confirm = "destructive", and the API "jobs" (upstream.py) with
      timeout_seconds = 1 (items 3 and 4).

Item 1, repeated JSON-RPC id, SSE answers counted (S1):
  - an SDK client (2025-11-25, a session) calls slowEcho (3 s at httpbin) with a progress
    callback, so its answer streams; while it is in flight (its answer's headers are in) a raw
    POST in the same session (the id the SDK got, sniffed from its HTTP client's hooks), token
    A, reusing the call's request id, as tools/list and as tools/call, gets 400 with JSON-RPC
    -32600 "... already in flight ..." at once; the SDK still gets its result (httpbin's echo
    of /delay/3), and httpbin got exactly one /delay request of that call;
  - streams per client, at 2026-07-28 (no session, so no GET stream): three concurrent
    streaming calls of token A: two results, one refused (429), and the refusal is an
    exception of the SDK within a second or two (not a hang), never sent upstream; meanwhile
    token B's streaming call is served, token C's, with every stream of the server taken
    (max_sse_streams = 3), is refused (503) as an exception at once, and /healthz answers 200
    while all of them are in flight;
  - at 2025-11-25 the SDK's session holds its GET stream: that is a stream of the client too,
    so with it open a second streaming call of the same client is at the cap (noted with what
    the SDK saw, and checked: refused, as an exception, not a hang).
Item 2, one client holding every session (S2, max_sessions = 5):
  - an SDK client with token A opens a session (its GET stream open), then a raw client with
    token A fills the table (four more initialized sessions, each holding its GET stream);
    an SDK client with token B connects and calls a tool: served (before #34: 503 at
    initialize); the SDK client of A, whose session was the one given up (the longest
    unused of the client holding the most), calls again: what it sees is printed, and checked
    to be an error raised at once, not a hang (the spec says a 404 on a session means
    initialize again; the SDK does not); A's other sessions still answer; A's next raw
    initialize makes room from A's own sessions, and B's SDK session goes on.
Item 3, every static token a caller of its own (S3):
  - idempotency: SDK client A calls createCharge with an idempotency key twice (the repeat is
    answered from A's record: _meta io.restmcp/idempotentReplay, nothing sent); SDK client
    B repeats the same call (same key and arguments): it reaches httpbin (the access log shows
    two POSTs with that key) and is not marked a replay;
  - operation handles: A's slow_compute outlives its 1 s time limit and gives a handle; B's
    operation_status with A's handle is "Unknown operation handle", A's own is not; at
    2026-07-28 a raw task of A's (tasks extension declared) cannot be read by B (tasks/get:
    -32602) and can by A;
  - confirmation state: raw 2026-07-28, B accepting with the requestState A was given is
    -32602 and nothing is sent; A's own accept sends the DELETE once;
  - legacy /sse: the SDK's sse_client opens a session with token A; a raw POST with token B
    to its /message?sessionId=... gets 404 (and its tools/call never reaches httpbin); the
    SDK's session goes on (its next call is served); sent again (B, no token, B) with each
    body 0.15 s after its head, so that restmcp refuses before the body is in, the three
    refusals (404, 401, 404) come on one httpx2 connection: it was not closed under them.
Item 4, a confirmation covers every argument (S3):
  - the SDK's elicitation callback (2025-11-25 elicitation/create, and 2026-07-28
    input_required driven by the SDK) gets a message showing "X-Mode: dry-run"; accepted,
    httpbin receives X-Mode: dry-run (its echo, and the access log);
  - raw 2026-07-28: the requestState given for X-Mode dry-run, retried with
    purge-everything and accept, is -32602 and httpbin's log shows nothing; retried with
    dry-run, httpbin receives X-Mode: dry-run, once.

Output: `ok N - name` / `not ok N - name` (with `#` detail lines), then `1..N` and
`hostile-python: P passed, F failed`; exit status 0 only when nothing failed. On failure (or
with HOSTILE_TEST_KEEP=1) the work directory (configs, every process's output) is kept and
named.

Usage: python_hostile.py --bin PATH/TO/restmcp --httpbin URL --access-log FILE
(run by tests/hostile/run.sh in the venv target/interop/python-venv with mcp==2.3.0,
httpbin==0.10.4 and gunicorn==27.0.1; the access log must be in run.sh's format).
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import shutil
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent / "lib"))
import harness  # noqa: E402 - tests/lib/harness.py: results, processes, httpbin's access log, raw calls
from harness import (  # noqa: E402
    CHILDREN, ELICIT_CAPS, NEW, OLD, STEP, AccessLog, Child, R, dump, error_text, finish, free_port, install_signals,
    kill_all, note, result_of, run_suites, save_logs, short, summary,
)

SUITE_TIMEOUT = 90.0  # seconds: one suite
HARD_LIMIT = 300  # seconds: the process kills itself (and its children) past this
TASKS = "io.modelcontextprotocol/tasks"
TOKENS = {name: f"hostile-{name.lower()}-{secrets.token_urlsafe(18)}" for name in ("A", "B", "C")}
HANDLE = re.compile(r'handle "([^"]+)"')

# run.sh's gunicorn --access-logformat: the request line, its status, and two request headers.
LINE = re.compile(r'"([A-Z]+) (\S+) HTTP/[\d.]+" (\d+) idem="([^"]*)" mode="([^"]*)"')


def request_of(line: str) -> tuple[str, str, str, str, str] | None:
    """(method, target, status, Idempotency-Key, X-Mode) of an access log line ("-" for none)."""
    m = LINE.search(line)
    return (m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)) if m else None


def fmt(reqs: list[Any]) -> str:
    return short(", ".join(f"{r[0]} {r[1]} idem={r[3]} mode={r[4]}" for r in reqs) or "none", 700)


def child_env(extra: dict[str, str]) -> dict[str, str]:
    return harness.child_env(extra, prefixes=("HOSTILE_TEST_",))


# --------------------------------------------------------------------------------------
# The world


class World:
    work: Path
    bin: str
    httpbin: str
    log: AccessLog
    jobs: str
    s1: str  # MCP URLs
    s2: str
    s3: str


def write_config(w: World, name: str, server: str, apis: str) -> tuple[Path, int]:
    port = free_port()
    path = w.work / f"{name}.toml"
    path.write_text(f"""[server]
listen = "127.0.0.1:{port}"
{server}
[server.auth]
tokens_env = ["HOSTILE_TOKEN_A", "HOSTILE_TOKEN_B", "HOSTILE_TOKEN_C"]

{apis}
[reload]
enabled = false
""")
    return path, port


def start(args: argparse.Namespace, work: Path) -> World:
    w = World()
    w.work = work
    w.bin = args.bin
    w.httpbin = args.httpbin.rstrip("/")
    w.log = AccessLog(Path(args.access_log).resolve(), w.httpbin, "hostile", request_of)
    shutil.copy(HERE / "hostile-api.yaml", work / "hostile-api.yaml")
    shutil.copy(ROOT / "tests/fixtures/tasks-conformance/tasks-api.yaml", work / "tasks-api.yaml")

    jobs = Child("jobs upstream", [sys.executable, str(ROOT / "tests/fixtures/tasks-conformance/upstream.py"), "0"],
                 child_env({"PYTHONDONTWRITEBYTECODE": "1"}), work)
    CHILDREN.append(jobs)
    w.jobs = jobs.wait_for(r"listening on (http://\S+)", "stdout").group(1)

    hostile = f'[apis.hostile]\nspec = "hostile-api.yaml"\nbase_url = "{w.httpbin}"\n'
    s1 = write_config(w, "s1", "max_streams_per_client = 2\nmax_sse_streams = 3", hostile)
    s2 = write_config(w, "s2", "max_sessions = 5", hostile)
    s3 = write_config(w, "s3", 'identity_key_env = "HOSTILE_IDENTITY_KEY"\n[server.confirm]\n'
                      'state_key_env = "HOSTILE_CONFIRM_KEY"',
                      f'[apis.shop]\nspec = "hostile-api.yaml"\nbase_url = "{w.httpbin}"\n'
                      'idempotency_header = "Idempotency-Key"\nconfirm = "destructive"\n\n'
                      f'[apis.jobs]\nspec = "tasks-api.yaml"\nbase_url = "{w.jobs}"\ntimeout_seconds = 1\n')
    env = {f"HOSTILE_TOKEN_{k}": v for k, v in TOKENS.items()}
    env["HOSTILE_IDENTITY_KEY"] = secrets.token_urlsafe(32)
    env["HOSTILE_CONFIRM_KEY"] = secrets.token_urlsafe(32)
    children = []
    for name, (config, _port) in (("s1", s1), ("s2", s2), ("s3", s3)):
        child = Child(f"restmcp serve ({name})", [w.bin, "serve", "--config", str(config)], child_env(env), work)
        CHILDREN.append(child)
        children.append(child)
    for child in children:
        child.wait_for(r"MCP over Streamable HTTP at http://", "stderr")
    w.s1, w.s2, w.s3 = (f"http://127.0.0.1:{port}/mcp" for _c, port in (s1, s2, s3))
    return w


# --------------------------------------------------------------------------------------
# The SDK's side, and what we see of its wire


class Wire:
    """httpx2 hooks on the SDK's HTTP client: the JSON-RPC requests it POSTs (method, id), the
    session id it was given, and an event per request id once its answer's headers are in
    (the request is then in flight at the server)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.session: str | None = None
        self.answered: dict[Any, anyio.Event] = {}
        self.statuses: list[tuple[str, int]] = []  # (method, HTTP status) of every POST answered
        self.gets: list[int] = []  # the HTTP status of every GET (the session's SSE stream)

    @staticmethod
    def body(request: httpx2.Request) -> dict[str, Any]:
        try:
            body = json.loads(request.content)
        except (ValueError, httpx2.RequestNotRead):
            return {}
        return body if isinstance(body, dict) else {}

    async def on_request(self, request: httpx2.Request) -> None:
        if request.method == "POST":
            body = self.body(request)
            if "method" in body and "id" in body:
                self.sent.append((body["method"], body["id"]))
                self.answered.setdefault(json.dumps(body["id"]), anyio.Event())

    async def on_response(self, response: httpx2.Response) -> None:
        if response.headers.get("mcp-session-id"):
            self.session = response.headers["mcp-session-id"]
        if response.request.method == "GET":
            self.gets.append(response.status_code)
        if response.request.method == "POST":
            body = self.body(response.request)
            if "id" in body and "method" in body:
                self.statuses.append((body["method"], response.status_code))
                self.answered.setdefault(json.dumps(body["id"]), anyio.Event()).set()

    def last_id(self, method: str) -> Any:
        ids = [i for m, i in self.sent if m == method]
        return ids[-1] if ids else None

    async def stream_open(self) -> bool:
        """Whether the session's GET stream opened (status 200) within a step."""
        with anyio.move_on_after(STEP):
            while 200 not in self.gets:
                await anyio.sleep(0.05)
        return 200 in self.gets

    async def in_flight(self, method: str, before: int) -> Any:
        """The id of the first `method` request sent after `before` requests, once its answer's
        headers came back."""
        with anyio.fail_after(STEP):
            while True:
                ids = [i for m, i in self.sent[before:] if m == method]
                if ids:
                    await self.answered[json.dumps(ids[0])].wait()
                    return ids[0]
                await anyio.sleep(0.02)


def http_client(token: str | None, wire: Wire | None = None, read: float = 60.0) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    hooks = {"request": [wire.on_request], "response": [wire.on_response]} if wire else {}
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(STEP, read=read), event_hooks=hooks)


def sdk(url: str, token: str, mode: str, wire: Wire | None = None, **kw: Any) -> Client:
    """An SDK client of `token` over Streamable HTTP (its own httpx2 client, with our hooks)."""
    return Client(streamable_http_client(url, http_client=http_client(token, wire)), mode=mode,
                  read_timeout_seconds=STEP, **kw)


async def sdk_outcome(action: Any, limit: float = STEP) -> tuple[str, Any, float]:
    """("result", result, seconds) or ("error", text, seconds) or ("hang", None, limit)."""
    began = time.monotonic()
    try:
        with anyio.fail_after(limit):
            got = await action
        return "result", got, time.monotonic() - began
    except TimeoutError:
        return "hang", None, limit
    except MCPError as e:
        return "error", f"MCPError {e.error.code}: {e.error.message}", time.monotonic() - began
    except Exception as e:  # noqa: BLE001 - what the SDK raises is what we report
        return "error", error_text(e), time.monotonic() - began


def result_text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def echo_of(result: Any) -> dict[str, Any] | None:
    """httpbin's echo in an SDK tool result: the structured content, else the text's JSON."""
    if not isinstance(result, types.CallToolResult):
        return None
    data = result.structured_content
    if isinstance(data, dict) and "method" in data:
        return data
    try:
        data = json.loads(result_text(result))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def header_of(echo: dict[str, Any] | None, name: str) -> str | None:
    for k, v in ((echo or {}).get("headers") or {}).items():
        if k.lower() == name.lower():
            return v
    return None


async def progress(_p: float, _total: float | None, _message: str | None) -> None:
    return None


async def raw_post(http: httpx2.AsyncClient, url: str, token: str, body: dict[str, Any], *, session: str | None = None,
                   version: str = OLD) -> tuple[int, dict[str, Any], float]:
    """One POST as a hostile client: (status, the JSON-RPC message in the answer, seconds)."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "Authorization": f"Bearer {token}", "MCP-Protocol-Version": version}
    if session:
        headers["Mcp-Session-Id"] = session
    began = time.monotonic()
    response = await http.post(url, content=json.dumps(body), headers=headers)
    elapsed = time.monotonic() - began
    text = response.text
    message: dict[str, Any] = {}
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in text.splitlines():
            if line.startswith("data:"):
                try:
                    m = json.loads(line[5:].strip())
                except ValueError:
                    continue
                if isinstance(m, dict) and m.get("id") == body.get("id"):
                    message = m
    else:
        try:
            m = json.loads(text)
            message = m if isinstance(m, dict) else {"raw": m}
        except ValueError:
            message = {"raw": short(text, 300)}
    return response.status_code, message, elapsed


async def raw_session(http: httpx2.AsyncClient, url: str, token: str) -> tuple[int, str | None]:
    """initialize + notifications/initialized as a hostile client: (status, session id)."""
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": OLD, "capabilities": {}, "clientInfo": {"name": "hostile-raw", "version": "0"}}}
    response = await http.post(url, content=json.dumps(init), headers={
        "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
        "Authorization": f"Bearer {token}"})
    await response.aread()
    sid = response.headers.get("mcp-session-id")
    if response.status_code != 200 or not sid:
        return response.status_code, None
    status, _m, _t = await raw_post(http, url, token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=sid)
    return (200, sid) if status == 202 else (status, None)


class Raw(harness.Raw):
    """Plain 2026-07-28 requests (tests/lib/harness.py) of one token."""

    client_name = "restmcp-hostile-raw"

    async def task(self, method: str, task_id: str, caps: dict[str, Any]) -> dict[str, Any]:
        """A tasks/* request: its Mcp-Name header is the task id (harness.Raw sets it for
        tools/call only)."""
        self.id += 1
        body = {"jsonrpc": "2.0", "id": self.id, "method": method, "params": {"taskId": task_id, "_meta": {
            "io.modelcontextprotocol/protocolVersion": NEW,
            "io.modelcontextprotocol/clientInfo": {"name": self.client_name, "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": caps,
        }}}
        response = await self.http.post(self.url, json=body, headers={
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": NEW, "Mcp-Method": method,
            "Mcp-Name": task_id})
        try:
            message = response.json()
        except ValueError:
            return {"http_status": response.status_code, "raw": short(response.text, 600)}
        return message if isinstance(message, dict) else {"http_status": response.status_code, "raw": message}


def raw_new(url: str, token: str) -> tuple[httpx2.AsyncClient, Raw]:
    http = httpx2.AsyncClient(timeout=STEP, headers={"Authorization": f"Bearer {token}"})
    return http, Raw(http, url)


async def healthz(url: str) -> int:
    async with httpx2.AsyncClient(timeout=5) as http:
        try:
            return (await http.get(url.removesuffix("/mcp") + "/healthz")).status_code
        except httpx2.HTTPError:
            return 0


# --------------------------------------------------------------------------------------
# Item 1: a repeated request id, and SSE answers counted per client


async def repeated_id_suite(w: World) -> None:
    wire = Wire()
    async with sdk(w.s1, TOKENS["A"], "legacy", wire) as client, httpx2.AsyncClient(timeout=STEP) as http:
        R.check(f"1 repeated id: the SDK connected at {OLD} with a session", client.protocol_version == OLD
                and bool(wire.session), f"{client.protocol_version}, session {wire.session}")
        mark = await w.log.mark()
        outcome: dict[str, Any] = {}

        async def call() -> None:
            outcome["v"] = await sdk_outcome(client.call_tool("slowEcho", {"seconds": 3, "tag": "py-dup"},
                                                              progress_callback=progress))

        async with anyio.create_task_group() as tg:
            before = len(wire.sent)
            tg.start_soon(call)
            call_id = await wire.in_flight("tools/call", before)
            dup_list = await raw_post(http, w.s1, TOKENS["A"], {"jsonrpc": "2.0", "id": call_id, "method": "tools/list"},
                                      session=wire.session)
            dup_call = await raw_post(http, w.s1, TOKENS["A"], {
                "jsonrpc": "2.0", "id": call_id, "method": "tools/call",
                "params": {"name": "slowEcho", "arguments": {"seconds": 1, "tag": "py-dup-raw"}}}, session=wire.session)
        for label, (status, message, took) in (("tools/list", dup_list), ("tools/call", dup_call)):
            err = message.get("error") or {}
            R.check(f"1 repeated id: a raw {label} in the SDK's session reusing its in-flight id {call_id!r} gets 400, "
                    "-32600 \"already in flight\", at once",
                    status == 400 and err.get("code") == -32600 and "already in flight" in str(err.get("message"))
                    and took < 1.0, f"HTTP {status} in {took:.2f} s: {short(message, 400)}")
        kind, result, took = outcome["v"]
        echo = echo_of(result)
        R.check("1 repeated id: the SDK still gets its own result (httpbin's echo of /delay/3)",
                kind == "result" and result.is_error is not True and echo is not None
                and "/delay/3" in str(echo.get("url")), f"{kind} after {took:.1f} s: {dump(result) if kind == 'result' else result}")
        sent = await w.log.since(mark)
        R.check("1 repeated id: httpbin got that call once and nothing of the refused ones",
                [(r[0], r[1]) for r in sent] == [("GET", "/delay/3?tag=py-dup")], fmt(sent))
        again = await sdk_outcome(client.list_tools())
        R.check("1 repeated id: the SDK's session goes on (tools/list)", again[0] == "result", short(str(again[1]), 300))


async def stream_cap_suite(w: World) -> None:
    # 2026-07-28: no session, so no GET stream; each streaming call is one of the client's streams.
    async with sdk(w.s1, TOKENS["A"], "auto") as a, sdk(w.s1, TOKENS["B"], "auto") as b, \
            sdk(w.s1, TOKENS["C"], "auto") as c:
        R.check(f"1 streams: three SDK clients connected at {NEW}",
                a.protocol_version == NEW and b.protocol_version == NEW and c.protocol_version == NEW,
                f"{a.protocol_version} {b.protocol_version} {c.protocol_version}")
        mark = await w.log.mark()
        outcomes: list[tuple[str, Any, float]] = []
        b_out: dict[str, Any] = {}
        c_out: dict[str, Any] = {}
        probes: list[int] = []

        async def one(n: int) -> None:
            outcomes.append(await sdk_outcome(a.call_tool("slowEcho", {"seconds": 3, "tag": f"py-cap-a{n}"},
                                                          progress_callback=progress)))

        async def other() -> None:
            await anyio.sleep(0.5)
            b_out["v"] = await sdk_outcome(b.call_tool("slowEcho", {"seconds": 2, "tag": "py-cap-b"},
                                                       progress_callback=progress))

        async def full() -> None:  # A's two and B's one take every stream of the server (3)
            await anyio.sleep(1.2)
            c_out["v"] = await sdk_outcome(c.call_tool("slowEcho", {"seconds": 1, "tag": "py-cap-c"},
                                                       progress_callback=progress))

        async def probe() -> None:
            for _ in range(4):
                await anyio.sleep(0.5)
                probes.append(await healthz(w.s1))

        async with anyio.create_task_group() as tg:
            for n in range(3):
                tg.start_soon(one, n)
            tg.start_soon(other)
            tg.start_soon(full)
            tg.start_soon(probe)
        sent = await w.log.since(mark)
        results = [o for o in outcomes if o[0] == "result" and o[1].is_error is not True]
        errors = [o for o in outcomes if o[0] == "error"]
        hangs = [o for o in outcomes if o[0] == "hang"]
        for o in errors:
            note(f"1 streams, SDK {NEW}: the refused streaming call raised after {o[2]:.2f} s: {o[1]}")
        R.check("1 streams: three concurrent streaming calls of token A (max_streams_per_client = 2): two results, "
                "one refused as an SDK exception within 2 s that names the limit (a JSON-RPC error), none hangs",
                len(results) == 2 and len(errors) == 1 and not hangs and errors[0][2] < 2.0
                and "max_streams_per_client" in str(errors[0][1]),
                short([(o[0], o[2], o[1] if o[0] != 'result' else 'result') for o in outcomes], 900))
        kind, result, took = b_out["v"]
        R.check("1 streams: token B's streaming call meanwhile is served (its own share)",
                kind == "result" and result.is_error is not True, f"{kind} after {took:.1f} s: {short(str(result), 300)}")
        kind, said, took = c_out["v"]
        note(f"1 streams, SDK {NEW}: a streaming call at the server's cap (max_sse_streams = 3) raised after {took:.2f} s: "
             f"{said if kind != 'result' else 'a result'}")
        R.check("1 streams: token C's streaming call while every stream of the server is held (max_sse_streams = 3) is "
                "refused (503) as an SDK exception at once", kind == "error" and took < 2.0,
                f"{kind} after {took:.2f} s: {short(str(said), 300)}")
        R.check("1 streams: /healthz answered 200 while the streams were held", probes and all(p == 200 for p in probes),
                str(probes))
        cap_calls = sorted(r[1] for r in sent if r[1].startswith("/delay/"))
        R.check("1 streams: httpbin got the two served calls of A and B's, not the refused one",
                len([t for t in cap_calls if "py-cap-a" in t]) == 2 and "/delay/2?tag=py-cap-b" in cap_calls
                and len(cap_calls) == 3, fmt(sent))

    # 2025-11-25: the SDK's session holds its GET stream, one of the client's streams too.
    wire = Wire()
    async with sdk(w.s1, TOKENS["C"], "legacy", wire) as c:
        # The SDK opens its GET stream after notifications/initialized.
        R.check(f"1 streams: the SDK at {OLD} opened its session's GET stream", await wire.stream_open(), str(wire.gets))
        gets = list(wire.statuses)
        outcomes = []

        async def call_c(n: int) -> None:
            outcomes.append(await sdk_outcome(c.call_tool("slowEcho", {"seconds": 2, "tag": f"py-cap-c{n}"},
                                                          progress_callback=progress)))

        async with anyio.create_task_group() as tg:
            for n in range(2):
                tg.start_soon(call_c, n)
        results = [o for o in outcomes if o[0] == "result" and o[1].is_error is not True]
        errors = [o for o in outcomes if o[0] == "error"]
        for o in errors:
            note(f"1 streams, SDK {OLD} with its GET stream open: a streaming call raised after {o[2]:.2f} s: {o[1]}")
        R.check(f"1 streams: at {OLD} the SDK's GET stream counts: of two concurrent streaming calls one is served, "
                "one refused as an SDK exception (no hang)",
                len(results) == 1 and len(errors) == 1 and not [o for o in outcomes if o[0] == "hang"],
                f"{short([(o[0], round(o[2], 2), o[1] if o[0] != 'result' else 'result') for o in outcomes], 600)}; "
                f"POSTs answered: {gets}")


# --------------------------------------------------------------------------------------
# Item 2: one client holding every session


async def sessions_suite(w: World) -> None:
    victim_wire = Wire()
    async with AsyncExitStack() as stack:
        victim = await stack.enter_async_context(sdk(w.s2, TOKENS["A"], "legacy", victim_wire))
        first = await sdk_outcome(victim.call_tool("listPets", {"tag": "py-victim-1"}))
        R.check("2 sessions: SDK client A has a session and is served", first[0] == "result" and bool(victim_wire.session),
                short(str(first[1]), 300))
        await anyio.sleep(0.3)
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=httpx2.Timeout(STEP, read=120)))
        hostile: list[str] = []
        for _ in range(4):
            status, sid = await raw_session(http, w.s2, TOKENS["A"])
            if not sid:
                break
            get = await stack.enter_async_context(http.stream("GET", w.s2, headers={
                "Accept": "text/event-stream", "Authorization": f"Bearer {TOKENS['A']}", "Mcp-Session-Id": sid,
                "MCP-Protocol-Version": OLD}))
            if get.status_code != 200:
                break
            hostile.append(sid)
            await anyio.sleep(0.05)
        R.check("2 sessions: raw client A fills the table (max_sessions = 5) with initialized sessions, each holding "
                "its GET stream", len(hostile) == 4, f"{len(hostile)} raw sessions opened")
        b_wire = Wire()
        try:  # (within the suite's time limit: a Client's task groups cannot be entered in a scope left before them)
            b_client = await stack.enter_async_context(sdk(w.s2, TOKENS["B"], "legacy", b_wire))
        except Exception as e:  # noqa: BLE001 - before #34 the initialize got 503
            R.check("2 sessions: SDK client B connects while A holds every session", False,
                    f"{error_text(e)}; B's POSTs answered {b_wire.statuses}")
            return
        b_out = await sdk_outcome(b_client.call_tool("listPets", {"tag": "py-b"}))
        R.check("2 sessions: SDK client B connects and calls listPets: served (before #34: 503 at initialize)",
                b_out[0] == "result" and b_out[1].is_error is not True,
                f"{b_out[0]}: {short(str(b_out[1]), 400)}; B's POSTs answered {b_wire.statuses}")

        # A's SDK session was the longest unused of the client holding the most: given up.
        seen = await sdk_outcome(victim.call_tool("listPets", {"tag": "py-victim-2"}), limit=10.0)
        note(f"2 sessions: SDK client A, whose session was given up, calling again saw ({seen[2]:.2f} s): "
             f"{seen[0]}: {short(str(seen[1]), 400)}")
        R.check("2 sessions: the SDK client whose session was given up gets an error at once (404 on its session), "
                "no hang, no result",
                seen[0] == "error" and seen[2] < 3.0, f"{seen[0]}: {short(str(seen[1]), 400)}")
        alive = []
        for sid in hostile:
            status, _m, _t = await raw_post(http, w.s2, TOKENS["A"], {"jsonrpc": "2.0", "id": 5, "method": "ping"}, session=sid)
            alive.append(status)
        R.check("2 sessions: raw client A's other sessions still answer", alive == [200] * len(hostile), str(alive))
        status, sid = await raw_session(http, w.s2, TOKENS["A"])
        R.check("2 sessions: A's next initialize is served by giving up one of A's own sessions", status == 200 and bool(sid),
                f"HTTP {status}")
        again = await sdk_outcome(b_client.call_tool("listPets", {"tag": "py-b-2"}))
        R.check("2 sessions: B's SDK session goes on (never the one given up)", again[0] == "result"
                and again[1].is_error is not True, short(str(again[1]), 300))
        R.check("2 sessions: /healthz answers 200", await healthz(w.s2) == 200)


# --------------------------------------------------------------------------------------
# Item 3: each static token a caller of its own


async def idempotency_suite(w: World) -> None:
    key = f"order-{secrets.token_hex(6)}"
    args = {"amount": 5, "note": "hostile", "idempotency_key": key}
    async with sdk(w.s3, TOKENS["A"], "legacy") as a, sdk(w.s3, TOKENS["B"], "auto") as b:
        mark = await w.log.mark()
        first = await a.call_tool("createCharge", args)
        repeat = await a.call_tool("createCharge", args)
        sent_a = await w.log.since(mark)
        replayed = (repeat.meta or {}).get("io.restmcp/idempotentReplay")
        R.check("3 idempotency: A's repeat (same key and arguments) is answered from A's record: replay marked, "
                "one POST at httpbin",
                first.is_error is not True and replayed is True
                and [(r[0], r[1], r[3]) for r in sent_a] == [("POST", "/anything/charges", key)],
                f"{dump(repeat, 300)}; httpbin: {fmt(sent_a)}")
        mark = await w.log.mark()
        other = await b.call_tool("createCharge", args)
        sent_b = await w.log.since(mark)
        R.check("3 idempotency: B's same call (A's key, same arguments) is sent to httpbin, not answered with A's result",
                other.is_error is not True and [(r[0], r[1], r[3]) for r in sent_b] == [("POST", "/anything/charges", key)]
                and (other.meta or {}).get("io.restmcp/idempotentReplay") is not True
                and header_of(echo_of(other), "Idempotency-Key") == key,
                f"{dump(other, 400)}; httpbin: {fmt(sent_b)}")


async def handles_suite(w: World) -> None:
    async with sdk(w.s3, TOKENS["A"], "legacy") as a, sdk(w.s3, TOKENS["B"], "legacy") as b:
        started = await a.call_tool("slow_compute", {"seconds": 30, "label": "hostile"})
        m = HANDLE.search(result_text(started))
        R.check("3 handles: A's slow_compute outlives its 1 s limit and gives a handle", m is not None, dump(started, 500))
        if m is None:
            return
        handle = m.group(1)
        theirs = await b.call_tool("operation_status", {"handle": handle})
        R.check("3 handles: B's operation_status with A's handle: isError \"Unknown operation handle\"",
                theirs.is_error is True and "Unknown operation handle" in result_text(theirs), dump(theirs, 400))
        own = await a.call_tool("operation_status", {"handle": handle})
        R.check("3 handles: A's own operation_status with it: the operation is running",
                own.is_error is not True and (own.structured_content or {}).get("running") is True, dump(own, 400))

    # 2026-07-28 tasks, raw: a client declaring the Tasks extension gets a task id.
    caps = {**ELICIT_CAPS, "extensions": {TASKS: {}}}
    http_a, raw_a = raw_new(w.s3, TOKENS["A"])
    http_b, raw_b = raw_new(w.s3, TOKENS["B"])
    async with http_a, http_b:
        created = result_of(await raw_a.send("tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}}, caps))
        task_id = created.get("taskId") or (created.get("task") or {}).get("taskId")
        R.check("3 tasks: A's raw 2026-07-28 call declaring the Tasks extension becomes a task", created.get("resultType") == "task"
                and isinstance(task_id, str), short(created, 500))
        if not isinstance(task_id, str):
            return
        theirs = await raw_b.task("tasks/get", task_id, caps)
        R.check("3 tasks: B's tasks/get of A's task is -32602", (theirs.get("error") or {}).get("code") == -32602,
                short(theirs, 400))
        own = result_of(await raw_a.task("tasks/get", task_id, caps))
        R.check("3 tasks: A's own tasks/get reads it (working)", own.get("status") == "working", short(own, 400))
        await raw_a.task("tasks/cancel", task_id, caps)


async def foreign_confirmation_suite(w: World) -> None:
    http_a, raw_a = raw_new(w.s3, TOKENS["A"])
    http_b, raw_b = raw_new(w.s3, TOKENS["B"])
    async with http_a, http_b:
        args = {"thingId": "py-foreign", "X-Mode": "dry-run"}
        mark = await w.log.mark()
        asked = result_of(await raw_a.call("deleteThing", args))
        state = asked.get("requestState")
        R.check("3 confirmation: A's raw 2026-07-28 deleteThing is input_required with a requestState",
                asked.get("resultType") == "input_required" and isinstance(state, str), short(asked, 400))
        stolen = await raw_b.call("deleteThing", args, answer="accept", state=state)
        sent = await w.log.since(mark)
        R.check("3 confirmation: B accepting with A's requestState is -32602, and nothing reaches httpbin",
                (stolen.get("error") or {}).get("code") == -32602 and sent == [], f"{short(stolen, 400)}; httpbin: {fmt(sent)}")
        mark = await w.log.mark()
        done = await raw_a.call("deleteThing", args, answer="accept", state=state)
        sent = await w.log.since(mark)
        R.check("3 confirmation: A's own accept sends the DELETE once",
                result_of(done).get("isError") is not True
                and [(r[0], r[1]) for r in sent] == [("DELETE", "/anything/things/py-foreign")],
                f"{short(done, 300)}; httpbin: {fmt(sent)}")


async def after_a_pause(payload: bytes):
    """A request body that comes 0.15 s after the head (sent chunked): time for the server
    to answer from the head alone."""
    await anyio.sleep(0.15)
    yield payload


async def legacy_sse_suite(w: World) -> None:
    base = w.s3.removesuffix("/mcp")
    sessions: list[str] = []
    transport = sse_client(f"{base}/sse", headers={"Authorization": f"Bearer {TOKENS['A']}"}, timeout=STEP,
                           on_session_created=sessions.append)
    async with Client(transport, mode="legacy", read_timeout_seconds=STEP) as client, \
            httpx2.AsyncClient(timeout=STEP) as http:
        first = await client.call_tool("listPets", {"tag": "py-sse-1"})
        R.check("3 legacy SSE: the SDK's sse_client session (token A) is served", first.is_error is not True and bool(sessions),
                f"{dump(first, 200)}; sessions {sessions}")
        if not sessions:
            return
        mark = await w.log.mark()
        body = {"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                "params": {"name": "listPets", "arguments": {"tag": "py-sse-foreign"}}}
        statuses = {}
        for who, token in (("B", TOKENS["B"]), ("no token", None)):
            headers = {"Content-Type": "application/json"}
            if token:
                headers["Authorization"] = f"Bearer {token}"
            statuses[who] = (await http.post(f"{base}/message?sessionId={sessions[0]}", content=json.dumps(body),
                                             headers=headers)).status_code
        # The same refusals, each body sent after a pause: restmcp answers from the head,
        # before the body is in, and the connection must still take the next request.
        seen = []
        for who, token in (("B", TOKENS["B"]), ("no token", None), ("B again", TOKENS["B"])):
            headers = {"Content-Type": "application/json"}
            if token:
                headers["Authorization"] = f"Bearer {token}"
            answer = await http.post(f"{base}/message?sessionId={sessions[0]}", headers=headers,
                                     content=after_a_pause(json.dumps(body).encode()))
            seen.append((who, answer.status_code, answer.extensions["network_stream"].get_extra_info("client_addr")))
        own = await sdk_outcome(client.call_tool("listPets", {"tag": "py-sse-2"}))
        sent = await w.log.since(mark)
        R.check("3 legacy SSE: a raw POST with token B to A's /message?sessionId=... gets 404 (without a token 401)",
                statuses == {"B": 404, "no token": 401}, str(statuses))
        R.check("3 legacy SSE: refused before their bodies came (404, 401, 404), the raw POSTs keep httpx2's "
                "connection: one connection carries all three",
                [s for _, s, _ in seen] == [404, 401, 404] and len({a for _, _, a in seen}) == 1, str(seen))
        R.check("3 legacy SSE: the SDK's session goes on (its next call is served); B's call never reached httpbin",
                own[0] == "result" and own[1].is_error is not True
                and [(r[0], r[1]) for r in sent] == [("GET", "/anything/pets?tag=py-sse-2")],
                f"{own[0]}: {short(str(own[1]), 300)}; httpbin: {fmt(sent)}")


# --------------------------------------------------------------------------------------
# Item 4: a confirmation covers every argument, header ones included


class Asker:
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(self, _context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.seen.append(getattr(params, "message", ""))
        return types.ElicitResult(action="accept", content={})


async def header_confirm_suite(w: World) -> None:
    for mode, label in (("legacy", OLD), ("auto", NEW)):
        asker = Asker()
        async with sdk(w.s3, TOKENS["A"], mode, elicitation_callback=asker) as client:
            pid = f"py-hdr-{'old' if mode == 'legacy' else 'new'}"
            mark = await w.log.mark()
            result = await client.call_tool("deleteThing", {"thingId": pid, "X-Mode": "dry-run"})
            sent = await w.log.since(mark)
            message = asker.seen[0] if asker.seen else ""
            R.check(f"4 header in the question, SDK {label}: the elicitation callback's message shows \"X-Mode: dry-run\"",
                    len(asker.seen) == 1 and "X-Mode: dry-run" in message, short(asker.seen, 600))
            R.check(f"4 header in the question, SDK {label}: accepted, httpbin received X-Mode: dry-run, once",
                    header_of(echo_of(result), "X-Mode") == "dry-run"
                    and [(r[0], r[1], r[4]) for r in sent] == [("DELETE", f"/anything/things/{pid}", "dry-run")],
                    f"{dump(result, 400)}; httpbin: {fmt(sent)}")

    http_a, raw_a = raw_new(w.s3, TOKENS["A"])
    async with http_a:
        dry = {"thingId": "py-hdr-raw", "X-Mode": "dry-run"}
        purge = {"thingId": "py-hdr-raw", "X-Mode": "purge-everything"}
        mark = await w.log.mark()
        asked = result_of(await raw_a.call("deleteThing", dry))
        state = asked.get("requestState")
        question = str(((asked.get("inputRequests") or {}).get("confirm") or {}).get("params", {}).get("message", ""))
        R.check("4 raw: the input_required question for dry-run shows \"X-Mode: dry-run\"",
                isinstance(state, str) and "X-Mode: dry-run" in question, short(asked, 500))
        swapped = await raw_a.call("deleteThing", purge, answer="accept", state=state)
        sent = await w.log.since(mark)
        R.check("4 raw: the dry-run requestState with X-Mode purge-everything and accept is -32602; httpbin's log shows "
                "nothing sent", (swapped.get("error") or {}).get("code") == -32602 and sent == [],
                f"{short(swapped, 400)}; httpbin: {fmt(sent)}")
        mark = await w.log.mark()
        done = await raw_a.call("deleteThing", dry, answer="accept", state=state)
        sent = await w.log.since(mark)
        R.check("4 raw: accepted with dry-run, httpbin receives X-Mode: dry-run, once",
                result_of(done).get("isError") is not True
                and [(r[0], r[1], r[4]) for r in sent] == [("DELETE", "/anything/things/py-hdr-raw", "dry-run")],
                f"{short(done, 400)}; httpbin: {fmt(sent)}")
        R.check("4 raw: purge-everything never reached httpbin in this run",
                not [r for r in w.log.requests() if r[4] == "purge-everything"], fmt(w.log.requests()[-5:]))


# --------------------------------------------------------------------------------------


async def run(w: World) -> None:
    await run_suites([
        ("1 repeated id", lambda: repeated_id_suite(w)),
        ("1 streams", lambda: stream_cap_suite(w)),
        ("2 sessions", lambda: sessions_suite(w)),
        ("3 idempotency", lambda: idempotency_suite(w)),
        ("3 handles", lambda: handles_suite(w)),
        ("3 confirmation", lambda: foreign_confirmation_suite(w)),
        ("3 legacy SSE", lambda: legacy_sse_suite(w)),
        ("4 header confirmation", lambda: header_confirm_suite(w)),
    ], SUITE_TIMEOUT)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="the restmcp binary")
    parser.add_argument("--httpbin", required=True, help="a running httpbin's base URL")
    parser.add_argument("--access-log", required=True, help="that httpbin's gunicorn --access-logfile")
    args = parser.parse_args()
    args.bin = str(Path(args.bin).resolve())
    install_signals("hostile-python", HARD_LIMIT)
    began = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="restmcp-hostile-py-"))
    try:
        try:
            w = start(args, work)
        except Exception as e:  # noqa: BLE001
            R.check("start the upstreams and the restmcp servers", False, error_text(e))
        else:
            note(f"httpbin {w.httpbin}; jobs {w.jobs}; restmcp S1 {w.s1}, S2 {w.s2}, S3 {w.s3}")
            anyio.run(run, w)
    finally:
        kill_all()
        save_logs(work)
        finish(work, "HOSTILE_TEST_KEEP")
    note(f"time: {time.monotonic() - began:.1f} s")
    return summary("hostile-python")


if __name__ == "__main__":
    sys.exit(main())
