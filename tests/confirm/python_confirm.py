#!/usr/bin/env python3
"""Confirmation by a human, through the protocol, against the official MCP Python SDK.

restmcp serves tests/confirm/confirm-api.yaml as the API "shelter", whose paths are all under
httpbin's /anything/ (httpbin 0.10.4 under gunicorn: an upstream nobody here wrote, which
echoes any method back). gunicorn's access log (--access-logfile) is the witness of what did,
or did not, reach the upstream: each check uses a path of its own (/anything/pets/<check>),
and before reading the log a check sends httpbin a marker request and waits for its line, so
everything restmcp sent earlier is in the file by then.

Servers (`restmcp serve`, all on 127.0.0.1 and free ports, killed on any exit):
  A   confirm = "destructive" (deletePet and updatePet ask), an overlay with
      `getPet: {confirm: true}` (a GET that asks), a state key from RESTMCP_CONFIRM_KEY;
  A2  the same config and key on another port: a second replica;
  B   confirm = "writes" (createPet asks and shows its body), an overlay with
      `updatePet: {confirm: false}` (a PUT that does not ask), state_ttl_seconds = 2 and a key
      of its own;
  C   confirm = "destructive" with without_elicitation = "proceed" (the documented opt-out);
  D   confirm = "destructive" with `[server] sessions = false` (no Mcp-Session-Id);
and `restmcp stdio --config A` children for the stdio suites.

With the SDK's own high-level API (`mcp.Client` with an `elicitation_callback`, which at
2026-07-28 also drives the input_required retry loop by itself), over
  stdio at 2025-11-25 (mode="legacy": the initialize handshake), Streamable HTTP at 2025-11-25
  (mode="legacy"), Streamable HTTP at 2026-07-28 (mode "auto": server/discover), stdio at
  2026-07-28 (mode "auto") and the legacy HTTP+SSE transport at 2025-11-25 (/sse),
each suite checks:
  - deletePet, accepted: the callback gets one form-mode elicitation whose requestedSchema is
    the empty form and whose message names DELETE, the resolved URL with the petId, the API's
    name and the tool; the result is httpbin's echo (method DELETE, that URL) and the access
    log shows exactly one request, that DELETE;
  - deletePet declined, and cancelled: isError, the text says declined/cancelled and nothing
    sent, and the access log shows no new request;
  - the callback answering a JSON-RPC error instead of a result: the call fails, nothing sent;
  - updatePet (PUT, destructive), accepted: the message names PUT; the echo has the JSON body;
  - getPet (GET, confirm: true in the overlay), declined: asked, nothing sent;
  - createPet and listPets (not destructive) run without any elicitation;
  - a client without an elicitation callback (so no elicitation capability) gets the
    fail-closed isError for deletePet and nothing reaches httpbin, while listPets still works;
  - on 2026-07-28 over HTTP the wire (an httpx2 request hook) shows the SDK's retry carrying
    inputResponses.confirm = accept and the requestState restmcp sent.
2026-07-28 by raw JSON-RPC over HTTP (httpx2, the SDK's own HTTP client), for what no SDK will
do: the input_required result's exact shape; a retry without inputResponses (or without
requestState) gets a new input_required; a tampered requestState, one for other arguments,
one for another tool, one signed with another key (server B), an expired one (server B, after
its 2 s) and a replayed one (after accept: httpbin saw one DELETE only; after decline, replayed
as accept) are refused with JSON-RPC error -32602 and nothing is sent; five concurrent accepts
with one state send one DELETE; a state issued by A is honoured by the replica A2 (the same
state replayed at A2 after A used it is printed as a note, not checked: part 1 promises no
store shared by replicas); a client whose clientCapabilities lack elicitation gets the
fail-closed result while createPet runs for it.
Sessions off (server D): a 2025-11-25 HTTP client with elicitation is either asked (and then
the DELETE is sent) or refused with nothing sent; never sent unasked.
The body shown (server B, confirm = "writes", SDK at 2025-11-25): createPet's message shows
POST, the URL and the JSON body; with a 10 kB name the message stays under 2 kB and says it was
shortened, and the upstream still gets the whole body; listPets and updatePet (confirm: false)
do not ask.
The opt-out (server C): a client without elicitation gets deletePet sent, over the SDK at
2025-11-25 and raw at 2026-07-28.

Output: `ok N - name` / `not ok N - name` (with `#` detail lines), then `1..N` and
`confirm-python: P passed, F failed`; exit status 0 only when nothing failed. On failure (or
with CONFIRM_TEST_KEEP=1) the work directory (configs, every process's stderr) is kept and named.

Usage: python_confirm.py --bin PATH/TO/restmcp [--httpbin URL --access-log FILE]
(run by tests/confirm/run.sh in a venv with mcp==2.3.0, httpbin==0.10.4 and gunicorn==27.0.1;
without --httpbin it starts its own httpbin under gunicorn with the venv's Python).
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
import harness  # noqa: E402 - tests/lib/harness.py: results, processes, httpbin and its access log
from harness import (  # noqa: E402
    CHILDREN, ELICIT_CAPS, NEW, OLD, STEP, AccessLog, Child, R, dump, error_text, finish, free_port, install_signals,
    kill_all, result_of, run_suites, short, start_httpbin, summary,
)

SUITE_TIMEOUT = 120.0  # seconds: one suite's connect, calls and close
HARD_LIMIT = 420  # seconds: the process kills itself (and its children) past this
API = "shelter"  # the API's name in restmcp's config, which the confirmation must show
EMPTY_FORM = {"type": "object", "properties": {}}
B_TTL = 2  # server B's state_ttl_seconds
ACCESS_FORMAT = '%(h)s %(t)s "%(r)s" %(s)s %(b)s'

# --------------------------------------------------------------------------------------
# Processes and httpbin's access log: what reached the upstream (tests/lib/harness.py)


def child_env(extra: dict[str, str]) -> dict[str, str]:
    return harness.child_env(extra, prefixes=("CONFIRM_TEST_",))


REQUEST_LINE = re.compile(r'"([A-Z]+) (\S+) HTTP/[\d.]+"')


def request_of(line: str) -> tuple[str, str] | None:
    """(method, target) of an access log line."""
    m = REQUEST_LINE.search(line)
    return (m.group(1), m.group(2)) if m else None


def fmt(reqs: list[tuple[str, str]]) -> str:
    return short(", ".join(f"{m} {t}" for m, t in reqs) or "none", 600)


# --------------------------------------------------------------------------------------
# The world


class World:
    work: Path
    bin: str
    httpbin: str
    log: AccessLog
    a: str  # MCP URLs
    a2: str
    b: str
    c: str
    d: str
    a_config: Path
    key_a: str
    stderr_files: list[tuple[Child, str]]


def pet_url(w: World, pid: str | None = None) -> str:
    return f"{w.httpbin}/anything/pets" + (f"/{pid}" if pid is not None else "")


def write_config(w: World, name: str, port: int, confirm: str, extra_server: str, overlay: str | None,
                 server: str = "") -> Path:
    overlays = ""
    if overlay is not None:
        (w.work / f"{name}-overlay.yaml").write_text(overlay)
        overlays = f'overlays = ["{name}-overlay.yaml"]\n'
    path = w.work / f"{name}.toml"
    path.write_text(f"""[server]
listen = "127.0.0.1:{port}"
{server}[server.confirm]
{extra_server}
[apis.{API}]
spec = "confirm-api.yaml"
base_url = "{w.httpbin}"
confirm = "{confirm}"
{overlays}""")
    return path


def start_server(w: World, name: str, config: Path, env: dict[str, str]) -> Child:
    child = Child(f"restmcp serve ({name})", [w.bin, "serve", "--config", str(config)], child_env(env), w.work)
    CHILDREN.append(child)
    w.stderr_files.append((child, f"restmcp-{name}.stderr"))
    return child


def start(args: argparse.Namespace, work: Path) -> World:
    w = World()
    w.work = work
    w.bin = args.bin
    w.stderr_files = []
    if args.httpbin:
        w.httpbin = args.httpbin.rstrip("/")
        w.log = AccessLog(Path(args.access_log).resolve(), w.httpbin, "confirm", request_of)
    else:
        w.httpbin, log = start_httpbin(work, ACCESS_FORMAT, threads=4)
        w.log = AccessLog(log, w.httpbin, "confirm", request_of)
    shutil.copy(HERE / "confirm-api.yaml", work / "confirm-api.yaml")

    w.key_a = secrets.token_urlsafe(32)
    key_b = secrets.token_urlsafe(32)
    overlay_a = "tools:\n  getPet:\n    confirm: true\n"
    keyed = 'state_key_env = "RESTMCP_CONFIRM_KEY"\nstate_ttl_seconds = 300\nwithout_elicitation = "refuse"'
    ports = {n: free_port() for n in ("a", "a2", "b", "c", "d")}
    w.a_config = write_config(w, "a", ports["a"], "destructive", keyed, overlay_a)
    a2 = write_config(w, "a2", ports["a2"], "destructive", keyed, overlay_a)
    b = write_config(w, "b", ports["b"], "writes",
                     f'state_key_env = "RESTMCP_CONFIRM_KEY"\nstate_ttl_seconds = {B_TTL}',
                     "tools:\n  updatePet:\n    confirm: false\n")
    c = write_config(w, "c", ports["c"], "destructive", 'without_elicitation = "proceed"', None)
    d = write_config(w, "d", ports["d"], "destructive", "", None, server="sessions = false\n")
    children = [
        start_server(w, "a", w.a_config, {"RESTMCP_CONFIRM_KEY": w.key_a}),
        start_server(w, "a2", a2, {"RESTMCP_CONFIRM_KEY": w.key_a}),
        start_server(w, "b", b, {"RESTMCP_CONFIRM_KEY": key_b}),
        start_server(w, "c", c, {}),
        start_server(w, "d", d, {}),
    ]
    for child in children:
        child.wait_for(r"MCP over Streamable HTTP at http://", "stderr")
    w.a, w.a2, w.b, w.c, w.d = (f"http://127.0.0.1:{ports[n]}/mcp" for n in ("a", "a2", "b", "c", "d"))
    return w


# --------------------------------------------------------------------------------------
# SDK helpers


class Asker:
    """The client's elicitation callback: records every request and answers as told."""

    def __init__(self, answer: str = "accept") -> None:
        self.answer = answer
        self.seen: list[types.ElicitRequestParams] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        self.seen.append(params)
        if self.answer == "accept":
            return types.ElicitResult(action="accept", content={})
        if self.answer == "error":
            return types.ErrorData(code=types.INTERNAL_ERROR, message="the confirmation dialog could not be shown")
        return types.ElicitResult(action=self.answer)  # type: ignore[arg-type]


class Wire:
    """An httpx2 request hook: the JSON-RPC bodies the SDK POSTs."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def hook(self, request: httpx2.Request) -> None:
        if request.method == "POST":
            try:
                body = json.loads(request.content)
            except (ValueError, httpx2.RequestNotRead):
                return
            if isinstance(body, dict):
                self.bodies.append(body)


def result_text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def echo_of(result: types.CallToolResult) -> dict[str, Any] | None:
    """httpbin's echo: the structured content, else the JSON of the text."""
    data = result.structured_content
    if isinstance(data, dict) and "result" in data and "method" not in data:
        data = data["result"]
    if isinstance(data, dict) and "method" in data:
        return data
    try:
        data = json.loads(result_text(result))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


DECLINED = re.compile(r"declin|cancel|refus|did not (accept|confirm)|not confirmed", re.I)
NOTHING_SENT = re.compile(r"nothing (was |is |has been )?sent|(was|is|has) not (been )?sent|not sent|never sent|nothing (was |is )?(reached|called|made)", re.I)
CANNOT = re.compile(r"cannot|can't|can not|unable|not able|does not (support|declare|offer)|doesn't support|no elicitation|without elicitation|lacks", re.I)
SHORTENED = re.compile(r"shorten|truncat|first [\d,]+ (characters?|chars?|bytes?)?\s*(of [\d,]+ )?(are |were )?shown|omitted|elided|\bcut\b|…|\.\.\.", re.I)


def form_ok(params: Any) -> tuple[bool, str]:
    """A form-mode elicitation with the empty form."""
    mode = getattr(params, "mode", None)
    schema = getattr(params, "requested_schema", None)
    return mode == "form" and schema == EMPTY_FORM, f"mode {mode!r}, requestedSchema {short(schema, 200)}"


def names_all(message: str, *parts: str) -> tuple[bool, str]:
    missing = [p for p in parts if p not in message]
    return not missing, f"missing {missing} in message {short(message, 700)!r}"


# --------------------------------------------------------------------------------------
# The SDK suites: the same checks on each transport and revision


async def sdk_suite(w: World, label: str, make: Callable[[Asker | None, Wire | None], Client], version: str,
                    slug: str, wire_checks: bool) -> None:
    asker = Asker()
    wire = Wire() if wire_checks else None
    async with make(asker, wire) as client:
        R.check(f"{label}: the SDK connected at {version}", client.protocol_version == version,
                f"protocol_version {client.protocol_version!r}")
        tools = {t.name: t for t in (await client.list_tools()).tools}
        hints = {n: bool(t.annotations and t.annotations.destructive_hint) for n, t in tools.items()}
        R.check(f"{label}: tools/list has deletePet and updatePet destructive, createPet and listPets not",
                hints.get("deletePet") is True and hints.get("updatePet") is True
                and hints.get("createPet") is False and hints.get("listPets") is False, short(hints))

        # deletePet, accepted.
        pid = f"{slug}-accept"
        url = pet_url(w, pid)
        mark = await w.log.mark()
        asker.answer, asker.seen = "accept", []
        wire_mark = len(wire.bodies) if wire else 0
        result = await client.call_tool("deletePet", {"petId": pid})
        sent = await w.log.since(mark)
        asked = list(asker.seen)
        R.check(f"{label}: accepted deletePet: the callback got one elicitation", len(asked) == 1, f"{len(asked)} elicitation(s)")
        if asked:
            ok, why = form_ok(asked[0])
            R.check(f"{label}: accepted deletePet: form mode, requestedSchema the empty form", ok, why)
            print(f"# {label}: the elicitation's message: {json.dumps(asked[0].message)}", flush=True)
            ok, why = names_all(asked[0].message, "DELETE", url, API, "deletePet")
            R.check(f"{label}: accepted deletePet: the message names DELETE, {url}, API {API!r} and the tool", ok, why)
        echo = echo_of(result)
        R.check(f"{label}: accepted deletePet: the result is httpbin's echo of DELETE {url}",
                result.is_error is not True and echo is not None and echo.get("method") == "DELETE" and echo.get("url") == url,
                dump(result))
        R.check(f"{label}: accepted deletePet: httpbin got exactly one request, that DELETE",
                sent == [("DELETE", f"/anything/pets/{pid}")], fmt(sent))
        if wire is not None:
            calls = [b for b in wire.bodies[wire_mark:] if b.get("method") == "tools/call"]
            first = calls[0]["params"] if calls else {}
            retry = calls[1]["params"] if len(calls) > 1 else {}
            R.check(f"{label}: on the wire, the SDK's first tools/call had no answer, its retry carried "
                    "inputResponses.confirm accept and a requestState",
                    len(calls) == 2 and "inputResponses" not in first and "requestState" not in first
                    and (retry.get("inputResponses") or {}).get("confirm", {}).get("action") == "accept"
                    and isinstance(retry.get("requestState"), str) and bool(retry.get("requestState"))
                    and retry.get("arguments") == {"petId": pid} and retry.get("name") == "deletePet",
                    short([c.get("params") for c in calls], 900))

        # deletePet declined, then cancelled.
        for answer in ("decline", "cancel"):
            pid = f"{slug}-{answer}"
            mark = await w.log.mark()
            asker.answer, asker.seen = answer, []
            result = await client.call_tool("deletePet", {"petId": pid})
            sent = await w.log.since(mark)
            text = result_text(result)
            R.check(f"{label}: deletePet answered {answer}: asked once, isError", len(asker.seen) == 1 and result.is_error is True,
                    f"{len(asker.seen)} elicitation(s); {dump(result)}")
            R.check(f"{label}: deletePet answered {answer}: the text says {'declined' if answer == 'decline' else 'cancelled'} and nothing sent",
                    bool(DECLINED.search(text)) and bool(NOTHING_SENT.search(text)), short(text))
            R.check(f"{label}: deletePet answered {answer}: httpbin got nothing", sent == [], fmt(sent))

        # The callback fails (answers a JSON-RPC error instead of a result): nothing is sent.
        # At 2026-07-28 the SDK then gives up by itself (MCPError) without retrying.
        pid = f"{slug}-error"
        mark = await w.log.mark()
        asker.answer, asker.seen = "error", []
        try:
            outcome = await client.call_tool("deletePet", {"petId": pid})
            failed = outcome.is_error is True
            shown = dump(outcome)
        except MCPError as e:
            failed, shown = True, f"MCPError {e.error.code}: {e.error.message}"
        sent = await w.log.since(mark)
        R.check(f"{label}: the callback answers an error instead: asked once, the call fails, httpbin got nothing",
                len(asker.seen) == 1 and failed and sent == [], f"{len(asker.seen)} elicitation(s); {shown}; httpbin: {fmt(sent)}")

        # updatePet (PUT, destructive), accepted: the body goes through.
        pid = f"{slug}-put"
        mark = await w.log.mark()
        asker.answer, asker.seen = "accept", []
        result = await client.call_tool("updatePet", {"petId": pid, "name": "Rex", "tag": "dog"})
        sent = await w.log.since(mark)
        echo = echo_of(result)
        message = asker.seen[0].message if asker.seen else ""
        ok, why = names_all(message, "PUT", pet_url(w, pid), API)
        R.check(f"{label}: updatePet (PUT) asked once, the message names PUT, the URL and the API",
                len(asker.seen) == 1 and ok, f"{len(asker.seen)} elicitation(s); {why}")
        R.check(f"{label}: updatePet accepted: httpbin echoed PUT with the JSON body, one request",
                echo is not None and echo.get("method") == "PUT" and echo.get("json") == {"name": "Rex", "tag": "dog"}
                and sent == [("PUT", f"/anything/pets/{pid}")], f"{dump(result)}; httpbin: {fmt(sent)}")

        # getPet: a GET, but the overlay says confirm: true.
        pid = f"{slug}-get"
        mark = await w.log.mark()
        asker.answer, asker.seen = "decline", []
        result = await client.call_tool("getPet", {"petId": pid})
        sent = await w.log.since(mark)
        R.check(f"{label}: getPet (GET, overlay confirm: true) asks; declined, isError and httpbin got nothing",
                len(asker.seen) == 1 and result.is_error is True and sent == [],
                f"{len(asker.seen)} elicitation(s); {dump(result)}; httpbin: {fmt(sent)}")

        # createPet and listPets: not destructive, no question.
        mark = await w.log.mark()
        asker.answer, asker.seen = "decline", []  # were it asked, the call would fail
        body = {"name": f"{slug}-pet", "tag": "cat"}
        result = await client.call_tool("createPet", body)
        listed = await client.call_tool("listPets", {})
        sent = await w.log.since(mark)
        echo = echo_of(result)
        R.check(f"{label}: createPet and listPets ran without any elicitation", asker.seen == [], f"{len(asker.seen)} elicitation(s)")
        R.check(f"{label}: createPet: httpbin echoed POST with the JSON body; listPets is no error",
                result.is_error is not True and echo is not None and echo.get("method") == "POST" and echo.get("json") == body
                and listed.is_error is not True, dump(result))
        R.check(f"{label}: createPet and listPets: httpbin got one POST and one GET",
                sorted(sent) == [("GET", "/anything/pets"), ("POST", "/anything/pets")], fmt(sent))

    # A client without an elicitation callback: no elicitation capability, so fail closed.
    async with make(None, None) as client:
        pid = f"{slug}-nocap"
        mark = await w.log.mark()
        result = await client.call_tool("deletePet", {"petId": pid})
        listed = await client.call_tool("listPets", {})
        sent = await w.log.since(mark)
        text = result_text(result)
        R.check(f"{label}: no elicitation capability: deletePet is an isError result saying it needs a confirmation "
                "this client cannot give",
                result.is_error is True and "confirm" in text.lower() and bool(CANNOT.search(text)), dump(result))
        R.check(f"{label}: no elicitation capability: the DELETE never reached httpbin (listPets did)",
                sent == [("GET", "/anything/pets")] and listed.is_error is not True, fmt(sent))


def sse_maker(url: str) -> Callable[[Asker | None, Wire | None], Client]:
    def make(asker: Asker | None, _wire: Wire | None) -> Client:
        return Client(sse_client(url, timeout=STEP), mode="legacy", elicitation_callback=asker, read_timeout_seconds=STEP)

    return make


def stdio_maker(w: World, mode: str, errlog: Any) -> Callable[[Asker | None, Wire | None], Client]:
    params = StdioServerParameters(command=w.bin, args=["stdio", "--config", str(w.a_config)],
                                   env={"RESTMCP_CONFIRM_KEY": w.key_a}, cwd=str(w.work))

    def make(asker: Asker | None, _wire: Wire | None) -> Client:
        return Client(stdio_client(params, errlog=errlog), mode=mode, elicitation_callback=asker, read_timeout_seconds=STEP)

    return make


def http_maker(url: str, mode: str) -> Callable[[Asker | None, Wire | None], Client]:
    def make(asker: Asker | None, wire: Wire | None) -> Client:
        if wire is None:
            return Client(url, mode=mode, elicitation_callback=asker, read_timeout_seconds=STEP)
        http = httpx2.AsyncClient(timeout=STEP, event_hooks={"request": [wire.hook]})
        return Client(streamable_http_client(url, http_client=http), mode=mode, elicitation_callback=asker,
                      read_timeout_seconds=STEP)

    return make


# --------------------------------------------------------------------------------------
# 2026-07-28 by raw JSON-RPC: what no SDK will do (tamper, replay, other arguments)


class Raw(harness.Raw):
    client_name = "restmcp-confirm-raw"


def is_input_required(message: dict[str, Any]) -> bool:
    r = result_of(message)
    return r.get("resultType") == "input_required" and isinstance(r.get("requestState"), str) and bool(r.get("requestState"))


def is_invalid_params(message: dict[str, Any]) -> bool:
    err = message.get("error")
    return "result" not in message and isinstance(err, dict) and err.get("code") == -32602


def raw_text(message: dict[str, Any]) -> str:
    return "\n".join(c.get("text", "") for c in result_of(message).get("content") or [] if isinstance(c, dict))


def raw_echo(message: dict[str, Any]) -> dict[str, Any] | None:
    data = result_of(message).get("structuredContent")
    if isinstance(data, dict) and "method" in data:
        return data
    try:
        data = json.loads(raw_text(message))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def tamper(state: str) -> str:
    """The state with one character in its middle changed (to another of the same alphabet)."""
    if not state:
        return "tampered"
    i = len(state) // 2
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    c = state[i]
    replacement = alphabet[(alphabet.index(c) + 7) % len(alphabet)] if c in alphabet else "A"
    return state[:i] + replacement + state[i + 1:]


async def raw_suite(w: World) -> None:
    async with httpx2.AsyncClient(timeout=STEP) as http:
        a = Raw(http, w.a)
        found = await a.send("server/discover", {}, ELICIT_CAPS)
        R.check("raw 2026-07-28: server/discover lists 2026-07-28",
                NEW in (result_of(found).get("supportedVersions") or []), short(found))

        # The input_required result's shape.
        pid = "raw-accept"
        url = pet_url(w, pid)
        mark = await w.log.mark()
        first = await a.call("deletePet", {"petId": pid})
        r = result_of(first)
        confirm = (r.get("inputRequests") or {}).get("confirm") or {}
        params = confirm.get("params") or {}
        R.check("raw: deletePet's first answer is resultType input_required with a requestState string",
                is_input_required(first), short(first, 900))
        R.check("raw: inputRequests has one key, confirm: method elicitation/create, form mode, the empty form",
                list((r.get("inputRequests") or {}).keys()) == ["confirm"] and confirm.get("method") == "elicitation/create"
                and params.get("mode") == "form" and params.get("requestedSchema") == EMPTY_FORM,
                short(r.get("inputRequests"), 900))
        ok, why = names_all(str(params.get("message", "")), "DELETE", url, API, "deletePet")
        R.check("raw: the form's message names DELETE, the resolved URL, the API and the tool", ok, why)
        R.check("raw: an input_required result is not a tool result (no content, no isError)",
                "content" not in r and "isError" not in r, short(sorted(r.keys())))
        state = r.get("requestState", "")

        # Not answered yet: a new question, nothing sent.
        again = await a.call("deletePet", {"petId": pid}, state=state)
        no_state = await a.call("deletePet", {"petId": pid}, answer="accept")
        R.check("raw: a retry with the requestState but no inputResponses gets a new input_required",
                is_input_required(again), short(again, 600))
        R.check("raw: a retry with inputResponses.confirm accept but no requestState gets a new input_required",
                is_input_required(no_state), short(no_state, 600))

        # Tampered.
        bad = tamper(state)
        tampered = await a.call("deletePet", {"petId": pid}, answer="accept", state=bad)
        R.check("raw: a tampered requestState (one character changed) with accept is refused with -32602",
                bad != state and is_invalid_params(tampered), short(tampered, 600))
        sent = await w.log.since(mark)
        R.check("raw: nothing reached httpbin before the real accept", sent == [], fmt(sent))

        # The accept, then its replay.
        mark = await w.log.mark()
        accepted = await a.call("deletePet", {"petId": pid}, answer="accept", state=state)
        echo = raw_echo(accepted)
        R.check("raw: the accepted retry is httpbin's echo of the DELETE",
                result_of(accepted).get("isError") is not True and echo is not None
                and echo.get("method") == "DELETE" and echo.get("url") == url, short(accepted, 800))
        replay = await a.call("deletePet", {"petId": pid}, answer="accept", state=state)
        R.check("raw: replaying the accepted (requestState, inputResponses) is refused with -32602",
                is_invalid_params(replay), short(replay, 600))
        sent = await w.log.since(mark)
        R.check("raw: httpbin saw one DELETE only", sent == [("DELETE", f"/anything/pets/{pid}")], fmt(sent))
        # The same replay at replica A2 (same key). Whether a replica knows what another one has
        # used depends on a shared store, which part 1 does not promise: noted, not checked.
        a2 = Raw(http, w.a2)
        mark = await w.log.mark()
        replay2 = await a2.call("deletePet", {"petId": pid}, answer="accept", state=state)
        sent = await w.log.since(mark)
        print(f"# note: the accepted state replayed at replica A2: "
              f"{'refused (-32602)' if is_invalid_params(replay2) else 'NOT refused: ' + short(replay2, 200)}; "
              f"httpbin got {fmt(sent)}", flush=True)

        # Other arguments, another tool, another key.
        mark = await w.log.mark()
        s1 = result_of(await a.call("deletePet", {"petId": "raw-args-1"})).get("requestState", "")
        other_args = await a.call("deletePet", {"petId": "raw-args-2"}, answer="accept", state=s1)
        R.check("raw: a requestState replayed with other arguments is refused with -32602",
                bool(s1) and is_invalid_params(other_args), short(other_args, 600))
        s2 = result_of(await a.call("deletePet", {"petId": "raw-tool"})).get("requestState", "")
        other_tool = await a.call("updatePet", {"petId": "raw-tool", "name": "Rex"}, answer="accept", state=s2)
        R.check("raw: a deletePet requestState used for updatePet is refused with -32602",
                bool(s2) and is_invalid_params(other_tool), short(other_tool, 600))
        b = Raw(http, w.b)
        s3 = result_of(await a.call("deletePet", {"petId": "raw-key"})).get("requestState", "")
        other_key = await b.call("deletePet", {"petId": "raw-key"}, answer="accept", state=s3)
        R.check("raw: a requestState signed by server A is refused by server B, which has another key (-32602)",
                bool(s3) and is_invalid_params(other_key), short(other_key, 600))
        sent = await w.log.since(mark)
        R.check("raw: none of those reached httpbin", sent == [], fmt(sent))

        # Decline, cancel; replaying a declined state as accept.
        mark = await w.log.mark()
        s4 = result_of(await a.call("deletePet", {"petId": "raw-decline"})).get("requestState", "")
        declined = await a.call("deletePet", {"petId": "raw-decline"}, answer="decline", state=s4)
        text = raw_text(declined)
        R.check("raw: decline gives an isError result saying declined and nothing sent",
                result_of(declined).get("isError") is True and bool(DECLINED.search(text)) and bool(NOTHING_SENT.search(text)),
                short(declined, 600))
        flipped = await a.call("deletePet", {"petId": "raw-decline"}, answer="accept", state=s4)
        R.check("raw: the declined requestState replayed with accept is refused with -32602",
                is_invalid_params(flipped), short(flipped, 600))
        s5 = result_of(await a.call("deletePet", {"petId": "raw-cancel"})).get("requestState", "")
        cancelled = await a.call("deletePet", {"petId": "raw-cancel"}, answer="cancel", state=s5)
        R.check("raw: cancel gives an isError result, nothing sent",
                result_of(cancelled).get("isError") is True and bool(NOTHING_SENT.search(raw_text(cancelled))),
                short(cancelled, 600))
        sent = await w.log.since(mark)
        R.check("raw: nothing declined or cancelled reached httpbin", sent == [], fmt(sent))

        # The same accepting answer five times at once: one may go through, no more.
        mark = await w.log.mark()
        s8 = result_of(await a.call("deletePet", {"petId": "raw-race"})).get("requestState", "")
        answers: list[dict[str, Any]] = []

        async def one() -> None:
            answers.append(await a.call("deletePet", {"petId": "raw-race"}, answer="accept", state=s8))

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(one)
        sent = await w.log.since(mark)
        done = [m for m in answers if (raw_echo(m) or {}).get("method") == "DELETE"]
        refused = [m for m in answers if is_invalid_params(m)]
        R.check("raw: five concurrent accepts with one requestState: one result, four -32602, one DELETE at httpbin",
                bool(s8) and len(done) == 1 and len(refused) == 4 and sent == [("DELETE", "/anything/pets/raw-race")],
                f"{len(done)} result(s), {len(refused)} refusal(s), others {short([m for m in answers if m not in done and m not in refused], 400)}; "
                f"httpbin: {fmt(sent)}")

        # Answers that are not an elicitation result ("Accept", no action, a bare string, another
        # key): whatever restmcp answers (a new question or -32602), nothing may be sent.
        mark = await w.log.mark()
        s9 = result_of(await a.call("deletePet", {"petId": "raw-odd"})).get("requestState", "")
        odd = []
        for responses in ({"confirm": {"action": "Accept"}}, {"confirm": {}}, {"confirm": "accept"},
                          {"confirm": {"action": "yes"}}, {"other": {"action": "accept"}}):
            got = await a.send("tools/call", {"name": "deletePet", "arguments": {"petId": "raw-odd"},
                                              "inputResponses": responses, "requestState": s9}, ELICIT_CAPS)
            if not (is_invalid_params(got) or is_input_required(got)):
                odd.append((responses, short(got, 300)))
        sent = await w.log.since(mark)
        R.check("raw: answers that are not an accepting elicitation result get -32602 or a new question; nothing sent",
                bool(s9) and not odd and sent == [], f"{short(odd, 800)}; httpbin: {fmt(sent)}")

        # Across replicas: a state from A accepted at A2 (same key).
        mark = await w.log.mark()
        s6 = result_of(await a.call("deletePet", {"petId": "raw-replica"})).get("requestState", "")
        at_a2 = await a2.call("deletePet", {"petId": "raw-replica"}, answer="accept", state=s6)
        echo = raw_echo(at_a2)
        sent = await w.log.since(mark)
        R.check("raw: a requestState from replica A is honoured by replica A2 (shared state key); one DELETE",
                bool(s6) and echo is not None and echo.get("method") == "DELETE"
                and sent == [("DELETE", "/anything/pets/raw-replica")], f"{short(at_a2, 600)}; httpbin: {fmt(sent)}")

        # No elicitation capability: fail closed; a tool that needs no confirmation still runs.
        mark = await w.log.mark()
        nocap = await a.call("deletePet", {"petId": "raw-nocap"}, caps={})
        text = raw_text(nocap)
        R.check("raw: clientCapabilities without elicitation: deletePet gets the fail-closed isError (no input_required)",
                result_of(nocap).get("isError") is True and "confirm" in text.lower() and bool(CANNOT.search(text))
                and not is_input_required(nocap), short(nocap, 600))
        created = await a.call("createPet", {"name": "raw-nocap"}, caps={})
        sent = await w.log.since(mark)
        R.check("raw: without elicitation createPet still runs; httpbin got that POST and no DELETE",
                (raw_echo(created) or {}).get("method") == "POST" and sent == [("POST", "/anything/pets")],
                f"{short(created, 400)}; httpbin: {fmt(sent)}")

        # Expired (server B: state_ttl_seconds = 2).
        mark = await w.log.mark()
        s7 = result_of(await b.call("deletePet", {"petId": "raw-expired"})).get("requestState", "")
        await anyio.sleep(B_TTL + 1.5)
        expired = await b.call("deletePet", {"petId": "raw-expired"}, answer="accept", state=s7)
        sent = await w.log.since(mark)
        R.check(f"raw: a requestState accepted after its {B_TTL} s are over is refused with -32602; nothing sent",
                bool(s7) and is_invalid_params(expired) and sent == [], f"{short(expired, 600)}; httpbin: {fmt(sent)}")


# --------------------------------------------------------------------------------------
# The body shown (confirm = "writes") and the opt-out (without_elicitation = "proceed")


async def body_suite(w: World) -> None:
    asker = Asker()
    async with Client(w.b, mode="legacy", elicitation_callback=asker, read_timeout_seconds=STEP) as client:
        R.check(f"writes: the SDK connected at {OLD}", client.protocol_version == OLD, client.protocol_version)
        mark = await w.log.mark()
        asker.seen = []
        listed = await client.call_tool("listPets", {})
        put = await client.call_tool("updatePet", {"petId": "writes-put", "name": "Rex"})
        sent = await w.log.since(mark)
        R.check("writes: listPets (read-only) and updatePet (overlay confirm: false) ran without elicitation",
                asker.seen == [] and listed.is_error is not True and put.is_error is not True
                and sorted(sent) == [("GET", "/anything/pets"), ("PUT", "/anything/pets/writes-put")],
                f"{len(asker.seen)} elicitation(s); httpbin: {fmt(sent)}")

        body = {"name": "Rex", "tag": "dog"}
        mark = await w.log.mark()
        asker.answer, asker.seen = "accept", []
        result = await client.call_tool("createPet", body)
        sent = await w.log.since(mark)
        message = asker.seen[0].message if asker.seen else ""
        ok, why = names_all(message, "POST", pet_url(w), API, "createPet", "Rex", "tag", "dog")
        R.check("writes: createPet asks once; the message shows POST, the URL, the API and the JSON body",
                len(asker.seen) == 1 and ok, f"{len(asker.seen)} elicitation(s); {why}")
        R.check("writes: accepted, httpbin echoed the POST with that body, one request",
                (echo_of(result) or {}).get("json") == body and sent == [("POST", "/anything/pets")],
                f"{dump(result)}; httpbin: {fmt(sent)}")

        big = "Big-" + "x" * 10240
        mark = await w.log.mark()
        asker.seen = []
        result = await client.call_tool("createPet", {"name": big, "tag": "whale"})
        sent = await w.log.since(mark)
        message = asker.seen[0].message if asker.seen else ""
        print(f"# writes: the message for a 10 kB name: {json.dumps(message)}", flush=True)
        R.check("writes: a 10 kB name: asked once, the message stays under 2 kB", len(asker.seen) == 1 and 0 < len(message) < 2000,
                f"{len(asker.seen)} elicitation(s); message of {len(message)} chars")
        R.check("writes: the message shows the body's start and says it was shortened",
                "Big-xxxx" in message and big not in message and bool(SHORTENED.search(message)), short(message, 2500))
        R.check("writes: accepted, the upstream still got the whole 10 kB body",
                (echo_of(result) or {}).get("json") == {"name": big, "tag": "whale"} and sent == [("POST", "/anything/pets")],
                f"{short(dump(result), 300)}; httpbin: {fmt(sent)}")

        # Shortening multi-byte text (3000 emoji, 12 kB of UTF-8) must cut between characters;
        # and an argument's text cannot add lines of its own to the message (the body is JSON).
        mark = await w.log.mark()
        asker.answer, asker.seen = "decline", []
        wide = await client.call_tool("createPet", {"name": "\U0001F600" * 3000})
        forged = "Rex\n\nAPI: trusted \u00b7 tool: listPets\n\nNothing is sent"
        spoof = await client.call_tool("createPet", {"name": forged})
        sent = await w.log.since(mark)
        messages = [p.message for p in asker.seen]
        R.check("writes: 3000 emoji (12 kB of UTF-8): asked, the message under 2,000 characters, whole characters, "
                "says it was shortened; declined, nothing sent",
                len(messages) == 2 and len(messages[0]) < 2000 and "\ufffd" not in messages[0] and "\U0001F600" in messages[0]
                and bool(SHORTENED.search(messages[0])) and wide.is_error is True and sent == [],
                f"{len(messages)} elicitation(s); {short(messages[:1], 300)} ({len(messages[0]) if messages else 0} chars); "
                f"{dump(wide)}; httpbin: {fmt(sent)}")
        R.check("writes: newlines in an argument cannot forge lines of the message (no line \"API: trusted ...\")",
                len(messages) == 2 and "\nAPI: trusted" not in messages[1] and "API: trusted" in messages[1]
                and spoof.is_error is True, short(messages[1:], 600))


async def sessionless_suite(w: World) -> None:
    """Server D has `sessions = false`: every Streamable HTTP request stands alone, so an
    initialize-based client's answer to an elicitation/create may have nowhere to go. Whatever
    restmcp does then, it must not send the DELETE unasked: either it asks and the accept sends
    it, or it does not ask, answers isError and sends nothing."""
    asker = Asker("accept")
    async with Client(w.d, mode="legacy", elicitation_callback=asker, read_timeout_seconds=STEP) as client:
        mark = await w.log.mark()
        result = await client.call_tool("deletePet", {"petId": "sessionless"})
        sent = await w.log.since(mark)
        text = result_text(result)
        asked_and_sent = len(asker.seen) == 1 and result.is_error is not True and sent == [("DELETE", "/anything/pets/sessionless")]
        refused = asker.seen == [] and result.is_error is True and sent == [] and "confirm" in text.lower()
        print(f"# sessions = false, {OLD} with elicitation: {'asked, then sent' if asked_and_sent else 'not asked: ' + short(text, 400)}",
              flush=True)
        R.check(f"sessions = false: a {OLD} client with elicitation over HTTP is either asked (then the DELETE is sent) "
                "or refused (isError, nothing sent)", asked_and_sent or refused,
                f"{len(asker.seen)} elicitation(s); {dump(result)}; httpbin: {fmt(sent)}")


async def proceed_suite(w: World) -> None:
    async with Client(w.c, mode="legacy", read_timeout_seconds=STEP) as client:
        mark = await w.log.mark()
        result = await client.call_tool("deletePet", {"petId": "proceed-sdk"})
        sent = await w.log.since(mark)
        R.check(f"proceed: SDK at {OLD} without elicitation: deletePet is sent (without_elicitation = \"proceed\")",
                result.is_error is not True and (echo_of(result) or {}).get("method") == "DELETE"
                and sent == [("DELETE", "/anything/pets/proceed-sdk")], f"{dump(result)}; httpbin: {fmt(sent)}")
    async with httpx2.AsyncClient(timeout=STEP) as http:
        mark = await w.log.mark()
        message = await Raw(http, w.c).call("deletePet", {"petId": "proceed-raw"}, caps={})
        sent = await w.log.since(mark)
        R.check("proceed: raw 2026-07-28 without elicitation: deletePet is sent",
                (raw_echo(message) or {}).get("method") == "DELETE" and sent == [("DELETE", "/anything/pets/proceed-raw")],
                f"{short(message, 600)}; httpbin: {fmt(sent)}")


# --------------------------------------------------------------------------------------


async def run(w: World, stdio_log: Any) -> None:
    suites: list[tuple[str, Callable[[], Any]]] = [
        (f"stdio {OLD}", lambda: sdk_suite(w, f"stdio {OLD}", stdio_maker(w, "legacy", stdio_log), OLD, "stdio25", False)),
        (f"http {OLD}", lambda: sdk_suite(w, f"http {OLD}", http_maker(w.a, "legacy"), OLD, "http25", False)),
        (f"http {NEW}", lambda: sdk_suite(w, f"http {NEW}", http_maker(w.a, "auto"), NEW, "http26", True)),
        (f"stdio {NEW}", lambda: sdk_suite(w, f"stdio {NEW}", stdio_maker(w, "auto", stdio_log), NEW, "stdio26", False)),
        (f"legacy SSE {OLD}", lambda: sdk_suite(w, f"legacy SSE {OLD}", sse_maker(w.a.removesuffix("/mcp") + "/sse"), OLD, "sse25", False)),
        ("sessions = false", lambda: sessionless_suite(w)),
        ("raw 2026-07-28", lambda: raw_suite(w)),
        ("writes", lambda: body_suite(w)),
        ("proceed", lambda: proceed_suite(w)),
    ]
    await run_suites(suites, SUITE_TIMEOUT)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="the restmcp binary")
    parser.add_argument("--httpbin", help="a running httpbin's base URL (else one is started here)")
    parser.add_argument("--access-log", help="that httpbin's gunicorn --access-logfile (with --httpbin)")
    args = parser.parse_args()
    args.bin = str(Path(args.bin).resolve())
    if bool(args.httpbin) != bool(args.access_log):
        parser.error("--httpbin and --access-log go together")

    install_signals("confirm-python", HARD_LIMIT)

    work = Path(tempfile.mkdtemp(prefix="restmcp-confirm-py-"))
    w: World | None = None
    stdio_log_path = work / "restmcp-stdio.stderr"
    try:
        with open(stdio_log_path, "w", encoding="utf-8") as stdio_log:
            try:
                w = start(args, work)
            except Exception as e:  # noqa: BLE001
                R.check("start httpbin and the restmcp servers", False, error_text(e))
            else:
                print(f"# httpbin {w.httpbin} (access log {w.log.path}); restmcp A {w.a}, A2 {w.a2}, B {w.b}, C {w.c}, D {w.d}", flush=True)
                anyio.run(run, w, stdio_log)
    finally:
        kill_all()
        if w is not None:
            for child, name in w.stderr_files:
                (work / name).write_text(child.text("stderr") + "\n")
        for child in CHILDREN:
            if child.name == "httpbin":
                (work / "httpbin.stderr").write_text(child.text("stderr") + "\n")
        finish(work, "CONFIRM_TEST_KEEP")
    return summary("confirm-python")


if __name__ == "__main__":
    sys.exit(main())
