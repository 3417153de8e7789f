#!/usr/bin/env python3
"""Bounded results that stay usable, with a real upstream, driven by the
official MCP Python SDK.

The upstream is tests/results/app.py (FastAPI under uvicorn, on a free loopback port): 1000
numbered items `{"id": "it_0001", "n": 1, "text": <about 200 characters>}`, default page size
100, served four ways (tests/results/paging-api.yaml, the API "items"):
  listOffsetItems  GET /offset/items?offset&limit          {"items": [...], "total": 1000}
  listPagedItems   GET /paged/items?page&per_page          a bare array (pages from 1)
  listCursorItems  GET /cursor/items?starting_after&limit  {"object": "list", "data": [...], "has_more"}
  listPlainItems   GET /plain/items                        all 1000, no paging parameters
  startReport      POST /reports?polls=N                   202 + Location; its status says
                   "running" (Retry-After: 1) N times, then "succeeded" with the report
Its `GET /_seen` (not in the spec) lists the query of every request it answered.
The long-running suite checks that restmcp follows the 202 to the finished
status with progress notifications on the way, and that past the tool's time limit (a server
with timeout_seconds = 2) the error result names the status URL and the setting to raise.

restmcp (`restmcp serve`, 127.0.0.1, free ports, killed on any exit):
  B  `max_result_tokens = 1000` (3000 bytes of compact JSON: a 100-item page, about 23 KB,
     does not fit);
  M  the same and `max_page_size = 50`.

Checks, with the SDK's `mcp.Client` over Streamable HTTP at 2025-11-25 (mode "legacy") and at
2026-07-28 (mode "auto"), each connected at the revision asked for:
  - every over-budget result (each call of every walk below): the structured content has the
    API's own shape (an object with `items` and `total`; a bare array, as `{"result": [...]}` at
    2025-11-25, whose structuredContent must be an object; Stripe's list object) and is the
    JSON of the first text block; its items are whole and exactly the app's items (no cut or
    altered item); the API's value's compact JSON is at most 3000 bytes (or it holds a single
    item); one more text block `{"truncated": {...}}` whose `returned` is the number of items
    kept, `of` the number the upstream answered with, `total` 1000 for the offset API (which
    says so) and absent for the others, `why` a string, and `next` by the rules:
      offset:  {"offset": offset + returned} plus the "limit" the call asked for, if it did
               (the next answer is bounded the same way and says where to go on);
      page:    {"page": q, "per_page": s}, (q - 1) * s == the items before this page +
               returned (the next page starts right after the last item returned), and a
               `hint` that later pages follow at that size;
      cursor:  {"starting_after": <the last item's id>} plus the asked "limit", if any;
      plain:   no `next`, a `hint` instead;
  - walks: call the tool, then follow `next` (merged into the arguments) again and again until
    a result has no `next` (for page numbers, as a model pages: while a page comes back full
    at the per_page `next` set, ask for page + 1); the items seen, in order, must be exactly
    1..1000 (each once) for
    offset from {}, page from {} and from {"page": 1, "per_page": 100}, cursor from {};
    201..1000 for page from {"page": 3, "per_page": 100}. A gap or duplicate is reported with
    the exact call and what it answered; a walk ending early names its last call;
  - a result under the budget (offset limit 3, page per_page 5, cursor limit 4) has no
    truncated note and is the upstream's answer as is;
  - M: listPagedItems {"per_page": 500}: a text block says per_page was lowered (500 to 50),
    the app saw per_page=50 (its request log), and at most 50 items came back; a per_page of
    50 or less is sent as asked with no such block.

Output: `ok N - name` / `not ok N - name` (with `#` detail lines), then `1..N` and
`paging-python: P passed, F failed`; exit status 0 only when nothing failed. On failure (or with
PAGING_TEST_KEEP=1) the work directory (configs, every process's output) is kept and named.

Usage: python_paging.py --bin PATH/TO/restmcp
(run by tests/results/run.sh in a venv with mcp==2.3.0, fastapi==0.165.0 and uvicorn==0.54.0).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
import harness  # noqa: E402 - tests/lib/harness.py: results and processes
from harness import (  # noqa: E402
    CHILDREN, NEW, OLD, STEP, Child, R, error_text, finish, free_port, install_signals, kill_all, note, run_suites, save_logs,
    short, summary,
)

sys.path.insert(0, str(HERE))
from app import COUNT, DEFAULT_SIZE, item  # noqa: E402 - the upstream's own items, to compare with

SUITE_TIMEOUT = 180.0  # seconds: one suite
HARD_LIMIT = 900  # seconds: the process kills itself (and its children) past this
API = "items"
TOKENS = 1000  # max_result_tokens
BYTES = TOKENS * 3  # restmcp's estimate: compact JSON bytes / 3
MAX_PAGE = 50  # M's max_page_size
WALK_LIMIT = 1200  # calls: a walk longer than this is stuck
TOOLS = {"offset": "listOffsetItems", "page": "listPagedItems", "cursor": "listCursorItems", "plain": "listPlainItems"}

def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------------------
# Processes (tests/lib/harness.py)


def child_env(extra: dict[str, str]) -> dict[str, str]:
    return harness.child_env(extra, prefixes=("PAGING_TEST_",), names=("RUST_LOG",))


class World:
    work: Path
    app: str  # the upstream's base URL
    urls: dict[str, str]  # restmcp B and M: their MCP endpoints


def start_app(work: Path) -> str:
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


def write_config(w: World, name: str, port: int, extra: str) -> Path:
    path = w.work / f"{name}.toml"
    path.write_text(f"""[server]
listen = "127.0.0.1:{port}"

[apis.{API}]
spec = "paging-api.yaml"
base_url = "{w.app}"
max_result_tokens = {TOKENS}
{extra}""")
    return path


def start(args: argparse.Namespace, work: Path) -> World:
    w = World()
    w.work = work
    w.app = start_app(work)
    shutil.copy(HERE / "paging-api.yaml", work / "paging-api.yaml")
    plan = {"b": "", "m": f"max_page_size = {MAX_PAGE}\n", "t": "timeout_seconds = 2\n"}
    ports = {name: free_port() for name in plan}
    servers = {}
    for name, extra in plan.items():
        config = write_config(w, name, ports[name], extra)
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


# --------------------------------------------------------------------------------------
# One result


def texts(result: types.CallToolResult) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", "") == "text"]


def dump(result: Any, n: int = 1200) -> str:
    return harness.dump(result, n)


def truncated_note(result: types.CallToolResult) -> tuple[dict[str, Any] | None, int]:
    """The `truncated` object of the result's note block, and how many text blocks are notes."""
    found, count = None, 0
    for text in texts(result):
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if isinstance(data, dict) and set(data) == {"truncated"}:
            count += 1
            found = data["truncated"] if found is None else found
    return found, count


def items_of(kind: str, body: Any) -> list[Any] | None:
    """The list in the API's answer, when it has the API's shape."""
    if kind in ("page", "plain"):
        return body if isinstance(body, list) else None
    if kind == "offset":
        ok = isinstance(body, dict) and set(body) == {"items", "total"} and body["total"] == COUNT
        return body["items"] if ok and isinstance(body["items"], list) else None
    ok = isinstance(body, dict) and set(body) == {"object", "data", "has_more"} and body["object"] == "list"
    return body["data"] if ok and isinstance(body["data"], list) else None


def first_index(kind: str, arguments: dict[str, Any]) -> tuple[int, int]:
    """(items before the first one this call asks for, how many the upstream answers with)."""
    if kind == "offset":
        start, size = int(arguments.get("offset", 0)), int(arguments.get("limit", DEFAULT_SIZE))
    elif kind == "page":
        size = int(arguments.get("per_page", DEFAULT_SIZE))
        start = (int(arguments.get("page", 1)) - 1) * size
    elif kind == "cursor":
        after, size = arguments.get("starting_after"), int(arguments.get("limit", DEFAULT_SIZE))
        start = 0 if after is None else int(str(after).removeprefix("it_"))
    else:
        start, size = 0, COUNT
    return start, max(0, min(size, COUNT - start))


def result_problems(kind: str, arguments: dict[str, Any], result: types.CallToolResult,
                    truncation_expected: bool | None, version: str) -> tuple[list[str], list[Any], dict[str, Any] | None]:
    """What is wrong with one result (empty when nothing), its items and its truncated note.
    Up to 2025-11-25 structuredContent must be an object: a bare array comes as `{"result": [...]}`
    (structured and text alike, as restmcp's book says in docs/src/calling-upstream.md); 2026-07-28 gets the array itself."""
    problems: list[str] = []
    if result.is_error:
        return [f"isError: {dump(result)}"], [], None
    body = result.structured_content
    blocks = texts(result)
    if not blocks:
        return [f"no text content: {dump(result)}"], [], None
    try:
        first = json.loads(blocks[0])
    except ValueError:
        first = None
        problems.append(f"the first text block is not JSON (a cut result?): {short(blocks[0], 300)} ... {blocks[0][-200:]!r}")
    if body is None:
        problems.append("no structuredContent")
        body = first
    elif first is not None and first != body:
        problems.append(f"the first text block is not the structured content: {short(blocks[0], 300)}")
    if kind in ("page", "plain") and version == OLD:
        if isinstance(body, dict) and set(body) == {"result"}:
            body = body["result"]
        else:
            problems.append(f"at {OLD} a bare array is not wrapped as {{\"result\": [...]}}: {short(body, 200)}")
    items = items_of(kind, body)
    if items is None:
        return problems + [f"not the API's shape ({kind}): {short(body, 300)}"], [], None
    start, answered = first_index(kind, arguments)
    for i, got in enumerate(items):
        if got != item(start + i + 1):
            problems.append(f"item {i} is not the app's item {start + i + 1} (cut, altered or out of place): {short(got, 300)}")
            break
    size = len(compact(body).encode())  # the API's value (without the {"result": ...} of 2025-11-25)
    if size > BYTES and len(items) != 1:
        problems.append(f"{len(items)} items, {size} bytes of compact JSON: over the budget of {BYTES}")
    trunc, notes = truncated_note(result)
    if notes > 1:
        problems.append(f"{notes} truncated notes")
    if truncation_expected is False and trunc is not None:
        problems.append(f"a truncated note on a result under the budget: {short(trunc)}")
    if truncation_expected is True and trunc is None:
        problems.append(f"no truncated note; {len(items)} of the {answered} items the upstream answered with")
    if trunc is None:
        if len(items) != answered:
            problems.append(f"{len(items)} items without a truncated note; the upstream answered with {answered}")
        return problems, items, None
    n = len(items)
    if trunc.get("returned") != n:
        problems.append(f"returned {trunc.get('returned')!r}, but {n} items came back")
    if trunc.get("of") != answered:
        problems.append(f"of {trunc.get('of')!r}, but the upstream answered with {answered} items")
    if kind == "offset":
        if trunc.get("total") != COUNT:
            problems.append(f"total {trunc.get('total')!r}, the API said {COUNT}")
    elif "total" in trunc:
        problems.append(f"a total ({trunc['total']!r}) the API never gave")
    if not isinstance(trunc.get("why"), str):
        problems.append("no `why`")
    nxt = trunc.get("next")
    if kind == "plain":
        if nxt is not None:
            problems.append(f"a next ({nxt!r}) for an operation with no paging parameters")
        if not isinstance(trunc.get("hint"), str):
            problems.append("no hint")
        return problems, items, trunc
    if not isinstance(nxt, dict):
        problems.append(f"no next: {short(trunc)}")
        return problems, items, trunc
    last = start + n  # the last item returned (1-based)
    asked = {"limit": arguments["limit"]} if "limit" in arguments else {}
    if kind == "offset":
        want = {"offset": last, **asked}
        if nxt != want:
            problems.append(f"next {nxt!r}, expected {want!r}")
    elif kind == "cursor":
        want = {"starting_after": items[-1].get("id") if items else None, **asked}
        if nxt != want:
            problems.append(f"next {nxt!r}, expected {want!r}")
    else:
        q, s = nxt.get("page"), nxt.get("per_page")
        if set(nxt) != {"page", "per_page"} or not isinstance(q, int) or not isinstance(s, int) or q < 1 or s < 1:
            problems.append(f"next {nxt!r}: not a page and a per_page")
        else:
            if not isinstance(trunc.get("hint"), str):
                problems.append("no hint that later pages follow at that size")
            if (q - 1) * s != last:
                problems.append(f"next page {q} of {s} starts after item {(q - 1) * s}, the last item returned is {last}")
    return problems, items, trunc


# --------------------------------------------------------------------------------------
# Suites


def client(url: str, mode: str) -> Client:
    return Client(url, mode=mode, read_timeout_seconds=STEP)


async def connected(c: Client, version: str, label: str) -> None:
    R.check(f"{label}: the SDK connected at {version}", c.protocol_version == version, f"protocol_version {c.protocol_version!r}")


async def walk(c: Client, label: str, kind: str, arguments: dict[str, Any], want: range) -> None:
    """Call, then follow `next` until there is none; check every result and the items seen."""
    tool = TOOLS[kind]
    args = dict(arguments)
    seen: list[int] = []
    calls = 0
    bad: list[str] = []  # per-result problems, with the call
    continuity: list[str] = []  # gaps and duplicates, with the call
    last_call = ""
    trace: list[str] = []  # every call, in short
    first_truncated = None
    while True:
        calls += 1
        result = await c.call_tool(tool, args)
        problems, items, trunc = result_problems(kind, args, result, None, c.protocol_version)
        if calls == 1:
            first_truncated = trunc is not None
        numbers = [it.get("n") for it in items if isinstance(it, dict)]
        call = f"call {calls}: {tool} {compact(args)} -> items {numbers[0] if numbers else '-'}..{numbers[-1] if numbers else '-'} ({len(numbers)}), note {compact(trunc) if trunc else 'none'}"
        last_call = call
        trace.append(call)
        if problems:
            bad.append(call + "\n  " + "\n  ".join(problems) + f"\n  answer: {dump(result, 600)}")
        if numbers and seen:
            expected = seen[-1] + 1
            if numbers[0] != expected:
                what = "a gap" if numbers[0] > expected else "a duplicate"
                continuity.append(f"{what}: after item {seen[-1]} the next call gave item {numbers[0]} first\n  {call}\n  answer: {dump(result, 600)}")
        seen.extend(numbers)
        nxt = trunc.get("next") if isinstance(trunc, dict) else None
        if calls >= WALK_LIMIT or result.is_error:
            break
        if not isinstance(nxt, dict):
            # Page numbers: a full page at the size `next` set means the next page follows.
            size = args.get("per_page")
            if kind == "page" and trunc is None and isinstance(size, int) and len(numbers) == size:
                args = {**args, "page": args.get("page", 1) + 1}
                continue
            break
        args = {**args, **nxt}
    name = f"{label}: {tool} from {compact(arguments)}"
    R.check(f"{name}: the first result (over the budget) is truncated", first_truncated is True, last_call)
    R.check(f"{name}: every result of the walk ({calls} calls) holds whole items of the API's answer, within "
            f"{BYTES} bytes, with a right truncated note", not bad, "\n".join(bad[:3]) + (f"\n... {len(bad)} in all" if len(bad) > 3 else ""))
    R.check(f"{name}: following next never skips or repeats an item", not continuity,
            "\n".join(continuity[:3]) + (f"\n... {len(continuity)} in all" if len(continuity) > 3 else ""))
    expected = list(want)
    if seen == expected:
        detail = ""
    else:
        got = sorted(set(seen))
        missing = sorted(set(expected) - set(got))
        dups = len(seen) - len(got)
        detail = (f"expected items {want.start}..{want.stop - 1} once each in order; the walk of {calls} calls saw "
                  f"{len(seen)} items ({seen[0] if seen else '-'}..{seen[-1] if seen else '-'}), {len(missing)} missing"
                  f"{' (' + str(missing[0]) + '..' + str(missing[-1]) + ')' if missing else ''}, {dups} repeated\n"
                  f"the walk ended with (no next): {last_call}\nits calls:\n  " + "\n  ".join(trace[:8])
                  + (f"\n  ... {len(trace)} in all" if len(trace) > 8 else ""))
    R.check(f"{name}: following next until there is none gives items {want.start}..{want.stop - 1}, each once, in order",
            seen == expected, detail)


async def walks_suite(w: World, version: str, mode: str, label: str) -> None:
    async with client(w.urls["b"], mode) as c:
        await connected(c, version, label)
        names = {t.name for t in (await c.list_tools()).tools}
        R.check(f"{label}: tools/list has the four tools", set(TOOLS.values()) <= names, short(sorted(names)))
        await walk(c, label, "offset", {}, range(1, COUNT + 1))
        await walk(c, label, "page", {}, range(1, COUNT + 1))
        await walk(c, label, "page", {"page": 1, "per_page": 100}, range(1, COUNT + 1))
        await walk(c, label, "page", {"page": 3, "per_page": 100}, range(201, COUNT + 1))
        await walk(c, label, "cursor", {}, range(1, COUNT + 1))

        # No paging parameters: a hint, no next.
        result = await c.call_tool(TOOLS["plain"], {})
        problems, items, trunc = result_problems("plain", {}, result, True, version)
        R.check(f"{label}: listPlainItems (all 1000, no paging parameters) keeps whole items within the budget, "
                f"its note says returned/of right and gives a hint and no next", not problems,
                "\n".join(problems) + f"\nanswer: {dump(result)}")

        # Under the budget: the upstream's answer as is, no note.
        for kind, args in (("offset", {"limit": 3}), ("page", {"per_page": 5, "page": 7}), ("cursor", {"limit": 4, "starting_after": "it_0500"})):
            result = await c.call_tool(TOOLS[kind], args)
            problems, items, trunc = result_problems(kind, args, result, False, version)
            R.check(f"{label}: {TOOLS[kind]} {compact(args)} (under the budget) is the upstream's answer with no truncated note",
                    not problems and len(texts(result)) == 1,
                    "\n".join(problems) + f"\n{len(texts(result))} text blocks; answer: {dump(result)}")


LOWERED = re.compile(r"\blowered\b|\bclamp|\breduced\b|\bcapped\b", re.I)


async def clamp_suite(w: World, version: str, mode: str, label: str) -> None:
    async with client(w.urls["m"], mode) as c:
        await connected(c, version, label)
        before = len(await app_seen(w))
        result = await c.call_tool(TOOLS["page"], {"per_page": 500})
        sent = (await app_seen(w))[before:]
        said = [t for t in texts(result) if LOWERED.search(t) and "per_page" in t]
        R.check(f"{label}: listPagedItems {{per_page: 500}} with max_page_size = {MAX_PAGE}: a text block says "
                f"per_page was lowered from 500 to {MAX_PAGE}",
                len(said) == 1 and "500" in said[0] and str(MAX_PAGE) in said[0], f"text blocks: {short(texts(result)[1:], 800)}")
        queries = [s["query"] for s in sent if s["path"] == "/paged/items"]
        R.check(f"{label}: ... the app saw one request, with per_page={MAX_PAGE}, and answered at most {MAX_PAGE} items",
                len(queries) == 1 and queries[0].get("per_page") == str(MAX_PAGE) and all(s["returned"] <= MAX_PAGE for s in sent),
                f"the app saw: {short(sent, 800)}")
        problems, items, trunc = result_problems("page", {"per_page": MAX_PAGE}, result, True, version)
        R.check(f"{label}: ... the result (50 items, over the budget) keeps whole items within it, with a right note "
                f"(of {MAX_PAGE}, next after the last item returned)", not problems and len(items) <= MAX_PAGE,
                "\n".join(problems) + f"\nanswer: {dump(result)}")

        before = len(await app_seen(w))
        result = await c.call_tool(TOOLS["page"], {"per_page": 5, "page": 2})
        sent = (await app_seen(w))[before:]
        R.check(f"{label}: listPagedItems {{per_page: 5, page: 2}} (not over max_page_size) is sent as asked, "
                f"with no lowered block and no truncated note",
                [s["query"] for s in sent] == [{"per_page": "5", "page": "2"}] and len(texts(result)) == 1
                and not result_problems("page", {"per_page": 5, "page": 2}, result, False, version)[0],
                f"the app saw {short(sent)}; answer: {dump(result)}")


async def operation_suite(w: World, version: str, mode: str, label: str) -> None:
    """A 202 Accepted with Location is polled to its end, with progress notifications; past
    the tool's time limit the result says where the status is."""
    async with client(w.urls["b"], mode) as c:
        await connected(c, version, label)
        progress: list[float] = []

        async def on_progress(done: float, _total: float | None, _message: str | None) -> None:
            progress.append(done)

        before = len(await app_seen(w))
        result = await c.call_tool("startReport", {"polls": 2}, progress_callback=on_progress)
        sent = [s["path"] for s in (await app_seen(w))[before:]]
        body = texts(result)[0] if texts(result) else ""
        R.check(f"{label}: startReport (202, then running twice): the result is the finished status "
                f"({short(body, 200)})", result.is_error is not True and '"succeeded"' in body and '"rows":1000' in body.replace(" ", ""),
                dump(result))
        R.check(f"{label}: ... the app saw the POST and three status reads", sent.count("/reports") == 1
                and sum(1 for p in sent if p.endswith("/status")) == 3, f"the app saw {sent}")
        R.check(f"{label}: ... progress notifications came while it waited ({len(progress)})", len(progress) >= 1,
                f"progress: {progress}")
    async with client(w.urls["t"], mode) as c:
        result = await c.call_tool("startReport", {"polls": 50})
        said = " ".join(texts(result))
        R.check(f"{label}: past the tool's time limit: an error result naming the status URL and the setting",
                result.is_error is True and "/reports/" in said and "/status" in said and "tool_timeouts" in said,
                dump(result))


async def run(w: World) -> None:
    suites: list[tuple[str, Any]] = [
        (f"long-running {OLD}", lambda: operation_suite(w, OLD, "legacy", f"L {OLD}")),
        (f"long-running {NEW}", lambda: operation_suite(w, NEW, "auto", f"L {NEW}")),
        (f"walks {OLD}", lambda: walks_suite(w, OLD, "legacy", f"B {OLD}")),
        (f"walks {NEW}", lambda: walks_suite(w, NEW, "auto", f"B {NEW}")),
        (f"max_page_size {OLD}", lambda: clamp_suite(w, OLD, "legacy", f"M {OLD}")),
        (f"max_page_size {NEW}", lambda: clamp_suite(w, NEW, "auto", f"M {NEW}")),
    ]
    await run_suites(suites, SUITE_TIMEOUT)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="the restmcp binary")
    args = parser.parse_args()
    args.bin = str(Path(args.bin).resolve())

    install_signals("paging-python", HARD_LIMIT)

    work = Path(tempfile.mkdtemp(prefix="restmcp-paging-py-"))
    try:
        try:
            w = start(args, work)
        except Exception as e:  # noqa: BLE001
            R.check("start the app and the restmcp servers", False, error_text(e))
        else:
            note(f"app {w.app}; restmcp " + ", ".join(f"{n.upper()} {u}" for n, u in w.urls.items())
                 + f"; max_result_tokens = {TOKENS} ({BYTES} bytes)")
            anyio.run(run, w)
    finally:
        kill_all()
        save_logs(work)
        finish(work, "PAGING_TEST_KEEP")
    return summary("paging-python")


if __name__ == "__main__":
    sys.exit(main())
