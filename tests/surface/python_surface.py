#!/usr/bin/env python3
"""Resources, subscriptions, prompts and completions through the official MCP Python SDK
(mcp==2.3.0), against a real upstream whose ETag changes (issue 36, "Also done when").

The upstream is tests/surface/app.py (FastAPI under uvicorn, a free loopback port): notes
with an ETag and `Cache-Control: max-age=30`, 304 to a matching If-None-Match, a PNG badge
per note, and its own request log (GET /_log). restmcp reads tests/surface/config.toml
(`[resources] poll_seconds = 1`, forward_headers X-Tenant, prompt review_note) with
surface.overlay.yaml (four resources and templates, prompt badge_of); the base URL and the
listen address come from RESTMCP_* variables.

Five SDK clients, each through `mcp.Client` (response cache off, so every read reaches restmcp):
  stdio 2025-11-25 (mode "legacy"), stdio 2026-07-28 (mode "auto": server/discover),
  Streamable HTTP 2025-11-25 (initialize, a session), Streamable HTTP 2026-07-28 (no
  session), legacy HTTP+SSE at /sse (sse_client, 2025-11-25). Each one:
  - lists resources (notes://notes) and templates (notes://notes/{noteId},
    notes://badges/{noteId}, notes://priorities/{priority});
  - reads the resource, a note (text, application/json), a badge (blob, image/png, a real
    PNG) and a priority (a template bound to an enum path parameter);
  - reads a URI no resource gives and one whose upstream answers 404: "resource not found",
    -32002 up to 2025-11-25, -32602 with data.uri on 2026-07-28;
  - lists the prompts and gets review_note (text with the arguments filled in, then the
    note embedded as a resource) and badge_of (the getBadge operation's image/png answer as
    image content);
  - gets review_note without its required noteId: -32602 up to 2025-11-25; on 2026-07-28
    an input_required the SDK hands its elicitation callback (asked for noteId), whose answer
    it sends back, and the prompt completes with that note;
  - completes a prompt argument from an enum (tone) and from a list tool (noteId), and a
    template variable from its parameter's enum ({priority}) and from a list tool ({noteId});
  - subscribes to a note of its own (resources/subscribe on 2025-11-25, a
    subscriptions/listen with resourceSubscriptions on 2026-07-28): no
    notifications/resources/updated while it does not change (3 polls), one after the test
    PUTs a change to the upstream, and then a read gives the new text; after unsubscribe (or
    the end of the listen) another change sends nothing and the polling stops; the upstream's
    log shows the first poll unconditional and every later one with If-None-Match, each
    unchanged one answered 304.

Then plain 2026-07-28 JSON-RPC over HTTP (the wire itself, as tests/interop does):
  - resources/read carries ttlMs 30000 (the upstream's max-age) and cacheScope "public",
    and "private" when the request carries X-Tenant (a forwarded header, which reached the
    upstream);
  - an unknown URI is error -32602 with data.uri;
  - prompts/get without noteId is resultType "input_required" asking for noteId, and the
    retry with inputResponses and the requestState completes with that note;
  - subscriptions/listen with resourceSubscriptions: the acknowledgement, then
    notifications/resources/updated for the note after a change upstream.

Then (with --ts) tests/surface/ts_surface.mjs, the same checks through the official
TypeScript SDKs (@modelcontextprotocol/sdk 1.32.2 at 2025-11-25 over stdio, Streamable HTTP
and legacy SSE; @modelcontextprotocol/client 2.4.0 at 2026-07-28 over stdio and Streamable
HTTP) against the same app and `restmcp serve`; each of its checks is a line here.

One line per check (`ok N - ...`), then `surface: P passed, F failed`; exit 0 only when
nothing failed. On failure (or with SURFACE_TEST_KEEP=1) the work directory (every
process's output) is kept and named.

Usage: python_surface.py --bin PATH/TO/restmcp [--ts tests/interop/ts]
(run by tests/surface/run.sh in a venv with mcp==2.3.0, fastapi==0.165.0, uvicorn==0.54.0)
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

# resources/subscribe and unsubscribe are how 2025-11-25 subscribes; the SDK warns they are
# gone on 2026-07-28 (where this test uses Client.listen).
warnings.filterwarnings("ignore", message=r"resources/(un)?subscribe is removed")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
import harness  # noqa: E402 - tests/lib/harness.py
from harness import CHILDREN, NEW, OLD, STEP, Child, R, describe, dump, free_port, note, short  # noqa: E402

HERE = Path(__file__).resolve().parent
HARD_LIMIT = 420  # seconds: the process kills itself (and its children) past this
QUIET = 3.2  # seconds with no change: three polls at poll_seconds = 1
UPDATE_WAIT = 8.0  # seconds for a change to be noticed and told
PNG = b"\x89PNG\r\n\x1a\n"
TEMPLATES = {"notes://notes/{noteId}", "notes://badges/{noteId}", "notes://priorities/{priority}"}
NOT_FOUND_OLD = -32002
INVALID_PARAMS = -32602


def child_env(extra: dict[str, str]) -> dict[str, str]:
    return harness.child_env(extra, prefixes=("SURFACE_TEST_",), names=("RUST_LOG",))


# --------------------------------------------------------------------------------------
# The upstream and restmcp


class World:
    bin: str
    work: Path
    app: str  # the upstream's base URL
    url: str  # restmcp serve's MCP endpoint
    sse: str  # its legacy SSE endpoint
    env: dict[str, str]  # what restmcp (serve and stdio) is started with


def start(bin_path: str, work: Path) -> World:
    w = World()
    w.bin, w.work = bin_path, work
    last: Exception | None = None
    for _ in range(3):
        port = free_port()
        app = Child(f"uvicorn app:app (:{port})",
                    [sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(port),
                     "--no-access-log"], child_env({"PYTHONDONTWRITEBYTECODE": "1"}), HERE)
        CHILDREN.append(app)
        try:
            app.wait_for(r"Uvicorn running on http://", "stderr")
            w.app = f"http://127.0.0.1:{port}"
            break
        except RuntimeError as e:
            last = e
            app.stop()
    else:
        raise RuntimeError(f"the app did not start: {last}")
    port = free_port()
    w.env = child_env({"RESTMCP_APIS__NOTES__BASE_URL": w.app, "RESTMCP_SERVER__LISTEN": f"127.0.0.1:{port}"})
    serve = Child("restmcp serve", [bin_path, "serve", "--config", str(HERE / "config.toml")], w.env, work)
    CHILDREN.append(serve)
    serve.wait_for(r"MCP over Streamable HTTP at http://", "stderr")
    w.url, w.sse = f"http://127.0.0.1:{port}/mcp", f"http://127.0.0.1:{port}/sse"
    return w


async def upstream_log(w: World) -> list[dict[str, Any]]:
    async with httpx2.AsyncClient(timeout=STEP) as http:
        r = await http.get(w.app + "/_log")
        r.raise_for_status()
        return r.json()


async def change_note(w: World, note_id: str, text: str) -> None:
    async with httpx2.AsyncClient(timeout=STEP) as http:
        r = await http.put(f"{w.app}/notes/{note_id}", json={"text": text})
        r.raise_for_status()


# --------------------------------------------------------------------------------------
# SDK clients


class Asker:
    """The elicitation callback: answers a form with `content`, and records what it was asked."""

    def __init__(self, content: dict[str, Any]) -> None:
        self.content = content
        self.seen: list[Any] = []

    async def __call__(self, _context: Any, params: Any) -> types.ElicitResult:
        self.seen.append(params)
        return types.ElicitResult(action="accept", content=self.content)


class Updates:
    """notifications/resources/updated seen by a session's message handler, with their time."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, str]] = []

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.seen.append((time.monotonic(), str(message.params.uri)))

    def since(self, t: float, uri: str) -> list[float]:
        return [at for at, u in self.seen if at >= t and u == uri]


Maker = Callable[[Asker, Updates], Client]


def makers(w: World, errlog: Any) -> list[tuple[str, str, Maker]]:
    """(label, revision, make) of the five clients."""
    stdio = StdioServerParameters(command=w.bin, args=["stdio", "--config", str(HERE / "config.toml")],
                                  env=w.env, cwd=str(w.work))

    def common(asker: Asker, updates: Updates) -> dict[str, Any]:
        return {"elicitation_callback": asker, "message_handler": updates, "read_timeout_seconds": STEP, "cache": None}

    return [
        ("stdio 2025-11-25", OLD, lambda a, u: Client(stdio_client(stdio, errlog=errlog), mode="legacy",
                                                      **common(a, u))),
        ("stdio 2026-07-28", NEW, lambda a, u: Client(stdio_client(stdio, errlog=errlog), mode="auto",
                                                      **common(a, u))),
        ("Streamable HTTP 2025-11-25", OLD, lambda a, u: Client(w.url, mode="legacy", **common(a, u))),
        ("Streamable HTTP 2026-07-28", NEW, lambda a, u: Client(w.url, mode="auto", **common(a, u))),
        ("legacy SSE 2025-11-25", OLD, lambda a, u: Client(sse_client(w.sse, timeout=STEP), mode="legacy",
                                                           **common(a, u))),
    ]


def one(contents: list[Any]) -> Any:
    return contents[0] if len(contents) == 1 else None


async def error_of(action: Callable[[], Any]) -> MCPError | str:
    """The MCPError `action` raises, or a description of what it did instead."""
    try:
        result = await action()
    except MCPError as e:
        return e
    except Exception as e:  # noqa: BLE001 - anything else is the check's detail
        return describe(e, data=True)
    return f"no error: {dump(result)}"


# --------------------------------------------------------------------------------------
# One client: everything but the subscription


async def reads(label: str, revision: str, client: Client) -> None:
    listed = await client.list_resources()
    uris = [str(r.uri) for r in listed.resources]
    R.check(f"{label}: resources/list gives notes://notes", "notes://notes" in uris, short(uris))
    templates = await client.list_resource_templates()
    found = {t.uri_template for t in templates.resource_templates}
    R.check(f"{label}: resources/templates/list gives the three templates", TEMPLATES <= found, short(sorted(found)))

    every = one((await client.read_resource("notes://notes")).contents)
    ids = [n.get("id") for n in json.loads(every.text)] if isinstance(every, types.TextResourceContents) else []
    R.check(f"{label}: read notes://notes: the notes as JSON text", {"alpha", "bravo", "charlie"} <= set(ids),
            dump(every))

    alpha = one((await client.read_resource("notes://notes/alpha")).contents)
    body = json.loads(alpha.text) if isinstance(alpha, types.TextResourceContents) else {}
    R.check(f"{label}: read template notes://notes/alpha: text, application/json, the note",
            body.get("id") == "alpha" and body.get("text") == "Buy milk." and alpha.mime_type == "application/json"
            and str(alpha.uri) == "notes://notes/alpha", dump(alpha))

    badge = one((await client.read_resource("notes://badges/alpha")).contents)
    data = base64.b64decode(badge.blob) if isinstance(badge, types.BlobResourceContents) else b""
    R.check(f"{label}: read notes://badges/alpha: a blob, image/png, a PNG",
            data.startswith(PNG) and badge.mime_type == "image/png", dump(badge, 300))

    urgent = one((await client.read_resource("notes://priorities/urgent")).contents)
    ids = [n.get("id") for n in json.loads(urgent.text)] if isinstance(urgent, types.TextResourceContents) else []
    R.check(f"{label}: read notes://priorities/urgent (an enum path parameter): bravo", ids == ["bravo"], dump(urgent))

    unknown = (("notes://nothing/here", "no resource gives it"), ("notes://notes/zulu", "the upstream answers 404"))
    for uri, why in unknown:
        e = await error_of(lambda: client.read_resource(uri))
        if revision == NEW:
            ok = (isinstance(e, MCPError) and e.code == INVALID_PARAMS and isinstance(e.data, dict)
                  and e.data.get("uri") == uri)
            want = "-32602 with data.uri"
        else:
            ok = isinstance(e, MCPError) and e.code == NOT_FOUND_OLD
            want = "-32002"
        R.check(f"{label}: read {uri} ({why}): resource not found, {want}", ok,
                describe(e, data=True) if isinstance(e, MCPError) else e)


async def prompts(label: str, revision: str, client: Client, asker: Asker) -> None:
    listed = await client.list_prompts()
    by_name = {p.name: p for p in listed.prompts}
    review = by_name.get("review_note")
    args = {a.name: a.required for a in (review.arguments or [])} if review else {}
    R.check(f"{label}: prompts/list gives review_note(noteId required, tone) and badge_of",
            "badge_of" in by_name and args == {"noteId": True, "tone": False}, dump(listed))

    got = await client.get_prompt("review_note", {"noteId": "alpha", "tone": "brief"})
    kinds = [m.content.type for m in got.messages]
    text = got.messages[0].content.text if kinds[:1] == ["text"] else ""
    embedded = got.messages[1].content.resource if kinds[1:2] == ["resource"] else None
    R.check(f"{label}: prompts/get review_note: the text filled in, then the note embedded as a resource",
            kinds == ["text", "resource"] and "brief review of note alpha" in text
            and isinstance(embedded, types.TextResourceContents) and str(embedded.uri) == "notes://notes/alpha"
            and json.loads(embedded.text).get("text") == "Buy milk.", dump(got))

    got = await client.get_prompt("badge_of", {"noteId": "bravo"})
    kinds = [m.content.type for m in got.messages]
    image = got.messages[-1].content if kinds[-1:] == ["image"] else None
    R.check(f"{label}: prompts/get badge_of: the operation's image/png answer is image content",
            kinds == ["text", "image"] and image.mime_type == "image/png"
            and base64.b64decode(image.data).startswith(PNG),
            dump(got, 400))

    if revision == NEW:
        asker.seen.clear()
        got = await client.get_prompt("review_note", {"tone": "detailed"})
        asked = asker.seen[0].requested_schema if len(asker.seen) == 1 else None
        asked = asked.model_dump(by_alias=True, exclude_none=True) if hasattr(asked, "model_dump") else asked or {}
        last = got.messages[-1].content if got.messages else None
        embedded = last.resource if last is not None and last.type == "resource" else None
        R.check(f"{label}: prompts/get review_note without noteId: input_required asks for it (the SDK's "
                "elicitation callback), the retry completes with the answer",
                "noteId" in (asked.get("properties") or {}) and "noteId" in (asked.get("required") or [])
                and embedded is not None and str(embedded.uri) == "notes://notes/charlie",
                f"asked {short(asked)}; got {dump(got)}")
    else:
        e = await error_of(lambda: client.get_prompt("review_note", {"tone": "brief"}))
        R.check(f"{label}: prompts/get review_note without noteId: -32602 naming it",
                isinstance(e, MCPError) and e.code == INVALID_PARAMS and "noteId" in e.message,
                describe(e, data=True) if isinstance(e, MCPError) else e)


async def completions(label: str, client: Client) -> None:
    prompt = types.PromptReference(name="review_note")
    cases = [
        ("prompt argument tone (enum), 'b'", prompt, "tone", "b", ["brief"]),
        ("prompt argument noteId (list tool), 'a'", prompt, "noteId", "a", ["alpha"]),
        ("template variable {priority} (the parameter's enum), 'u'",
         types.ResourceTemplateReference(uri="notes://priorities/{priority}"), "priority", "u", ["urgent"]),
        ("template variable {noteId} (list tool), 'b'",
         types.ResourceTemplateReference(uri="notes://notes/{noteId}"), "noteId", "b", ["bravo"]),
    ]
    for name, ref, argument, value, want in cases:
        got = await client.complete(ref, {"name": argument, "value": value})
        R.check(f"{label}: complete {name}: {want}", got.completion.values == want, dump(got))
    got = await client.complete(types.ResourceTemplateReference(uri="notes://priorities/{priority}"),
                                {"name": "priority", "value": ""})
    R.check(f"{label}: complete {{priority}}, '': all four, total 4",
            got.completion.values == ["low", "normal", "high", "urgent"] and got.completion.total == 4, dump(got))


# --------------------------------------------------------------------------------------
# One client: the subscription


async def wait_for_update(updates: Updates, t: float, uri: str) -> list[float]:
    deadline = time.monotonic() + UPDATE_WAIT
    while time.monotonic() < deadline and not updates.since(t, uri):
        await anyio.sleep(0.1)
    return updates.since(t, uri)


async def subscription(label: str, revision: str, client: Client, updates: Updates, w: World, slug: str) -> None:
    """Subscribe to note `slug`: quiet while unchanged, one update per change, none after
    unsubscribing; then the upstream's log of its polls."""
    uri = f"notes://notes/{slug}"
    await change_note(w, slug, "first")
    path = f"/notes/{slug}"

    async def watch(updates: Updates) -> None:
        t0 = time.monotonic()
        await anyio.sleep(QUIET)
        R.check(f"{label}: subscribed to {uri}: no notifications/resources/updated while it does not change",
                not updates.since(t0, uri), short(updates.seen))
        t1 = time.monotonic()
        await change_note(w, slug, "second")
        seen = await wait_for_update(updates, t1, uri)
        R.check(f"{label}: the upstream changed (PUT): notifications/resources/updated for {uri}",
                len(seen) >= 1, f"{short(updates.seen)} after {UPDATE_WAIT} s")
        read = one((await client.read_resource(uri)).contents)
        text = json.loads(read.text).get("text") if isinstance(read, types.TextResourceContents) else None
        R.check(f"{label}: a read after the update gives the new text", text == "second", dump(read))
        await anyio.sleep(1.5)
        R.check(f"{label}: one update for one change", len(updates.since(t1, uri)) == 1, short(updates.seen))

    if revision == NEW:
        # The listen's own events (the client's message handler sees them too: not counted twice).
        heard = Updates()
        async with client.listen(resource_subscriptions=[uri]) as sub:
            honored = list(sub.honored.resource_subscriptions or [])
            R.check(f"{label}: subscriptions/listen acknowledged resourceSubscriptions [{uri}]", honored == [uri],
                    short(honored))

            async def pump() -> None:
                async for event in sub:
                    uri_of = getattr(event, "uri", None)
                    if uri_of is not None:
                        heard.seen.append((time.monotonic(), str(uri_of)))

            async with anyio.create_task_group() as tg:
                tg.start_soon(pump)
                await watch(heard)
                tg.cancel_scope.cancel()
        stop_word = "the listen ended"
    else:
        await client.subscribe_resource(uri)
        await watch(updates)
        await client.unsubscribe_resource(uri)
        stop_word = "unsubscribe"
    t2 = time.monotonic()
    await anyio.sleep(0.5)  # a poll under way when it stopped
    polls_then = len([e for e in await upstream_log(w) if e["path"] == path and e["method"] == "GET"])
    await change_note(w, slug, "third")
    await anyio.sleep(QUIET)
    log = [e for e in await upstream_log(w) if e["path"] == path and e["method"] == "GET"]
    R.check(f"{label}: after {stop_word}, a change sends nothing and the polling stops",
            not updates.since(t2, uri) and len(log) == polls_then,
            f"updates {short(updates.seen)}; {len(log) - polls_then} GETs of {path} after")
    # What the upstream saw: the test's own read (a 200, unconditional) aside, the first poll
    # unconditional and every later one conditional; 304 while unchanged.
    polls = log
    v1 = [e for e in polls if e["if_none_match"] == f'"{slug}-v1"']
    v2 = [e for e in polls if e["if_none_match"] == f'"{slug}-v2"']
    unconditional = [e for e in polls if not e["if_none_match"]]
    ok = (bool(polls) and not polls[0]["if_none_match"] and polls[0]["status"] == 200
          and len(unconditional) <= 2  # the first poll, and the test's own read after the update
          and len(v1) >= 3 and all(e["status"] == 304 for e in v1[:-1]) and v1[-1]["status"] == 200
          and all(e["status"] == 304 for e in v2))
    R.check(f"{label}: upstream log: the first poll unconditional, every later one with If-None-Match, "
            "304 until the change, then 200 once, then 304 again", bool(ok),
            short([(e["if_none_match"], e["status"]) for e in polls], 1200))


# --------------------------------------------------------------------------------------
# 2026-07-28 on the wire


class Wire:
    """Plain 2026-07-28 JSON-RPC over HTTP (the headers and _meta of harness.Raw, with
    Mcp-Name for prompts/get and resources/read too)."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url, self.id = http, url, 0

    def request(self, method: str, params: dict[str, Any], caps: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
        self.id += 1
        params = {**params, "_meta": {
            "io.modelcontextprotocol/protocolVersion": NEW,
            "io.modelcontextprotocol/clientInfo": {"name": "restmcp-surface-wire", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": caps if caps is not None else harness.ELICIT_CAPS,
        }}
        sent = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": NEW, "Mcp-Method": method,
                **(headers or {})}
        name = {"prompts/get": "name", "resources/read": "uri", "tools/call": "name"}.get(method)
        if name:
            sent["Mcp-Name"] = params[name]
        return {"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}, sent

    async def send(self, method: str, params: dict[str, Any], headers: dict[str, str] | None = None) -> dict[str, Any]:
        body, sent = self.request(method, params, headers=headers)
        response = await self.http.post(self.url, json=body, headers=sent)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for line in response.text.splitlines():
                if line.startswith("data:"):
                    message = json.loads(line[5:])
                    if message.get("id") == body["id"]:
                        return message
        try:
            return response.json()
        except ValueError:
            return {"http_status": response.status_code, "raw": short(response.text, 600)}


async def wire(w: World) -> None:
    label = "wire 2026-07-28"
    async with httpx2.AsyncClient(timeout=STEP) as http:
        raw = Wire(http, w.url)
        uri = "notes://notes/alpha"
        public = await raw.send("resources/read", {"uri": uri})
        r = harness.result_of(public)
        R.check(f"{label}: resources/read: ttlMs 30000 (the upstream's max-age), cacheScope public",
                r.get("ttlMs") == 30000 and r.get("cacheScope") == "public" and len(r.get("contents", [])) == 1,
                short(public))
        private = await raw.send("resources/read", {"uri": uri}, headers={"X-Tenant": "t-42"})
        r = harness.result_of(private)
        reached = [e for e in await upstream_log(w) if e["tenant"] == "t-42"]
        R.check(f"{label}: resources/read with a forwarded header (X-Tenant): cacheScope private, the header "
                "reached the upstream", r.get("cacheScope") == "private" and r.get("ttlMs") == 30000
                and bool(reached), f"{short(private)}; upstream saw {short(reached)}")

        missing = await raw.send("resources/read", {"uri": "notes://nothing/here"})
        err = missing.get("error") or {}
        R.check(f"{label}: resources/read of an unknown URI: -32602 with data.uri",
                err.get("code") == INVALID_PARAMS and (err.get("data") or {}).get("uri") == "notes://nothing/here"
                and "result" not in missing, short(missing))

        asked = await raw.send("prompts/get", {"name": "review_note", "arguments": {"tone": "brief"}})
        r = harness.result_of(asked)
        requests = r.get("inputRequests") or {}
        form = next(iter(requests.values()), {}) if len(requests) == 1 else {}
        schema = (form.get("params") or {}).get("requestedSchema") or {}
        R.check(f"{label}: prompts/get without the required noteId: resultType input_required, a form asking "
                "for noteId, a requestState",
                r.get("resultType") == "input_required" and form.get("method") == "elicitation/create"
                and "noteId" in (schema.get("properties") or {}) and isinstance(r.get("requestState"), str),
                short(asked, 800))
        key = next(iter(requests), "arguments")
        answer = {"action": "accept", "content": {"noteId": "bravo"}}
        done = await raw.send("prompts/get", {"name": "review_note", "arguments": {"tone": "brief"},
                                              "inputResponses": {key: answer}, "requestState": r.get("requestState")})
        r = harness.result_of(done)
        messages = r.get("messages") or []
        embedded = (messages[-1].get("content") or {}).get("resource") or {} if messages else {}
        R.check(f"{label}: the retry with inputResponses and requestState completes, with note bravo",
                r.get("resultType", "complete") == "complete" and "brief review of note bravo" in json.dumps(messages)
                and embedded.get("uri") == "notes://notes/bravo", short(done, 800))

        await listen(label, w, http)


async def listen(label: str, w: World, http: httpx2.AsyncClient) -> None:
    """subscriptions/listen over plain HTTP: the acknowledgement, then an update on a change."""
    slug = "wire-listen"
    uri = f"notes://notes/{slug}"
    await change_note(w, slug, "first")
    raw = Wire(http, w.url)
    body, headers = raw.request("subscriptions/listen", {"notifications": {"resourceSubscriptions": [uri]}})
    seen: list[dict[str, Any]] = []
    acked = anyio.Event()
    updated = anyio.Event()

    async def read_stream() -> None:
        async with http.stream("POST", w.url, json=body, headers=headers, timeout=None) as response:
            seen.append({"http_status": response.status_code, "content_type": response.headers.get("content-type")})
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line[5:])
                seen.append(message)
                if message.get("method") == "notifications/subscriptions/acknowledged":
                    acked.set()
                if message.get("method") == "notifications/resources/updated" and \
                        (message.get("params") or {}).get("uri") == uri:
                    updated.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_stream)
        with anyio.move_on_after(STEP):
            await acked.wait()
        R.check(f"{label}: subscriptions/listen (resourceSubscriptions [{uri}]): acknowledged on its stream",
                acked.is_set(), short(seen, 800))
        await anyio.sleep(QUIET)
        R.check(f"{label}: listen: nothing while the note does not change", not updated.is_set(), short(seen, 800))
        await change_note(w, slug, "second")
        with anyio.move_on_after(UPDATE_WAIT):
            await updated.wait()
        R.check(f"{label}: listen: notifications/resources/updated after the change upstream", updated.is_set(),
                short(seen, 800))
        tg.cancel_scope.cancel()


# --------------------------------------------------------------------------------------
# TypeScript (ts_surface.mjs): its checks, one JSON line each, become lines here.

TS_TIMEOUT = 150  # seconds


def ts_suite(w: World, ts: Path) -> None:
    cmd = ["node", str(HERE / "ts_surface.mjs"), "--url", w.url, "--sse", w.sse, "--app", w.app,
           "--bin", w.bin, "--config", str(HERE / "config.toml")]
    try:
        proc = subprocess.run(cmd, cwd=ts, env=child_env({}), capture_output=True, text=True, timeout=TS_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        R.check("typescript: ts_surface.mjs ran to its end", False, f"timed out; output: {short(str(e.stdout), 1500)}")
        return
    (w.work / "ts_surface.log").write_text(proc.stdout + "\n--- stderr\n" + proc.stderr)
    checks = 0
    for line in proc.stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and "check" in item:
            checks += 1
            R.check(f"typescript {item['check']}", item.get("ok") is True, str(item.get("detail") or ""))
    R.check("typescript: ts_surface.mjs ran to its end", proc.returncode == 0 and checks > 0,
            f"exit {proc.returncode}, {checks} checks; stderr: {short(proc.stderr, 1500)}")


# --------------------------------------------------------------------------------------


async def run(w: World, ts: Path | None) -> None:
    errlog = open(w.work / "stdio-stderr.log", "w")  # noqa: SIM115 - open for the whole run
    suites = []
    for label, revision, make in makers(w, errlog):
        slug = "sub-" + "".join(c if c.isalnum() else "-" for c in label.lower())

        async def suite(label: str = label, revision: str = revision, make: Maker = make, slug: str = slug) -> None:
            asker, updates = Asker({"noteId": "charlie"}), Updates()
            async with make(asker, updates) as client:
                R.check(f"{label}: connected at {revision}", client.protocol_version == revision,
                        f"negotiated {client.protocol_version}")
                await reads(label, revision, client)
                await prompts(label, revision, client, asker)
                await completions(label, client)
                await subscription(label, revision, client, updates, w, slug)

        suites.append((label, suite))
    suites.append(("wire 2026-07-28", lambda: wire(w)))
    await harness.run_suites(suites, 90)
    errlog.close()
    if ts is not None:
        ts_suite(w, ts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", required=True, help="the restmcp binary")
    parser.add_argument("--ts", help="tests/interop/ts, with its node_modules (runs ts_surface.mjs); without it "
                                     "only the Python SDK runs")
    args = parser.parse_args()
    harness.install_signals("surface", HARD_LIMIT)
    work = Path(tempfile.mkdtemp(prefix="restmcp-surface-py-"))
    try:
        try:
            w = start(str(Path(args.bin).resolve()), work)
        except Exception as e:  # noqa: BLE001
            R.check("start the app and restmcp serve", False, harness.error_text(e))
        else:
            note(f"app {w.app}; restmcp {w.url}")
            anyio.run(run, w, Path(args.ts).resolve() if args.ts else None)
    finally:
        harness.kill_all()
        harness.save_logs(work)
        harness.finish(work, "SURFACE_TEST_KEEP")
    return harness.summary("surface")


if __name__ == "__main__":
    sys.exit(main())
