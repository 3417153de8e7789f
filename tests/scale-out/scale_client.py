#!/usr/bin/env python3
"""Scale-out test: MCP clients through nginx in front of several `restmcp serve` replicas.

run.sh starts the replicas and nginx and hands this script a JSON file describing them:

  {"replicas": {"127.0.0.1:PORT": "A", ...},
   "balancers": {"NAME": {"url": "http://127.0.0.1:PORT/mcp", "log": "PATH/NAME.access.log"}, ...}}

Balancers (each an nginx server with its own access log, one JSON object per request):

  stateless   round robin over A and B          ([server] sessions = false)
  rr          round robin over C and D          (sessions = true)
  sid-hash    hash $http_mcp_session_id consistent over C and D
  ip-hash     hash $remote_addr consistent over C and D

Checks (the access log says which replica served each request):

  stateless: the official Python SDK (initialize handshake, then server/discover) and plain
  2026-07-28 JSON-RPC POSTs work, and the calls were spread: the initialize/discover on one
  replica, at least one later call on the other.
  rr: 2026-07-28 requests work (they never have sessions); initialize-based sessions break.
  ip-hash: initialize-based sessions work (raw and the Python SDK): every request of a client
  goes to the replica that holds its session.
  sid-hash: reported, not asserted: the initialize carries no session id, so nginx places it
  round robin, and the id the replica then assigns hashes to either replica.

Prints one line per check and `scale-out: N passed, M failed`; exits 0 only when nothing failed.

Usage: scale_client.py SETUP.json
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import sys
import time
import traceback
import urllib.parse
from collections import Counter
from typing import Any

import anyio
from mcp import Client

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from harness import PASS_FAIL, R, describe, install_signals, summary  # noqa: E402 - tests/lib/harness.py

TIMEOUT = 15.0  # seconds, for one request
PHASE_TIMEOUT = 60.0  # seconds, for one SDK client's whole conversation
HARD_LIMIT = 120  # seconds: the process gives up past this
NEW = "2026-07-28"
HANDSHAKE = "2025-11-25"

# Tools of specs/petstore.yaml (mock mode) and arguments that make them succeed.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("getPetById", {"petId": 1}),
    ("getInventory", {}),
    ("findPetsByStatus", {"status": "available"}),
    ("getOrderById", {"orderId": 3}),
    ("getUserByName", {"username": "user1"}),
    ("getPetById", {"petId": 2}),
]

META = {
    "io.modelcontextprotocol/protocolVersion": NEW,
    "io.modelcontextprotocol/clientInfo": {"name": "scale-out-raw", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


R.style = PASS_FAIL  # tests/lib/harness.py's results, as PASS/FAIL lines


def short(value: Any, limit: int = 200) -> str:
    s = value if isinstance(value, str) else json.dumps(value, default=str)
    return s if len(s) <= limit else s[:limit] + "..."


# --------------------------------------------------------------------------------------
# The access log: which replica served which request


class AccessLog:
    """One nginx access log (log_format with escape=json: one JSON object a line)."""

    def __init__(self, path: str, replicas: dict[str, str]) -> None:
        self.path = path
        self.replicas = replicas
        self.mark = 0

    def _lines(self) -> list[str]:
        try:
            with open(self.path, encoding="utf-8") as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def start(self) -> None:
        self.mark = len(self._lines())

    def entries(self) -> list[dict[str, Any]]:
        """The requests since start(): waits until nginx has written them (it logs a request
        once its response is sent, which may be a moment after the client has read it)."""
        lines, stable_since = self._lines(), time.monotonic()
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and time.monotonic() - stable_since < 0.3:
            time.sleep(0.05)
            now = self._lines()
            if len(now) != len(lines):
                lines, stable_since = now, time.monotonic()
        out = []
        for line in lines[self.mark :]:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if not entry.get("uri", "").startswith("/mcp"):
                continue
            # $upstream_addr lists every replica tried; the last one answered.
            addr = entry.get("upstream", "").split(",")[-1].strip()
            entry["replica"] = self.replicas.get(addr, addr or "-")
            try:
                body = json.loads(entry.get("body") or "null")
            except ValueError:
                body = None
            method = body.get("method") if isinstance(body, dict) else None
            name = body.get("params", {}).get("name") if method == "tools/call" else None
            entry["rpc"] = method or entry.get("method", "?")
            entry["label"] = f"{method} {name}" if name else (method or entry.get("method", "?"))
            out.append(entry)
        return out


def trace(entries: list[dict[str, Any]]) -> str:
    return ", ".join(f"{e['label']}->{e['replica']}({e['status']})" for e in entries)


def check_spread(name: str, entries: list[dict[str, Any]], first_method: str) -> None:
    """The first `first_method` on one replica and at least one later tools/call on another."""
    firsts = [i for i, e in enumerate(entries) if e["rpc"] == first_method]
    if not firsts:
        R.check(f"{name}: spread", False, f"no {first_method} in the access log: {trace(entries)}")
        return
    first = entries[firsts[0]]
    calls = [e for e in entries[firsts[0] + 1 :] if e["rpc"] == "tools/call"]
    where = Counter(e["replica"] for e in calls)
    other = [e for e in calls if e["replica"] != first["replica"]]
    R.check(
        f"{name}: spread",
        bool(other),
        f"{first_method} on {first['replica']}, tools/call on "
        + ", ".join(f"{r}x{n}" for r, n in sorted(where.items())),
    )
    print(f"    requests: {trace(entries)}", flush=True)


# --------------------------------------------------------------------------------------
# Plain HTTP


def request(
    url: str, method: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], Any]:
    """One request on a fresh connection; the JSON-RPC message of a JSON or SSE answer."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
    try:
        all_headers = {"Accept": "application/json, text/event-stream"}
        if body is not None:
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, parts.path, body=data, headers=all_headers)
        response = conn.getresponse()
        raw = response.read().decode("utf-8", errors="replace")
        got = {k.lower(): v for k, v in response.getheaders()}
        message = None
        if raw.strip():
            try:
                message = json.loads(raw)
            except ValueError:
                datas = [line[5:].strip() for line in raw.splitlines() if line.startswith("data:")]
                for d in reversed(datas):
                    try:
                        message = json.loads(d)
                        break
                    except ValueError:
                        continue
                if message is None:
                    message = raw.strip()
        return response.status, got, message
    finally:
        conn.close()


def first_event(url: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    """POST a request answered by a stream and return its first SSE message (then hang up)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)
    try:
        all_headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        all_headers.update(headers)
        conn.request("POST", parts.path, body=json.dumps(body).encode(), headers=all_headers)
        response = conn.getresponse()
        while True:
            line = response.fp.readline()
            if not line:
                return response.status, None
            text = line.decode("utf-8", errors="replace").strip()
            if text.startswith("data:"):
                return response.status, json.loads(text[5:].strip())
    finally:
        conn.close()


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": NEW, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def call_ok(message: Any) -> tuple[bool, str]:
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict):
        return False, f"no result: {short(message)}"
    if result.get("isError") is not False or result.get("structuredContent") is None:
        return False, f"isError={result.get('isError')} structuredContent={short(result.get('structuredContent'))}"
    return True, ""


def raw_modern(name: str, url: str, log: AccessLog, listen: bool) -> None:
    """2026-07-28 as plain JSON-RPC POSTs: server/discover, then tools/call with per-request _meta."""
    log.start()
    status, _, message = request(
        url,
        "POST",
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}},
        modern_headers("server/discover"),
    )
    versions = message.get("result", {}).get("supportedVersions", []) if isinstance(message, dict) else []
    R.check(
        f"{name}: server/discover", status == 200 and NEW in versions, f"HTTP {status}, supportedVersions {versions}"
    )
    failures = []
    for i, (tool, arguments) in enumerate(CALLS[:4], start=2):
        status, _, message = request(
            url,
            "POST",
            {
                "jsonrpc": "2.0",
                "id": i,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments, "_meta": META},
            },
            modern_headers("tools/call", tool),
        )
        ok, why = call_ok(message)
        if status != 200 or not ok:
            failures.append(f"{tool}: HTTP {status} {why}")
    R.check(f"{name}: {len(CALLS[:4])} tools/call", not failures, "; ".join(failures) or "all structured, none isError")
    if listen:
        # The subscription stream is one long response from whichever replica took it.
        status, event = first_event(
            url,
            {
                "jsonrpc": "2.0",
                "id": 99,
                "method": "subscriptions/listen",
                "params": {"notifications": {"toolsListChanged": True}, "_meta": META},
            },
            modern_headers("subscriptions/listen"),
        )
        method = event.get("method") if isinstance(event, dict) else None
        R.check(
            f"{name}: subscriptions/listen acknowledged",
            status == 200 and method == "notifications/subscriptions/acknowledged",
            f"HTTP {status}, first event {short(event)}",
        )
    check_spread(name, log.entries(), "server/discover")


def raw_session(url: str, tag: str) -> tuple[bool, str]:
    """An initialize-based session as plain POSTs; (worked, what happened)."""
    headers = {"X-Scale-Tag": tag}
    status, got, message = request(
        url,
        "POST",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "clientInfo": {"name": "scale-out-raw", "version": "1"},
            },
        },
        headers,
    )
    session = got.get("mcp-session-id")
    if status != 200 or not session:
        return False, f"initialize: HTTP {status}, session id {session!r}"
    version = message.get("result", {}).get("protocolVersion", HANDSHAKE)
    headers.update({"Mcp-Session-Id": session, "MCP-Protocol-Version": version})
    steps: list[tuple[str, Any, int]] = [
        ("notifications/initialized", {"jsonrpc": "2.0", "method": "notifications/initialized"}, 202),
        ("tools/list", {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}, 200),
        (
            "tools/call",
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "getPetById", "arguments": {"petId": 1}}},
            200,
        ),
    ]
    try:
        for step, body, expected in steps:
            status, _, message = request(url, "POST", body, headers)
            if status != expected:
                return False, f"{step}: HTTP {status} {short(message, 80)}"
            if step == "tools/call":
                ok, why = call_ok(message)
                if not ok:
                    return False, f"{step}: {why}"
            if step == "tools/list" and not (isinstance(message, dict) and message.get("result", {}).get("tools")):
                return False, f"{step}: {short(message, 80)}"
        return True, "initialize, initialized, tools/list, tools/call"
    finally:
        request(url, "DELETE", None, headers)  # end the session (wherever it lives)


def sessions(name: str, url: str, log: AccessLog, count: int, expect: bool | None) -> None:
    """`count` raw initialize-based sessions; expect all to work (True), all to break (False),
    or just report (None)."""
    log.start()
    outcomes = [raw_session(url, f"{name}#{i}") for i in range(count)]
    entries = log.entries()
    worked = sum(ok for ok, _ in outcomes)
    for i, (ok, what) in enumerate(outcomes):
        mine = [e for e in entries if e.get("tag") == f"{name}#{i}"]
        print(f"    session {i + 1}: {'works' if ok else 'breaks'} ({what}); {trace(mine)}", flush=True)
    summary = f"{worked} of {count} sessions worked"
    if expect is None:
        print(f"INFO {name}: {summary} (not asserted)", flush=True)
    else:
        R.check(f"{name}: sessions {'work' if expect else 'break'}", worked == (count if expect else 0), summary)


async def sdk(name: str, url: str, log: AccessLog, mode: str, first_method: str, expect_version: str, spread: bool) -> None:
    """The official Python SDK: connect, tools/list, every call in CALLS."""
    log.start()
    try:
        with anyio.fail_after(PHASE_TIMEOUT):
            async with Client(url, mode=mode, read_timeout_seconds=TIMEOUT) as client:
                version = client.protocol_version
                R.check(f"{name}: connect", version == expect_version, f"protocol {version}")
                names: list[str] = []
                cursor = None
                for _ in range(20):
                    page = await client.list_tools(cursor=cursor)
                    names += [t.name for t in page.tools]
                    cursor = page.next_cursor
                    if not cursor:
                        break
                missing = sorted({tool for tool, _ in CALLS} - set(names))
                R.check(f"{name}: tools/list", not missing, f"{len(names)} tools" + (f", missing {missing}" if missing else ""))
                failures = []
                for tool, arguments in CALLS:
                    r = await client.call_tool(tool, arguments)
                    if r.is_error is not False or r.structured_content is None:
                        failures.append(f"{tool}: isError={r.is_error} structuredContent={short(r.structured_content, 80)}")
                R.check(f"{name}: {len(CALLS)} tools/call", not failures, "; ".join(failures) or "all structured, none isError")
    except Exception as exc:  # the SDK raising is a failed check, not a crash
        R.check(f"{name}: conversation", False, describe(exc))
    entries = log.entries()
    if spread:
        check_spread(name, entries, first_method)
    else:
        where = Counter(e["replica"] for e in entries)
        print(f"    requests: {trace(entries)}", flush=True)
        print(f"    served by: {', '.join(f'{r}x{n}' for r, n in sorted(where.items()))}", flush=True)


async def main_async(setup: dict[str, Any]) -> None:
    replicas: dict[str, str] = setup["replicas"]
    balancers = setup["balancers"]
    legend = ", ".join(f"{label} = {addr}" for addr, label in sorted(replicas.items(), key=lambda kv: kv[1]))
    print(f"replicas: {legend}", flush=True)

    def bal(key: str) -> tuple[str, AccessLog]:
        return balancers[key]["url"], AccessLog(balancers[key]["log"], replicas)

    url, log = bal("stateless")
    print(f"== sessions = false (A, B), round robin: {url}", flush=True)
    await sdk("stateless | Python SDK, initialize", url, log, "legacy", "initialize", HANDSHAKE, spread=True)
    await sdk("stateless | Python SDK, server/discover", url, log, "auto", "server/discover", NEW, spread=True)
    raw_modern("stateless | raw 2026-07-28", url, log, listen=True)

    url, log = bal("rr")
    print(f"== sessions = true (C, D), round robin: {url}", flush=True)
    raw_modern("sessions, round robin | raw 2026-07-28", url, log, listen=False)
    sessions("sessions, round robin | initialize", url, log, 3, expect=False)

    url, log = bal("ip-hash")
    print(f"== sessions = true (C, D), hash $remote_addr consistent: {url}", flush=True)
    sessions("sessions, hash $remote_addr | initialize", url, log, 3, expect=True)
    await sdk("sessions, hash $remote_addr | Python SDK, initialize", url, log, "legacy", "initialize", HANDSHAKE, spread=False)

    url, log = bal("sid-hash")
    print(f"== sessions = true (C, D), hash $http_mcp_session_id consistent: {url}", flush=True)
    sessions("sessions, hash $http_mcp_session_id | initialize", url, log, 8, expect=None)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        setup = json.load(f)

    install_signals("scale-out", HARD_LIMIT)
    try:
        anyio.run(main_async, setup)
    except BaseException as exc:  # noqa: BLE001 - report, never lose the summary
        traceback.print_exc()
        R.check("run", False, describe(exc))
    finally:
        signal.alarm(0)
    return summary("scale-out")


if __name__ == "__main__":
    sys.exit(main())
