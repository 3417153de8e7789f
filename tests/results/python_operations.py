#!/usr/bin/env python3
"""Long-running operations past their call: the handle, the status tool and
2026-07-28's Tasks extension, driven by the official MCP Python SDK (and, through
ts_operations.mjs, the official TypeScript SDK) against `restmcp serve` and a FastAPI upstream.

The upstream is tests/results/app.py (FastAPI under uvicorn, on a free loopback port), its
`startReport` (POST /reports): 202 Accepted and a status monitor (Location, or with
via=operation-location an absolute Operation-Location) that says "running" with the
Retry-After asked for (`retry_after`, fractions allowed) for `polls` reads and until `seconds`
passed, then "succeeded" with `{"title": title, "rows": 1000}` (the same for every job with
that title), or with fail=true "failed" with an error saying why. Its `GET /_seen` lists every
POST and every status read: the witness of what restmcp asked upstream.

restmcp (`restmcp serve`, 127.0.0.1, free ports, killed on any exit; the API "items" of
paging-api.yaml, whose startReport documents a 202, so it is long-running and
`operation_status` is listed):
  W  no time limit (calls wait for the end);
  T  `[apis.items.tool_timeouts] startReport = 1`;
  U  the same as T in another process (another random handle key).

Checks (Python SDK `mcp.Client` over Streamable HTTP at 2025-11-25, mode "legacy", and at
2026-07-28, mode "auto"):
  - tools/list has operation_status (inputSchema requiring `handle`);
  - W: a waited call (the report runs 1.6 s) gives the finished status, and the progress
    notifications of a call with a progress callback carry "the upstream operation is running";
    an Operation-Location 202 is followed too; a failed report is isError naming
    `accepted POST /reports`, "failed" and the upstream's reason;
  - T: a call of a report running 3.5 s (Retry-After: 1) is isError past the time limit naming
    the status URL, apis.items.tool_timeouts.startReport, operation_status and a handle;
    operation_status with it at once: "still running", structuredContent
    {"status": "running", "running": true, "handle", "retryAfterSeconds": 1}, and no status
    read upstream (the upstream's Retry-After had not passed); after 1.2 s: running and one
    read; again at once: no read; after the report ended: the same result as the waited call
    (content, structuredContent, isError); an altered handle, a made-up one and a handle from
    U are `Unknown operation handle` with nothing asked upstream; a failed report's handle
    ends as isError with the upstream's reason.
Tasks at 2026-07-28 (SEP-2663, `io.modelcontextprotocol/tasks`): the SDK 2.3.0 has no Tasks
API, but has generic client extensions (SEP-2133): `ClientExtension` whose capability ad goes
into every request's clientCapabilities, and a `ResultClaim` for the `resultType: "task"`
shape, which `Client.call_tool` resolves with the claim's resolver (here: tasks/get through
`session.send_request` until the task ends). `tasks/get` and `tasks/cancel` go through
`session.send_request` with request types whose `name_param` is `taskId` (the SDK then sends
`Mcp-Name: <taskId>`, as SEP-2663 asks; restmcp answers a tasks/* request without it with
-32020), so the SDK's transport, stamping and JSON-RPC handling apply. Checked on W:
  - the server advertises the extension under capabilities.extensions;
  - `session.call_tool(..., allow_claimed=True)` returns a CreateTaskResult at once (working,
    statusMessage "the upstream operation is accepted", ttlMs 86400000, pollIntervalMs), the
    upstream having seen the POST and no status read;
  - tasks/get says working, then completed with `result` equal to the waited call's result;
    createdAt stays what the CreateTaskResult said;
  - `Client.call_tool` with the extension (the claim's resolver) returns that same result;
  - a failed report completes with result.isError and the upstream's reason;
  - tasks/cancel answers resultType complete, tasks/get then says cancelled, and nothing more
    is read upstream;
  - a made-up and an altered task id are JSON-RPC error -32602; tasks/get from a client that
    did not declare the extension is -32021; a call without the extension waits (no task).
TypeScript (ts_operations.mjs, each of its checks one line here): @modelcontextprotocol/sdk
1.32.2 at 2025-11-25 and @modelcontextprotocol/client 2.4.0 at 2026-07-28: the status-tool
walk on T (listed, past the limit a handle, running with its structured status, the final
result equal to a waited call's on W, an altered handle refused).

Output: `ok N - name` / `not ok N - name` (with `#` detail lines), then `1..N` and
`operations-python: P passed, F failed`; exit status 0 only when nothing failed. On failure
(or with PAGING_TEST_KEEP=1) the work directory (configs, every process's output) is kept.

Usage: python_operations.py --bin PATH/TO/restmcp [--ts DIR]
(run by tests/results/run.sh in a venv with mcp==2.3.0, fastapi==0.165.0 and uvicorn==0.54.0;
--ts: tests/interop/ts with its node_modules, to run ts_operations.mjs there; without it the
TypeScript checks are skipped).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2
import mcp_types as types
from mcp import Client, MCPError
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import ConfigDict, TypeAdapter

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
import harness  # noqa: E402 - tests/lib/harness.py: results and processes
from harness import (  # noqa: E402
    CHILDREN, NEW, OLD, STEP, Child, R, error_text, finish, free_port, install_signals, kill_all, note, run_suites,
    save_logs, short, summary,
)

sys.path.insert(0, str(HERE))
from app import FAILURE  # noqa: E402 - the upstream's reason for a failed report

SUITE_TIMEOUT = 90.0  # seconds: one suite
HARD_LIMIT = 400  # seconds: the process kills itself (and its children) past this
API = "items"
TOOL = "startReport"
TASKS = "io.modelcontextprotocol/tasks"
HANDLE = re.compile(r'handle "([^"]+)"')
INVALID_PARAMS = -32602
MISSING_EXTENSION = -32021  # a tasks/* request that did not declare the extension


def child_env(extra: dict[str, str]) -> dict[str, str]:
    return harness.child_env(extra, prefixes=("PAGING_TEST_",), names=("RUST_LOG",))


class World:
    work: Path
    app: str  # the upstream's base URL
    urls: dict[str, str]  # restmcp W, T and U: their MCP endpoints


def start_app(work: Path) -> str:
    last: Exception | None = None
    for _ in range(3):
        port = free_port()
        app = Child(f"uvicorn app:app (:{port})",
                    [sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(port),
                     "--no-access-log"],
                    child_env({"PYTHONDONTWRITEBYTECODE": "1"}), HERE)
        CHILDREN.append(app)
        try:
            app.wait_for(r"Uvicorn running on http://", "stderr")
            return f"http://127.0.0.1:{port}"
        except RuntimeError as e:
            last = e
            app.stop()
    raise RuntimeError(f"the app did not start: {last}")


def start(args: argparse.Namespace, work: Path) -> World:
    w = World()
    w.work = work
    w.app = start_app(work)
    shutil.copy(HERE / "paging-api.yaml", work / "paging-api.yaml")
    limit = f"\n[apis.{API}.tool_timeouts]\n{TOOL} = 1\n"
    plan = {"w": "", "t": limit, "u": limit}
    ports = {name: free_port() for name in plan}
    servers = {}
    for name, extra in plan.items():
        config = work / f"{name}.toml"
        config.write_text(f'[server]\nlisten = "127.0.0.1:{ports[name]}"\n\n[apis.{API}]\nspec = "paging-api.yaml"\n'
                          f'base_url = "{w.app}"\n{extra}')
        child = Child(f"restmcp serve ({name.upper()})", [args.bin, "serve", "--config", str(config)], child_env({}), work)
        CHILDREN.append(child)
        servers[name] = child
    for child in servers.values():
        child.wait_for(r"MCP over Streamable HTTP at http://", "stderr")
    w.urls = {name: f"http://127.0.0.1:{ports[name]}/mcp" for name in plan}
    return w


async def app_seen(w: World) -> list[dict[str, Any]]:
    async with httpx2.AsyncClient(timeout=STEP) as http:
        r = await http.get(w.app + "/_seen")
        r.raise_for_status()
        return r.json()


class Upstream:
    """What the app saw since `mark()`: the POSTs and the status reads."""

    def __init__(self, w: World) -> None:
        self.w = w
        self.at = 0

    async def mark(self) -> None:
        self.at = len(await app_seen(self.w))

    async def since(self) -> list[str]:
        return [s["path"] for s in (await app_seen(self.w))[self.at:]]

    async def reads(self) -> int:
        return sum(1 for p in await self.since() if p.endswith("/status"))


# --------------------------------------------------------------------------------------
# Results


def texts(result: Any) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", "") == "text"]


def dump(result: Any, n: int = 1200) -> str:
    return harness.dump(result, n)


def wire(result: Any) -> dict[str, Any]:
    """A tool result as the JSON that matters to compare: content, structuredContent, isError."""
    data = result if isinstance(result, dict) else result.model_dump(mode="json", by_alias=True, exclude_none=True)
    return {"content": data.get("content"), "structuredContent": data.get("structuredContent"),
            "isError": bool(data.get("isError"))}


def finished(title: str) -> dict[str, Any]:
    return {"status": "succeeded", "report": {"title": title, "rows": 1000}}


def report(seconds: float, title: str, *, retry: str = "1", polls: int = 0, fail: bool = False, **more: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"polls": polls, "seconds": seconds, "retry_after": retry, "title": title, **more}
    if fail:
        args["fail"] = True
    return args


def failed_problems(result: Any, *, waited: bool) -> list[str]:
    said = " ".join(texts(result))
    problems = []
    if result.is_error is not True:
        problems.append("not isError")
    if waited and f'upstream API "{API}" accepted POST /reports' not in said:
        problems.append(f'no `upstream API "{API}" accepted POST /reports`')
    if not re.search(r'ended as "failed"', said, re.I):
        problems.append('no `ended as "failed"`')
    if FAILURE["message"] not in said or FAILURE["code"] not in said:
        problems.append(f"the upstream's reason ({FAILURE}) is not in it")
    return problems


# --------------------------------------------------------------------------------------
# The status tool


def client(url: str, mode: str, **kw: Any) -> Client:
    return Client(url, mode=mode, read_timeout_seconds=STEP, **kw)


async def status(c: Client, handle: str) -> types.CallToolResult:
    return await c.call_tool("operation_status", {"handle": handle})


def alter(handle: str) -> str:
    """The handle with one character of its signature changed."""
    i = len(handle) - 6
    return handle[:i] + ("A" if handle[i] != "A" else "B") + handle[i + 1:]


def running_problems(result: types.CallToolResult, handle: str) -> list[str]:
    problems = []
    if result.is_error:
        problems.append("isError")
    want = {"status": "running", "running": True, "handle": handle, "retryAfterSeconds": 1}
    if result.structured_content != want:
        problems.append(f"structuredContent {short(result.structured_content)}, expected {short(want)}")
    said = " ".join(texts(result))
    if not said.startswith(f'The operation is still running; ask again in about 1 s with handle "{handle}"'):
        problems.append(f"text {short(said, 300)}")
    return problems


async def handle_suite(w: World, version: str, mode: str, label: str) -> None:
    up = Upstream(w)
    title = f"handles-{version}"
    async with client(w.urls["w"], mode) as cw, client(w.urls["t"], mode) as ct, client(w.urls["u"], mode) as cu:
        R.check(f"{label}: the SDK connected at {version}", ct.protocol_version == version == cw.protocol_version,
                f"protocol_version {ct.protocol_version!r}")
        tools = {t.name: t for t in (await ct.list_tools()).tools}
        st = tools.get("operation_status")
        R.check(f"{label}: tools/list has operation_status, whose inputSchema requires a handle",
                st is not None and st.input_schema.get("required") == ["handle"] and TOOL in tools,
                short(sorted(tools)) + (f"; {short(st.input_schema)}" if st else ""))

        # W: a call that waits, with progress.
        messages: list[str] = []

        async def on_progress(_done: float, _total: float | None, message: str | None) -> None:
            messages.append(message or "")

        await up.mark()
        waited = await cw.call_tool(TOOL, report(1.6, title, retry="0.3"), progress_callback=on_progress)
        R.check(f"{label}: W: a report running 1.6 s is waited for: its finished status",
                waited.is_error is not True and waited.structured_content == finished(title), dump(waited))
        R.check(f"{label}: W: ... a progress notification said `the upstream operation is running (N s)`",
                any(re.fullmatch(r"the upstream operation is running \(\d+ s\)", m) for m in messages),
                f"progress messages: {messages}; the app saw {await up.since()}")
        result = await cw.call_tool(TOOL, report(0, title, retry="0.2", polls=1, via="operation-location"))
        R.check(f"{label}: W: a 202 naming an absolute Operation-Location is followed to the end",
                result.is_error is not True and result.structured_content == finished(title), dump(result))
        result = await cw.call_tool(TOOL, report(0, title, retry="0.2", polls=1, fail=True))
        problems = failed_problems(result, waited=True)
        R.check(f"{label}: W: a failed report is isError naming the POST, \"failed\" and the upstream's reason",
                not problems, "; ".join(problems) + f"\n{dump(result)}")

        # T: past the time limit, a handle.
        await up.mark()
        began = time.monotonic()
        result = await ct.call_tool(TOOL, report(3.5, title))
        said = " ".join(texts(result))
        m = HANDLE.search(said)
        handle = m.group(1) if m else ""
        R.check(f"{label}: T: past the tool's time limit an isError result naming the status URL, the setting to "
                f"raise, operation_status and a handle",
                result.is_error is True and re.search(r"still running when tool \"startReport\"'s time limit ran out", said)
                is not None and re.search(r"Its status is at http://127\.0\.0\.1:\d+/reports/\d+/status\.", said) is not None
                and f"Raise apis.{API}.tool_timeouts.{TOOL} to wait longer" in said
                and "Call operation_status with handle" in said and bool(handle), dump(result))
        if not handle:
            return
        await up.mark()
        first = await status(ct, handle)
        problems = running_problems(first, handle)
        R.check(f"{label}: T: operation_status at once: still running, structured {{status, running, handle, "
                f"retryAfterSeconds: 1}}", not problems, "; ".join(problems) + f"\n{dump(first)}")
        seen = await up.since()
        R.check(f"{label}: T: ... asked before the upstream's Retry-After passed: no status read upstream",
                not seen, f"the app saw {seen}")
        await anyio.sleep(1.2)
        await up.mark()
        second = await status(ct, handle)
        problems = running_problems(second, handle)
        seen = await up.since()
        R.check(f"{label}: T: operation_status 1.2 s later: still running, after one status read upstream",
                not problems and len(seen) == 1 and seen[0].endswith("/status"),
                "; ".join(problems) + f"\nthe app saw {seen}\n{dump(second)}")
        await up.mark()
        again = await status(ct, handle)
        seen = await up.since()
        R.check(f"{label}: T: ... asked again at once: still running, with no status read upstream",
                not running_problems(again, handle) and not seen, f"the app saw {seen}\n{dump(again)}")
        await anyio.sleep(max(0.0, began + 3.8 - time.monotonic()))
        await up.mark()
        final = await status(ct, handle)
        seen = await up.since()
        R.check(f"{label}: T: once the report ended, operation_status gives the result the waited call gave "
                f"(content, structuredContent, isError)", wire(final) == wire(waited),
                f"status tool: {short(wire(final), 800)}\nwaited call: {short(wire(waited), 800)}")
        R.check(f"{label}: T: ... after one status read upstream", len(seen) == 1 and seen[0].endswith("/status"),
                f"the app saw {seen}")

        # Handles restmcp did not give, or gave another process.
        m = HANDLE.search(" ".join(texts(await cu.call_tool(TOOL, report(30, title)))))
        foreign = m.group(1) if m else None
        R.check(f"{label}: U (another process): past its time limit a handle", foreign is not None)
        for what, bad in (("altered (one character of the signature)", alter(handle)),
                          ("made up", "rs1.AAABogAAAAA.bm90IGEgaGFuZGxl"),
                          ("from another restmcp process (another key)", foreign)):
            if bad is None:
                continue
            await anyio.sleep(0.3)  # anything in flight upstream has landed
            await up.mark()
            result = await status(ct, bad)
            seen = await up.since()
            R.check(f"{label}: T: a handle {what}: isError `Unknown operation handle`, nothing asked upstream",
                    result.is_error is True and " ".join(texts(result)).startswith("Unknown operation handle")
                    and not seen, f"the app saw {seen}\n{dump(result)}")

        # A failed report, through its handle.
        began = time.monotonic()
        result = await ct.call_tool(TOOL, report(1.3, title, fail=True, retry="0.5"))
        m = HANDLE.search(" ".join(texts(result)))
        if not R.check(f"{label}: T: a report failing after 1.3 s: past the time limit a handle", m is not None, dump(result)):
            return
        await anyio.sleep(max(0.0, began + 1.6 - time.monotonic()))
        result = await status(ct, m.group(1))
        problems = failed_problems(result, waited=False)
        R.check(f"{label}: T: ... operation_status then gives isError with \"failed\" and the upstream's reason",
                not problems, "; ".join(problems) + f"\n{dump(result)}")


# --------------------------------------------------------------------------------------
# Tasks (SEP-2663) through the SDK's extension interface and its send_request


class TaskParams(types.RequestParams):
    task_id: str


class TasksGet(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class TasksCancel(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


class TaskCreated(types.Result):
    """SEP-2663's CreateTaskResult: the task's fields at the top level."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


ANY = TypeAdapter(dict[str, Any])


async def tasks_get(session: Any, task_id: str) -> dict[str, Any]:
    return await session.send_request(TasksGet(params=TaskParams(task_id=task_id)), ANY)


async def tasks_cancel(session: Any, task_id: str) -> dict[str, Any]:
    return await session.send_request(TasksCancel(params=TaskParams(task_id=task_id)), ANY)


async def until_done(session: Any, task_id: str, limit: float = 15.0) -> tuple[list[str], dict[str, Any]]:
    """tasks/get until the task is no longer working: (the statuses seen, the last answer)."""
    statuses: list[str] = []
    deadline = time.monotonic() + limit
    while True:
        got = await tasks_get(session, task_id)
        statuses.append(str(got.get("status")))
        if got.get("status") != "working" or time.monotonic() > deadline:
            return statuses, got
        wait = got.get("pollIntervalMs")
        await anyio.sleep(min(1.0, max(0.1, (wait if isinstance(wait, int) else 500) / 1000)))


async def resolve_task(created: TaskCreated, ctx: ClaimContext) -> types.CallToolResult:
    _, got = await until_done(ctx.session, created.task_id)
    if got.get("status") != "completed" or not isinstance(got.get("result"), dict):
        raise RuntimeError(f"task {created.task_id[:24]}... ended as {got.get('status')!r}: {short(got, 600)}")
    return types.CallToolResult.model_validate(got["result"], by_name=False)


class TasksExtension(ClientExtension):
    """The client side of io.modelcontextprotocol/tasks: declared in every request, a `task`
    result resolved by polling tasks/get."""

    identifier = TASKS

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskCreated, resolve=resolve_task)]


async def start_task(c: Client, args: dict[str, Any]) -> tuple[Any, float]:
    began = time.monotonic()
    created = await c.session.call_tool(TOOL, args, allow_claimed=True)
    return created, time.monotonic() - began


def task_problems(created: Any) -> list[str]:
    if not isinstance(created, TaskCreated):
        return [f"not a CreateTaskResult: {dump(created)}"]
    problems = []
    if created.status != "working":
        problems.append(f"status {created.status!r}")
    if created.status_message != "the upstream operation is accepted":
        problems.append(f"statusMessage {created.status_message!r}")
    if created.ttl_ms != 86_400_000:
        problems.append(f"ttlMs {created.ttl_ms!r}")
    if not isinstance(created.poll_interval_ms, int):
        problems.append(f"pollIntervalMs {created.poll_interval_ms!r}")
    return problems


async def error_code(action: Any) -> tuple[int | None, str]:
    try:
        got = await action
    except MCPError as e:
        return e.code, e.error.message
    return None, short(got)


async def tasks_suite(w: World) -> None:
    label = f"tasks {NEW}"
    up = Upstream(w)
    title = "tasks"
    async with client(w.urls["w"], "auto", extensions=[TasksExtension()]) as c, client(w.urls["w"], "auto") as plain:
        R.check(f"{label}: the SDK connected at {NEW}, with and without the extension",
                c.protocol_version == NEW == plain.protocol_version, f"{c.protocol_version!r} {plain.protocol_version!r}")
        ads = c.server_capabilities.extensions or {}
        R.check(f"{label}: the server advertises {TASKS} under capabilities.extensions", TASKS in ads, short(ads))

        # Without the extension: the call waits (no task).
        await up.mark()
        waited = await plain.call_tool(TOOL, report(1.2, title, retry="0.3"))
        seen = await up.since()
        R.check(f"{label}: a call without the extension waits for the end (no task): the finished status",
                isinstance(waited, types.CallToolResult) and waited.is_error is not True
                and waited.structured_content == finished(title) and seen[:1] == ["/reports"] and seen[-1].endswith("/status"),
                f"{dump(waited)}\nthe app saw {seen}")

        # With it: a task at once.
        await up.mark()
        created, took = await start_task(c, report(1.2, title, retry="0.3"))
        seen = await up.since()
        problems = task_problems(created)
        R.check(f"{label}: the call returns a CreateTaskResult (working, \"the upstream operation is accepted\", "
                f"ttlMs 86400000, pollIntervalMs) in {took:.2f} s", not problems and took < 1.0,
                "; ".join(problems) + f"\n{dump(created)}")
        R.check(f"{label}: ... the upstream saw the POST and no status read yet", seen == ["/reports"], f"the app saw {seen}")
        if not isinstance(created, TaskCreated):
            return
        tid = created.task_id
        statuses, got = await until_done(c.session, tid)
        R.check(f"{label}: tasks/get says working, then completed", statuses[0] == "working" and statuses[-1] == "completed"
                and set(statuses) <= {"working", "completed"}, f"statuses {statuses}; last {short(got, 600)}")
        R.check(f"{label}: ... every answer is resultType complete with the task's id",
                got.get("resultType") == "complete" and got.get("taskId") == tid, short(got, 600))
        R.check(f"{label}: ... the completed task inlines the result the waited call gave",
                isinstance(got.get("result"), dict) and wire(got["result"]) == wire(waited),
                f"task result: {short(got.get('result'), 800)}\nwaited call: {short(wire(waited), 800)}")
        R.check(f"{label}: ... its createdAt is the CreateTaskResult's", got.get("createdAt") == created.created_at,
                f"CreateTaskResult createdAt {created.created_at!r}, tasks/get createdAt {got.get('createdAt')!r}")

        # The SDK's own call_tool, the claim resolving the task.
        result = await c.call_tool(TOOL, report(1.2, title, retry="0.3"))
        R.check(f"{label}: Client.call_tool with the extension (its claim polls tasks/get) returns the waited call's result",
                wire(result) == wire(waited), f"{short(wire(result), 800)}")

        # A failed report.
        created, _ = await start_task(c, report(0.8, title, retry="0.3", fail=True))
        if R.check(f"{label}: a failing report: a task", isinstance(created, TaskCreated), dump(created)):
            statuses, got = await until_done(c.session, created.task_id)
            inner = got.get("result") if isinstance(got.get("result"), dict) else {}
            said = " ".join(b.get("text", "") for b in inner.get("content") or [] if isinstance(b, dict))
            R.check(f"{label}: ... it completes with result.isError true and the upstream's reason",
                    got.get("status") == "completed" and inner.get("isError") is True and FAILURE["message"] in said
                    and re.search(r'ended as "failed"', said, re.I) is not None, f"statuses {statuses}; {short(got, 800)}")

        # Cancel.
        created, _ = await start_task(c, report(30, title, retry="0.3"))
        if R.check(f"{label}: a long report: a task", isinstance(created, TaskCreated), dump(created)):
            tid = created.task_id
            await anyio.sleep(0.4)
            working = await tasks_get(c.session, tid)
            ack = await tasks_cancel(c.session, tid)
            R.check(f"{label}: tasks/cancel on a working task answers resultType complete",
                    working.get("status") == "working" and ack.get("resultType") == "complete",
                    f"before: {short(working, 400)}\ncancel: {short(ack, 400)}")
            await anyio.sleep(0.4)
            await up.mark()
            got = await tasks_get(c.session, tid)
            await anyio.sleep(0.4)
            got2 = await tasks_get(c.session, tid)
            seen = await up.since()
            R.check(f"{label}: ... tasks/get then says cancelled (twice, 0.4 s apart), with nothing read upstream",
                    got.get("status") == "cancelled" and got2.get("status") == "cancelled" and not seen,
                    f"{short(got, 400)}\n{short(got2, 400)}\nthe app saw {seen}")

        # Ids restmcp did not give, and a client without the extension.
        for what, bad in (("made up", "rs1.AAABogAAAAA.bm90IGEgdGFzaw"), ("altered", alter(tid))):
            await up.mark()
            code, message = await error_code(tasks_get(c.session, bad))
            seen = await up.since()
            R.check(f"{label}: tasks/get of a task id {what}: JSON-RPC error {INVALID_PARAMS}, nothing asked upstream",
                    code == INVALID_PARAMS and not seen, f"code {code}: {message}; the app saw {seen}")
        code, message = await error_code(tasks_cancel(c.session, "rs1.AAABogAAAAA.bm90IGEgdGFzaw"))
        R.check(f"{label}: tasks/cancel of a made-up task id: JSON-RPC error {INVALID_PARAMS}", code == INVALID_PARAMS,
                f"code {code}: {message}")
        code, message = await error_code(tasks_get(plain.session, tid))
        R.check(f"{label}: tasks/get from a client that did not declare the extension: JSON-RPC error {MISSING_EXTENSION}",
                code == MISSING_EXTENSION, f"code {code}: {message}")


# --------------------------------------------------------------------------------------
# TypeScript (ts_operations.mjs): its checks, one JSON line each, become lines here.


def ts_suite(w: World, ts: Path) -> None:
    script = HERE / "ts_operations.mjs"
    cmd = ["node", str(script), "--t", w.urls["t"], "--w", w.urls["w"]]
    try:
        proc = subprocess.run(cmd, cwd=ts, env=child_env({}),
                              capture_output=True, text=True, timeout=SUITE_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        R.check("typescript: ts_operations.mjs ran to its end", False, f"timed out; output: {short(str(e.stdout), 1500)}")
        return
    (w.work / "ts_operations.log").write_text(proc.stdout + "\n--- stderr\n" + proc.stderr)
    checks = 0
    for line in proc.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and "check" in item:
            checks += 1
            R.check(f"typescript {item['check']}", item.get("ok") is True, str(item.get("detail") or ""))
    R.check("typescript: ts_operations.mjs ran to its end", proc.returncode == 0 and checks > 0,
            f"exit {proc.returncode}, {checks} checks; stderr: {short(proc.stderr, 1500)}")


async def run(w: World, ts: Path | None) -> None:
    suites: list[tuple[str, Any]] = [
        (f"handles {OLD}", lambda: handle_suite(w, OLD, "legacy", f"H {OLD}")),
        (f"handles {NEW}", lambda: handle_suite(w, NEW, "auto", f"H {NEW}")),
        (f"tasks {NEW}", lambda: tasks_suite(w)),
    ]
    await run_suites(suites, SUITE_TIMEOUT)
    if ts is not None:
        await anyio.to_thread.run_sync(ts_suite, w, ts)
    else:
        note("typescript: skipped (no --ts)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="the restmcp binary")
    parser.add_argument("--ts", help="tests/interop/ts, with its node_modules (runs ts_operations.mjs)")
    args = parser.parse_args()
    args.bin = str(Path(args.bin).resolve())
    ts = Path(args.ts).resolve() if args.ts else None

    install_signals("operations-python", HARD_LIMIT)

    work = Path(tempfile.mkdtemp(prefix="restmcp-operations-py-"))
    try:
        try:
            w = start(args, work)
        except Exception as e:  # noqa: BLE001
            R.check("start the app and the restmcp servers", False, error_text(e))
        else:
            note(f"app {w.app}; restmcp " + ", ".join(f"{n.upper()} {u}" for n, u in w.urls.items()))
            anyio.run(run, w, ts)
    finally:
        kill_all()
        save_logs(work)
        finish(work, "PAGING_TEST_KEEP")
    return summary("operations-python")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
