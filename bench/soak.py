#!/usr/bin/env python3
"""Soak test (issue #9): mixed MCP traffic against `restmcp serve` for a long time, watching RSS.

    python3 bench/soak.py --duration 600                 # the full run: 10 minutes
    python3 bench/soak.py --duration 60 --warmup 20      # a quick check
    RESTMCP_BIN=path/to/restmcp python3 bench/soak.py    # or --bin; default target/release/restmcp
                                                         # (built with cargo when missing)

What it does, all on 127.0.0.1 with ports the OS picks, and stopping by itself:

1. Starts a small upstream API in a child Python process: GET /items/{id} (a JSON item),
   POST /items (echoes the item), GET /slow (answers after 2 s), GET /fail (500) and
   GET /missing/{id} (404). Writes, in a temporary directory, an OpenAPI 3 spec for it
   (`specs/soak.yaml`), its conventional overlay (`specs/soak.overlay.yaml`, which adds a
   tool `extra_N`) and a config.toml, and starts `restmcp serve` on it (tools/list pages of 2
   tools, reload checks every 200 ms, JSON logs read from its stderr through a pipe).
2. Drives it with --workers threads over Streamable HTTP: half with a 2025-11-25 session
   (initialize, notifications/initialized), half with stateless 2026-07-28 requests (headers
   and `_meta` on every request). Each loops over a weighted mix: tools/list (every page),
   successful calls (getItem, createItem), calls with bad arguments (isError), upstream 404
   and 500 (isError), an unknown tool (JSON-RPC error), cancellations (a /slow call given up
   after 100 ms: `cancelled`, by notifications/cancelled from another connection of the same
   session, which must answer "request cancelled" at once; `disconnected`, stateless, by closing
   the connection; restmcp must count both as outcome "cancelled"), and, for session workers, a
   new session followed by DELETE of the old one (which must then answer 404). Every answer is
   checked.
   One more session holds the GET stream open and counts notifications/tools/list_changed.
3. Every --reload-every seconds rewrites the overlay (a new extra_N tool and getItem
   description), or the spec (a new failItem description, getTags added or removed), or, every
   sixth time, writes a broken overlay; then waits until tools/list shows the new tool set (or,
   for the broken one, until restmcp_reload_failures_total rises and the tool set stays), and
   calls the new extra_N tool.
4. Samples VmRSS of restmcp every 2 s and checks /healthz and /readyz.

At the end it stops the traffic, deletes the sessions, and checks that /metrics agrees with the
client's own counts (restmcp_tool_calls_total by outcome, reloads, reload failures), that no
call, session or stream is left open, that restmcp exits 0 on SIGTERM, and that its per-call log
lines agree too. It prints duration, calls, calls/s, counts by kind, the unexpected errors with
examples, and RSS at start, after warm-up, at the end and the maximum, with the slope after
warm-up. It fails (exit status 1) when RSS at the end is more than 10 % above RSS after warm-up,
on any unexpected error (a wrong answer, a transport error, a non-200 from restmcp, a
cancellation that did not cancel, a count that does not agree, an ERROR log line other than
the broken overlay's), or when restmcp dies. Ctrl-C ends the run early and still reports;
restmcp and the upstream are stopped on every exit. The working directory is kept when the run
fails (its path is printed), with restmcp's log.
"""

from __future__ import annotations

import argparse
import collections
import ctypes
import http.client
import http.server
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

SESSION_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "restmcp-soak", "version": "1"}
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": {},
}
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TIMEOUT = 30  # seconds for one HTTP exchange with restmcp
SLOW_SECONDS = 2.0  # how long the upstream's /slow takes
CANCEL_AFTER = 0.1  # seconds between starting a /slow call and cancelling it
BASE_TOOLS = {"getItem", "createItem", "slowItem", "failItem", "missingItem"}
# Client-side kinds of tools/call and the restmcp_tool_calls_total outcome each must show up as.
CALL_KINDS = {
    "ok": "ok",
    "bad_args": "tool_error",
    "upstream_4xx": "upstream_4xx",
    "upstream_5xx": "upstream_5xx",
    "unknown_tool": None,  # a JSON-RPC error, not in the metrics (but in the log)
    "cancelled": "cancelled",  # by notifications/cancelled (sessions)
    "disconnected": "cancelled",  # by closing the connection (stateless)
}
# What the workers do, and how often (relative weights).
MIX = {
    "list": 10,
    "ok": 40,
    "bad_args": 10,
    "upstream_4xx": 8,
    "upstream_5xx": 8,
    "unknown_tool": 5,
    "cancel": 2,
    "new_session": 0.5,
}


def say(message: str) -> None:
    print(f"soak: {message}", file=sys.stderr, flush=True)


def die_with_parent() -> None:
    """In a child between fork and exec: get SIGTERM when the soak script dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- the upstream API (runs in a child process: python3 soak.py --serve-upstream) -------------


class Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stalls

    def log_message(self, format: str, *args: object) -> None:
        pass

    def reply(self, status: int, value: object) -> None:
        body = json.dumps(value).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # restmcp dropped the request (a cancelled call)
            self.close_connection = True

    def do_GET(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        parts = path.strip("/").split("/")
        if len(parts) == 2 and parts[0] == "items" and parts[1].isdigit():
            n = int(parts[1])
            self.reply(200, {"id": n, "name": f"item-{n}", "price": n / 4, "tags": ["soak", str(n % 7)]})
        elif len(parts) == 3 and parts[0] == "items" and parts[2] == "tags":
            self.reply(200, ["soak", parts[1]])
        elif path == "/slow":
            time.sleep(SLOW_SECONDS)
            self.reply(200, {"id": 0, "name": "slow", "price": 0, "tags": []})
        elif path == "/fail":
            self.reply(500, {"error": "the soak upstream always fails here"})
        else:
            self.reply(404, {"error": f"nothing at {path}"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if urllib.parse.urlsplit(self.path).path != "/items":
            self.reply(404, {"error": "no such collection"})
            return
        try:
            item = json.loads(raw or b"{}")
        except ValueError:
            self.reply(400, {"error": "not JSON"})
            return
        self.reply(201, {"id": 1000, **item} if isinstance(item, dict) else {"id": 1000})


def serve_upstream() -> int:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)

    def parent_gone() -> None:  # stdin closes when the soak script exits, however it exits
        sys.stdin.buffer.read()
        os._exit(0)

    threading.Thread(target=parent_gone, daemon=True).start()
    server.serve_forever()
    return 0


# --- the files restmcp serves ------------------------------------------------------------------


def spec_text(generation: int) -> str:
    """The spec; odd generations add getTags. failItem's description names the generation."""
    tags = (
        """  /items/{id}/tags:
    get:
      operationId: getTags
      summary: The tags of an item
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer, minimum: 1}}
      responses:
        "200":
          description: Tags
          content:
            application/json:
              schema: {type: array, items: {type: string}}
"""
        if generation % 2
        else ""
    )
    return f"""openapi: 3.0.3
info: {{title: Soak upstream, version: "{generation}"}}
paths:
  /items/{{id}}:
    get:
      operationId: getItem
      summary: One item
      parameters:
        - {{name: id, in: path, required: true, schema: {{type: integer, minimum: 1}}}}
        - {{name: verbose, in: query, schema: {{type: boolean}}}}
      responses:
        "200":
          description: The item
          content:
            application/json:
              schema: {{$ref: "#/components/schemas/Item"}}
{tags}  /items:
    post:
      operationId: createItem
      summary: Create an item
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {{type: string, minLength: 1}}
                price: {{type: number}}
                tags: {{type: array, items: {{type: string}}}}
      responses:
        "201":
          description: The new item
          content:
            application/json:
              schema: {{$ref: "#/components/schemas/Item"}}
  /slow:
    get:
      operationId: slowItem
      summary: An item, after two seconds
      responses:
        "200":
          description: The item
          content:
            application/json:
              schema: {{$ref: "#/components/schemas/Item"}}
  /fail:
    get:
      operationId: failItem
      summary: Always answers 500 (spec generation {generation})
      responses:
        "200":
          description: Never
  /missing/{{id}}:
    get:
      operationId: missingItem
      summary: Always answers 404
      parameters:
        - {{name: id, in: path, required: true, schema: {{type: integer}}}}
      responses:
        "200":
          description: Never
components:
  schemas:
    Item:
      type: object
      properties:
        id: {{type: integer}}
        name: {{type: string}}
        price: {{type: number}}
        tags: {{type: array, items: {{type: string}}}}
"""


def overlay_text(generation: int) -> str:
    """The overlay: a hand-written tool extra_N and getItem's description, both naming N."""
    return f"""tools:
  getItem:
    append_description: Overlay generation {generation}.
add:
  extra_{generation}:
    description: The item again, through a hand-written tool (overlay generation {generation}).
    method: GET
    path: /items/{{id}}
    arguments:
      id: {{type: integer, required: true}}
"""


BROKEN_OVERLAY = "tools: [\n  this is not: valid\n"


def config_text(port: int, upstream_port: int) -> str:
    return f"""[server]
listen = "127.0.0.1:{port}"
max_in_flight_per_client = 0
page_size = 2
shutdown_grace_seconds = 5

[reload]
interval_ms = 200

[log]
format = "json"
level = "info,rmcp=warn"

[apis.soak]
spec = "specs/soak.yaml"
base_url = "http://127.0.0.1:{upstream_port}"
timeout_seconds = 10
max_retries = 0
"""


def write_atomically(path: str, text: str) -> None:
    temporary = path + ".tmp"
    with open(temporary, "w") as file:
        file.write(text)
    os.replace(temporary, path)


# --- bookkeeping -------------------------------------------------------------------------------


class Stats:
    """Counts by kind, and unexpected errors by kind with a few examples, from every thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: collections.Counter[str] = collections.Counter()
        self.unexpected: collections.Counter[str] = collections.Counter()
        self.examples: dict[str, list[str]] = collections.defaultdict(list)

    def count(self, kind: str, n: int = 1) -> None:
        with self.lock:
            self.counts[kind] += n

    def bad(self, kind: str, example: str) -> None:
        with self.lock:
            self.unexpected[kind] += 1
            if len(self.examples[kind]) < 3:
                self.examples[kind].append(example[:400])

    def snapshot(self) -> tuple[collections.Counter[str], collections.Counter[str]]:
        with self.lock:
            return collections.Counter(self.counts), collections.Counter(self.unexpected)


def short(value: object) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 300 else text[:300] + "…"


def parse_metrics(text: str) -> dict[str, float]:
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            try:
                samples[name] = float(value)
            except ValueError:
                pass
    return samples


def calls_by_outcome(samples: dict[str, float]) -> collections.Counter[str]:
    outcomes: collections.Counter[str] = collections.Counter()
    for name, value in samples.items():
        if name.startswith("restmcp_tool_calls_total{"):
            match = re.search(r'outcome="([^"]*)"', name)
            if match:
                outcomes[match.group(1)] += int(value)
    return outcomes


def read_answer(response: http.client.HTTPResponse, want_id: object) -> dict | None:
    """The JSON-RPC answer in a response: plain JSON, or the matching message of an SSE body
    (an error status may come with text instead: {"http_body": text})."""
    body = response.read()
    if not body:
        return None
    if response.status != 200 and not body.lstrip().startswith(b"{"):
        return {"http_body": body[:300].decode("utf-8", "replace")}
    if (response.getheader("Content-Type") or "").startswith("text/event-stream"):
        for line in body.decode("utf-8", "replace").splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if isinstance(message, dict) and message.get("id") == want_id:
                    return message
        return None
    return json.loads(body)


def result_text(result: dict) -> str:
    return " ".join(c.get("text", "") for c in result.get("content", []) if isinstance(c, dict))


# --- an MCP client over Streamable HTTP ----------------------------------------------------------


class Client:
    """One MCP client: a 2025-11-25 session, or stateless 2026-07-28 requests."""

    def __init__(self, port: int, stateless: bool) -> None:
        self.port = port
        self.stateless = stateless
        self.session: str | None = None
        self.conn = self.connection()
        self.last_id = 0

    def connection(self, timeout: float | None = TIMEOUT) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def reset(self) -> None:
        self.conn.close()
        self.conn = self.connection()

    def next_id(self) -> int:
        self.last_id += 1
        return self.last_id

    def headers(self, method: str, name: str | None = None, session: str | None = None) -> dict[str, str]:
        if self.stateless:
            headers = {**JSON_HEADERS, "MCP-Protocol-Version": STATELESS_VERSION, "Mcp-Method": method}
            if name is not None:
                headers["Mcp-Name"] = name
            return headers
        session = session or self.session
        headers = dict(JSON_HEADERS)
        if session:
            headers["Mcp-Session-Id"] = session
            headers["MCP-Protocol-Version"] = SESSION_VERSION
        return headers

    def message(self, method: str, params: dict, request_id: int | None) -> tuple[bytes, dict[str, str]]:
        if self.stateless:
            params = {**params, "_meta": META}
        message: dict = {"jsonrpc": "2.0", "method": method, "params": params}
        if request_id is not None:
            message["id"] = request_id
        name = params.get("name") if method == "tools/call" else None
        return json.dumps(message).encode(), self.headers(method, name)

    def request(self, method: str, params: dict, session: str | None = None) -> tuple[int, dict | None]:
        request_id = self.next_id()
        body, headers = self.message(method, params, request_id)
        if session:
            headers = self.headers(method, session=session)
        self.conn.request("POST", "/mcp", body, headers)
        response = self.conn.getresponse()
        return response.status, read_answer(response, request_id)

    def notify(self, method: str, params: dict, conn: http.client.HTTPConnection | None = None) -> int:
        body, headers = self.message(method, params, None)
        conn = conn or self.conn
        conn.request("POST", "/mcp", body, headers)
        response = conn.getresponse()
        response.read()
        return response.status

    def open(self) -> None:
        """A new session: initialize and notifications/initialized (nothing when stateless)."""
        if self.stateless:
            return
        self.session = None
        request_id = self.next_id()
        params = {"protocolVersion": SESSION_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params})
        self.conn.request("POST", "/mcp", body, JSON_HEADERS)
        response = self.conn.getresponse()
        answer = read_answer(response, request_id)
        session = response.getheader("Mcp-Session-Id")
        if response.status != 200 or not session or not answer or "result" not in answer:
            raise RuntimeError(f"initialize: HTTP {response.status}, session {session!r}, {short(answer)}")
        if answer["result"].get("protocolVersion") != SESSION_VERSION:
            raise RuntimeError(f"initialize negotiated {answer['result'].get('protocolVersion')}")
        self.session = session
        status = self.notify("notifications/initialized", {})
        if status != 202:
            raise RuntimeError(f"notifications/initialized: HTTP {status}")

    def delete(self, session: str) -> int:
        self.conn.request("DELETE", "/mcp", headers=self.headers("", session=session))
        response = self.conn.getresponse()
        response.read()
        return response.status


# --- the soak ------------------------------------------------------------------------------------


class Soak:
    def __init__(self, args: argparse.Namespace, binary: str, work: str) -> None:
        self.args = args
        self.binary = binary
        self.work = work
        self.specs = os.path.join(work, "specs")
        self.stats = Stats()
        self.stop = threading.Event()
        self.upstream: subprocess.Popen | None = None
        self.restmcp: subprocess.Popen | None = None
        self.port = 0
        self.rss: list[tuple[float, float]] = []  # (seconds since traffic started, MB)
        self.rss_start = 0.0
        self.started = 0.0
        self.spec_generation = 0
        self.overlay_generation = 0
        self.expected_tools: set[str] = set()
        self.list_changed = 0
        self.listener_client: Client | None = None
        self.listener_conn: http.client.HTTPConnection | None = None
        self.log_levels: collections.Counter[str] = collections.Counter()
        self.log_outcomes: collections.Counter[str] = collections.Counter()
        self.log_tail: collections.deque[str] = collections.deque(maxlen=200)
        self.log_file = open(os.path.join(work, "restmcp.log"), "w")
        self.threads: list[threading.Thread] = []

    # --- processes

    def start(self) -> None:
        self.upstream = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--serve-upstream"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=die_with_parent,
        )
        assert self.upstream.stdout is not None
        upstream_port = int(self.upstream.stdout.readline() or 0)
        if not upstream_port:
            raise RuntimeError("the upstream did not start")
        os.makedirs(self.specs)
        write_atomically(os.path.join(self.specs, "soak.yaml"), spec_text(self.spec_generation))
        write_atomically(os.path.join(self.specs, "soak.overlay.yaml"), overlay_text(self.overlay_generation))
        self.expected_tools = self.tool_set()
        self.port = free_port()
        config = os.path.join(self.work, "config.toml")
        write_atomically(config, config_text(self.port, upstream_port))
        self.restmcp = subprocess.Popen(
            [self.binary, "serve", "--config", config], cwd=self.work, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=die_with_parent,
            env={k: v for k, v in os.environ.items() if k != "RUST_LOG" and not k.startswith("RESTMCP_")},
        )
        self.spawn(self.read_log, "log")
        deadline = time.monotonic() + 60
        while True:
            if self.restmcp.poll() is not None:
                raise RuntimeError(f"restmcp exited with status {self.restmcp.returncode} at start-up")
            try:
                if self.get("/readyz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("restmcp did not become ready within 60 s")
            time.sleep(0.05)
        names = self.list_names()
        if names != self.expected_tools:
            raise RuntimeError(f"restmcp serves {sorted(names)}, expected {sorted(self.expected_tools)}")

    def read_log(self) -> None:
        """restmcp's stderr: counts lines by level and call lines by outcome; the rest to a file."""
        assert self.restmcp is not None and self.restmcp.stderr is not None
        outcome = re.compile(rb'"outcome":"([a-z_0-9]+)"')
        level = re.compile(rb'"level":"([A-Z]+)"')
        for line in self.restmcp.stderr:
            if b'"target":"restmcp::call"' in line:
                found = outcome.search(line)
                self.log_outcomes[found.group(1).decode() if found else "?"] += 1
                continue
            found = level.search(line)
            self.log_levels[found.group(1).decode() if found else "other"] += 1
            text = line.decode("utf-8", "replace").rstrip("\n")
            self.log_tail.append(text)
            self.log_file.write(text + "\n")
            self.log_file.flush()
            if found and found.group(1) == b"ERROR" and "failed; still serving" not in text:
                self.stats.bad("log_error", text)

    def alive(self) -> bool:
        if self.restmcp is not None and self.restmcp.poll() is None:
            return True
        if not self.stop.is_set():
            code = self.restmcp.returncode if self.restmcp else None
            self.stats.bad("restmcp_died", f"restmcp exited with status {code}")
            self.stop.set()
        return False

    def spawn(self, target, name: str) -> threading.Thread:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self.threads.append(thread)
        return thread

    def cleanup(self) -> None:
        self.stop.set()
        if self.listener_conn is not None and self.listener_conn.sock is not None:
            try:
                self.listener_conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for proc in (self.restmcp, self.upstream):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for thread in self.threads:
            if thread.name == "log":
                thread.join(timeout=5)
        self.log_file.close()

    # --- plain HTTP and helpers

    def get(self, path: str) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def metrics(self) -> dict[str, float]:
        status, body = self.get("/metrics")
        if status != 200:
            raise RuntimeError(f"/metrics: HTTP {status}")
        return parse_metrics(body.decode())

    def tool_set(self) -> set[str]:
        tools = set(BASE_TOOLS) | {f"extra_{self.overlay_generation}"}
        if self.spec_generation % 2:
            tools.add("getTags")
        return tools

    def list_tools(self) -> dict[str, dict]:
        """Every page of tools/list, as one fresh stateless client sees it."""
        client = Client(self.port, stateless=True)
        try:
            tools, cursor = {}, None
            for _ in range(100):
                status, answer = client.request("tools/list", {"cursor": cursor} if cursor else {})
                if status != 200 or not answer or "result" not in answer:
                    raise RuntimeError(f"tools/list: HTTP {status}, {short(answer)}")
                for tool in answer["result"]["tools"]:
                    tools[tool["name"]] = tool
                cursor = answer["result"].get("nextCursor")
                if not cursor:
                    return tools
            raise RuntimeError("tools/list never ended")
        finally:
            client.conn.close()

    def list_names(self) -> set[str]:
        return set(self.list_tools())

    # --- RSS and health

    def sample_rss(self) -> float | None:
        assert self.restmcp is not None
        try:
            with open(f"/proc/{self.restmcp.pid}/status") as status:
                for line in status:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return None

    def monitor(self) -> None:
        while not self.stop.wait(2.0):
            if not self.alive():
                return
            rss = self.sample_rss()
            if rss is not None:
                self.rss.append((time.monotonic() - self.started, rss))
            for path, want in (("/healthz", b"ok"), ("/readyz", b'"ready"')):
                try:
                    status, body = self.get(path)
                    if status != 200 or want not in body:
                        self.stats.bad("health", f"{path}: HTTP {status} {body[:200]!r}")
                except OSError as e:
                    if self.alive():
                        self.stats.bad("health", f"{path}: {type(e).__name__}: {e}")

    # --- the GET stream

    def listen(self) -> None:
        """One session's GET stream, counting notifications/tools/list_changed."""
        client = Client(self.port, stateless=False)
        try:
            client.open()
            self.listener_client = client
            conn = client.connection(timeout=None)
            self.listener_conn = conn
            conn.request("GET", "/mcp", headers={
                "Accept": "text/event-stream", "Mcp-Session-Id": client.session or "",
                "MCP-Protocol-Version": SESSION_VERSION})
            response = conn.getresponse()
            if response.status != 200:
                self.stats.bad("stream", f"GET /mcp: HTTP {response.status} {response.read()[:200]!r}")
                return
            while True:
                line = response.readline()
                if not line:
                    break
                if line.startswith(b"data:") and line[5:].strip():
                    message = json.loads(line[5:])
                    if message.get("method") == "notifications/tools/list_changed":
                        self.list_changed += 1
            time.sleep(0.2)
            if not self.stop.is_set() and self.alive():
                self.stats.bad("stream", "the GET stream ended while the soak was running")
        except (OSError, http.client.HTTPException, ValueError, RuntimeError) as e:
            time.sleep(0.2)
            if not self.stop.is_set() and self.alive():
                self.stats.bad("stream", f"{type(e).__name__}: {e}")

    # --- reloads

    def reloader(self) -> None:
        step = 0
        while not self.stop.wait(self.args.reload_every):
            step += 1
            try:
                self.reload(step)
            except (OSError, http.client.HTTPException, ValueError, RuntimeError) as e:
                if self.alive():
                    self.stats.bad("reload", f"step {step}: {type(e).__name__}: {e}")

    def reload(self, step: int) -> None:
        before = self.metrics()
        reloads = before.get("restmcp_reloads_total", 0)
        failures = before.get("restmcp_reload_failures_total", 0)
        overlay = os.path.join(self.specs, "soak.overlay.yaml")
        if step % 6 == 0:
            write_atomically(overlay, BROKEN_OVERLAY)
            if not self.wait_for(lambda: self.metrics().get("restmcp_reload_failures_total", 0) > failures):
                self.stats.bad("reload", f"step {step}: the broken overlay was not reported as a failed reload")
                return
            names = self.list_names()
            if names != self.expected_tools:
                self.stats.bad("reload", f"step {step}: after a failed reload: {sorted(names)}, "
                                         f"expected the previous {sorted(self.expected_tools)}")
            self.stats.count("reload_rejected")
            return
        if step % 3 == 2:
            self.spec_generation += 1
            write_atomically(os.path.join(self.specs, "soak.yaml"), spec_text(self.spec_generation))
            marker = ("failItem", f"spec generation {self.spec_generation})")
        else:
            self.overlay_generation += 1
            write_atomically(overlay, overlay_text(self.overlay_generation))
            marker = ("getItem", f"Overlay generation {self.overlay_generation}.")
        self.expected_tools = self.tool_set()

        def reflected() -> bool:
            tools = self.list_tools()
            return set(tools) == self.expected_tools and marker[1] in tools[marker[0]].get("description", "")

        if not self.wait_for(reflected):
            tools = self.list_tools()
            self.stats.bad("reload", f"step {step}: tools/list never showed the change: {sorted(tools)}, "
                                     f"{marker[0]}: {short(tools.get(marker[0], {}).get('description'))}")
            return
        if not self.wait_for(lambda: self.metrics().get("restmcp_reloads_total", 0) == reloads + 1):
            self.stats.bad("reload", f"step {step}: restmcp_reloads_total went from {reloads} to "
                                     f"{self.metrics().get('restmcp_reloads_total')}, not up by one")
        # The new hand-written tool works.
        client = Client(self.port, stateless=True)
        try:
            name = f"extra_{self.overlay_generation}"
            status, answer = client.request("tools/call", {"name": name, "arguments": {"id": 7}})
            result = (answer or {}).get("result") or {}
            if status == 200 and not result.get("isError") and (result.get("structuredContent") or {}).get("id") == 7:
                self.stats.count("ok")
            else:
                self.stats.bad("wrong_answer", f"{name} after a reload: HTTP {status} {short(answer)}")
        finally:
            client.conn.close()
        self.stats.count("reload")

    def wait_for(self, condition, seconds: float = 10.0) -> bool:
        """Polls `condition` until it holds (True), or for `seconds` or until restmcp exits."""
        deadline = time.monotonic() + seconds
        while True:
            if condition():
                return True
            if time.monotonic() > deadline or self.restmcp is None or self.restmcp.poll() is not None:
                return False
            time.sleep(0.1)

    # --- the workers

    def worker(self, index: int, stateless: bool) -> None:
        rng = random.Random(self.args.seed * 1000 + index)
        client = Client(self.port, stateless)
        kinds, weights = list(MIX), list(MIX.values())
        if stateless:
            weights[kinds.index("new_session")] = 0
        try:
            client.open()
        except (OSError, http.client.HTTPException, ValueError, RuntimeError) as e:
            self.stats.bad("transport", f"worker {index}: initialize: {type(e).__name__}: {e}")
            return
        while not self.stop.is_set():
            kind = rng.choices(kinds, weights)[0]
            try:
                getattr(self, f"do_{kind}")(client, rng)
            except (OSError, http.client.HTTPException, ValueError, RuntimeError) as e:
                client.reset()
                time.sleep(0.2)  # a dying restmcp closes its sockets before it can be waited for
                if not self.alive():
                    return
                self.stats.bad("transport", f"{kind} ({'stateless' if stateless else 'session'}): "
                                            f"{type(e).__name__}: {e}")
        if client.session:
            try:
                status = client.delete(client.session)
                if status not in (200, 202, 204):
                    self.stats.bad("http_status", f"DELETE of a session at the end: HTTP {status}")
            except (OSError, http.client.HTTPException) as e:
                self.stats.bad("transport", f"DELETE of a session at the end: {type(e).__name__}: {e}")
        client.conn.close()

    def call(self, client: Client, kind: str, name: str, arguments: dict, check=None) -> None:
        """One tools/call whose answer must be of `kind`; `check(structured)` for ok calls."""
        status, answer = client.request("tools/call", {"name": name, "arguments": arguments})
        what = f"{kind}: {name} {short(arguments)} ({'stateless' if client.stateless else 'session'})"
        if status != 200 or answer is None:
            self.stats.bad("http_status", f"{what}: HTTP {status} {short(answer)}")
            return
        if kind == "unknown_tool":
            if "error" in answer:
                self.stats.count(kind)
            else:
                self.stats.bad("wrong_answer", f"{what}: no JSON-RPC error: {short(answer)}")
            return
        result = answer.get("result")
        if not isinstance(result, dict):
            self.stats.bad("wrong_answer", f"{what}: no result: {short(answer)}")
            return
        if kind == "ok":
            good = not result.get("isError") and (check is None or check(result.get("structuredContent")))
        else:
            good = result.get("isError") is True and (
                kind == "bad_args"
                or ("404" if kind == "upstream_4xx" else "500") in result_text(result))
        if good:
            self.stats.count(kind)
        else:
            # The server counted it under some outcome anyway; keep the totals comparable.
            self.stats.count("ok" if not result.get("isError") else "mismatched")
            self.stats.bad("wrong_answer", f"{what}: {short(result)}")

    def do_ok(self, client: Client, rng: random.Random) -> None:
        if rng.random() < 0.6:
            n = rng.randint(1, 10_000)
            arguments = {"id": n} if rng.random() < 0.5 else {"id": n, "verbose": rng.random() < 0.5}
            self.call(client, "ok", "getItem", arguments,
                      lambda s: isinstance(s, dict) and s.get("id") == n and s.get("name") == f"item-{n}")
        else:
            name = f"widget-{rng.randint(1, 10_000)}"
            arguments = {"name": name, "price": round(rng.random() * 100, 2), "tags": ["a", "b"][: rng.randint(0, 2)]}
            self.call(client, "ok", "createItem", arguments,
                      lambda s: isinstance(s, dict) and s.get("name") == name and s.get("id") == 1000)

    def do_bad_args(self, client: Client, rng: random.Random) -> None:
        name, arguments = rng.choice([
            ("getItem", {"id": "not-a-number"}),
            ("getItem", {}),
            ("getItem", {"id": 3, "colour": "red"}),
            ("getItem", {"id": 0}),
            ("getItem", {"id": 3, "verbose": "yes"}),
            ("createItem", {"price": 3}),
            ("createItem", {"name": ""}),
        ])
        self.call(client, "bad_args", name, arguments)

    def do_upstream_4xx(self, client: Client, rng: random.Random) -> None:
        self.call(client, "upstream_4xx", "missingItem", {"id": rng.randint(1, 1000)})

    def do_upstream_5xx(self, client: Client, rng: random.Random) -> None:
        self.call(client, "upstream_5xx", "failItem", {})

    def do_unknown_tool(self, client: Client, rng: random.Random) -> None:
        self.call(client, "unknown_tool", rng.choice(["noSuchTool", "getitem", "extra_-1"]), {})

    def do_list(self, client: Client, rng: random.Random) -> None:
        cursor, pages, tools = None, 0, 0
        while True:
            status, answer = client.request("tools/list", {"cursor": cursor} if cursor else {})
            result = (answer or {}).get("result")
            if status != 200 or not isinstance(result, dict) or not isinstance(result.get("tools"), list):
                self.stats.bad("wrong_answer", f"tools/list page {pages + 1}: HTTP {status} {short(answer)}")
                return
            for tool in result["tools"]:
                if not isinstance(tool.get("name"), str) or not isinstance(tool.get("inputSchema"), dict):
                    self.stats.bad("wrong_answer", f"tools/list: a malformed tool: {short(tool)}")
            pages += 1
            tools += len(result["tools"])
            cursor = result.get("nextCursor")
            if not cursor:
                break
            if pages > 20:
                self.stats.bad("wrong_answer", "tools/list: more than 20 pages")
                return
        if tools < len(BASE_TOOLS):
            self.stats.bad("wrong_answer", f"tools/list: only {tools} tools in {pages} pages")
        self.stats.count("list")
        self.stats.count("list_pages", pages)

    def do_cancel(self, client: Client, rng: random.Random) -> None:
        """A /slow call cancelled after CANCEL_AFTER: notifications/cancelled from a second
        connection of the session, or, stateless, by closing the connection."""
        request_id = client.next_id()
        body, headers = client.message("tools/call", {"name": "slowItem", "arguments": {}}, request_id)
        if client.stateless:
            conn = client.connection()
            try:
                conn.request("POST", "/mcp", body, headers)
                time.sleep(CANCEL_AFTER)
            finally:
                conn.close()
            self.stats.count("disconnected")
            return
        started = time.monotonic()
        client.conn.request("POST", "/mcp", body, headers)
        time.sleep(CANCEL_AFTER)
        other = client.connection()
        try:
            status = client.notify("notifications/cancelled",
                                   {"requestId": request_id, "reason": "soak"}, conn=other)
        finally:
            other.close()
        if status != 202:
            self.stats.bad("http_status", f"notifications/cancelled: HTTP {status}")
        response = client.conn.getresponse()
        answer = read_answer(response, request_id)
        elapsed = time.monotonic() - started
        error = (answer or {}).get("error") or {}
        if response.status == 200 and error.get("message") == "request cancelled":
            self.stats.count("cancelled")
            if elapsed > SLOW_SECONDS * 0.75:
                self.stats.bad("not_cancelled", f"the cancelled call was answered only after {elapsed:.2f} s")
        else:
            result = (answer or {}).get("result") or {}
            self.stats.count("ok" if response.status == 200 and "result" in (answer or {}) and not result.get("isError")
                             else "mismatched")
            self.stats.bad("not_cancelled", f"after {elapsed:.2f} s: HTTP {response.status} {short(answer)}")

    def do_new_session(self, client: Client, rng: random.Random) -> None:
        """A new session, then DELETE of the old one, which must be gone afterwards."""
        old = client.session
        client.open()
        if old is None:
            return
        status = client.delete(old)
        if status not in (200, 202, 204):
            self.stats.bad("http_status", f"DELETE of a session: HTTP {status}")
        status, answer = client.request("tools/list", {}, session=old)
        if status != 404:
            self.stats.bad("wrong_answer", f"tools/list in a deleted session: HTTP {status} {short(answer)}")
        self.stats.count("session_renewed")

    # --- the run

    def run(self) -> int:
        args = self.args
        self.start()
        self.rss_start = self.sample_rss() or 0.0
        baseline = self.metrics()
        self.started = time.monotonic()
        self.rss.append((0.0, self.rss_start))
        stateless_workers = args.workers // 2
        say(f"restmcp pid {self.restmcp.pid} on 127.0.0.1:{self.port}, RSS {self.rss_start:.1f} MB; "
            f"{args.duration} s of traffic from {args.workers} workers ({args.workers - stateless_workers} "
            f"with sessions, {stateless_workers} stateless), reload every {args.reload_every} s, "
            f"warm-up {args.warmup} s (work dir {self.work})")
        self.spawn(self.monitor, "monitor")
        self.spawn(self.listen, "listener")
        reloader = self.spawn(self.reloader, "reloader")
        workers = [self.spawn(lambda i=i: self.worker(i, i % 2 == 1), f"worker-{i}")
                   for i in range(args.workers)]
        interrupted = False
        try:
            next_report = 30.0
            while not self.stop.is_set():
                elapsed = time.monotonic() - self.started
                if elapsed >= args.duration:
                    break
                self.stop.wait(min(1.0, args.duration - elapsed))
                if elapsed >= next_report:
                    next_report += 30.0
                    counts, unexpected = self.stats.snapshot()
                    calls = sum(counts[k] for k in CALL_KINDS)
                    rss = self.rss[-1][1] if self.rss else float("nan")
                    say(f"{elapsed:4.0f} s: {calls} calls ({calls / elapsed:.0f}/s), {counts['reload']} reloads, "
                        f"RSS {rss:.1f} MB, {sum(unexpected.values())} unexpected")
        except KeyboardInterrupt:
            interrupted = True
            say("interrupted: stopping and reporting")
        duration = time.monotonic() - self.started
        end_rss = self.sample_rss()
        if end_rss is not None:
            self.rss.append((duration, end_rss))
        self.stop.set()
        for thread in workers + [reloader]:
            thread.join(timeout=TIMEOUT + 10)
        counts, _ = self.stats.snapshot()
        figures = self.finish(baseline, counts)
        return self.report(duration, counts, figures, interrupted)

    def finish(self, baseline: dict[str, float], counts: collections.Counter[str]) -> dict:
        """After the traffic: the counts must agree, nothing may be left open, and restmcp
        must shut down cleanly."""
        figures: dict = {}
        if self.listener_client is not None and self.listener_client.session:
            try:
                self.listener_client.delete(self.listener_client.session)
            except (OSError, http.client.HTTPException) as e:
                self.stats.bad("transport", f"DELETE of the listening session: {type(e).__name__}: {e}")
        if self.restmcp is None or self.restmcp.poll() is not None:
            return figures
        expected: collections.Counter[str] = collections.Counter()
        for kind, outcome in CALL_KINDS.items():
            if outcome:
                expected[outcome] += counts[kind]
        reloads_wanted = baseline.get("restmcp_reloads_total", 0) + counts["reload"]
        failures_wanted = baseline.get("restmcp_reload_failures_total", 0) + counts["reload_rejected"]

        def settled() -> bool:
            samples = self.metrics()
            figures["metrics"] = samples
            outcomes = calls_by_outcome(samples) - calls_by_outcome(baseline)
            return (+outcomes == +expected and samples.get("restmcp_tool_calls_in_flight") == 0
                    and samples.get("restmcp_sessions") == 0 and samples.get("restmcp_open_streams") == 0
                    and samples.get("restmcp_reloads_total") == reloads_wanted
                    and samples.get("restmcp_reload_failures_total") == failures_wanted
                    and self.list_changed == counts["reload"])

        self.wait_for(settled, seconds=10)
        samples = figures.get("metrics", {})
        outcomes = calls_by_outcome(samples) - calls_by_outcome(baseline)
        figures["outcomes"] = outcomes
        if +outcomes != +expected:
            self.stats.bad("metrics_mismatch", f"restmcp_tool_calls_total by outcome {dict(+outcomes)}, "
                                               f"the client counted {dict(+expected)} (cancelled: "
                                               f"{counts['cancelled']} by notification, "
                                               f"{counts['disconnected']} by closing the connection)")
        for gauge in ("restmcp_tool_calls_in_flight", "restmcp_sessions", "restmcp_open_streams"):
            if samples.get(gauge) != 0:
                self.stats.bad("left_open", f"{gauge} is {samples.get(gauge)} after the traffic stopped")
        if samples.get("restmcp_reloads_total") != reloads_wanted:
            self.stats.bad("metrics_mismatch", f"restmcp_reloads_total {samples.get('restmcp_reloads_total')}, "
                                               f"the client saw {reloads_wanted:.0f}")
        if samples.get("restmcp_reload_failures_total") != failures_wanted:
            self.stats.bad("metrics_mismatch", f"restmcp_reload_failures_total "
                                               f"{samples.get('restmcp_reload_failures_total')}, wrote {failures_wanted:.0f} broken")
        if self.list_changed != counts["reload"]:
            self.stats.bad("list_changed", f"{self.list_changed} notifications/tools/list_changed on the GET "
                                           f"stream for {counts['reload']} reloads")
        refused = {k: v for k, v in samples.items() if k.startswith("restmcp_http_refused_total") and v}
        if refused:
            self.stats.bad("refused", f"restmcp refused requests: {refused}")
        # A clean shutdown, with every call line written.
        self.restmcp.send_signal(signal.SIGTERM)
        try:
            code = self.restmcp.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.stats.bad("shutdown", "restmcp did not exit within 30 s of SIGTERM")
            return figures
        if code != 0:
            self.stats.bad("shutdown", f"restmcp exited with status {code} after SIGTERM")
        for thread in self.threads:
            if thread.name == "log":
                thread.join(timeout=10)
        logged = +self.log_outcomes
        expected["unknown_tool"] = counts["unknown_tool"]
        if logged != +expected:
            self.stats.bad("log_mismatch", f"call log lines by outcome {dict(logged)}, the client counted "
                                           f"{dict(+expected)}")
        return figures

    def report(self, duration: float, counts: collections.Counter[str], figures: dict, interrupted: bool) -> int:
        args = self.args
        _, unexpected = self.stats.snapshot()
        calls = sum(counts[k] for k in CALL_KINDS)
        lines = [f"soak: {duration:.0f} s{' (interrupted)' if interrupted else ''}, {args.workers} workers, "
                 f"reload every {args.reload_every} s, warm-up {args.warmup} s, seed {args.seed}",
                 f"calls: {calls} ({calls / max(duration, 1e-9):.0f}/s)"]
        for kind in CALL_KINDS:
            lines.append(f"  {kind:<16}{counts[kind]:>10}")
        lines.append(f"  {'list':<16}{counts['list']:>10}  (whole listings; {counts['list_pages']} pages)")
        lines.append(f"  {'reload':<16}{counts['reload']:>10}  (+ {counts['reload_rejected']} broken overlays "
                     f"rejected; {self.list_changed} list_changed notifications on the GET stream)")
        lines.append(f"  {'session_renewed':<16}{counts['session_renewed']:>10}  (new session, DELETE of the old one)")
        if "outcomes" in figures:
            outcomes = " ".join(f"{k}={v}" for k, v in sorted(figures["outcomes"].items()))
            lines.append(f"/metrics restmcp_tool_calls_total: {outcomes or 'none'}")
        if self.log_outcomes:
            logged = " ".join(f"{k}={v}" for k, v in sorted(self.log_outcomes.items()))
            lines.append(f"log: call lines {logged}; other lines by level {dict(self.log_levels)} ('other': the banner)")
        # RSS: the first sample at or after the warm-up, the last, the maximum, and the slope.
        failed_rss = False
        after = [(t, mb) for t, mb in self.rss if t >= args.warmup]
        if len(after) >= 2:
            warm, end = after[0][1], after[-1][1]
            peak = max(mb for _, mb in self.rss)
            n = len(after)
            mean_t = sum(t for t, _ in after) / n
            mean_mb = sum(mb for _, mb in after) / n
            spread = sum((t - mean_t) ** 2 for t, _ in after)
            slope = sum((t - mean_t) * (mb - mean_mb) for t, mb in after) / spread * 60 if spread else 0.0
            growth = (end - warm) / warm * 100
            failed_rss = end > warm * 1.10
            lines.append(f"RSS: start {self.rss_start:.1f} MB, after warm-up {warm:.1f} MB, end {end:.1f} MB "
                         f"({growth:+.1f} % since warm-up, limit +10 %), max {peak:.1f} MB; "
                         f"slope after warm-up {slope:+.3f} MB/min over {n} samples")
        else:
            lines.append(f"RSS: start {self.rss_start:.1f} MB; too few samples after the warm-up to judge")
        if unexpected:
            lines.append(f"unexpected errors: {sum(unexpected.values())}")
            for kind, n in unexpected.most_common():
                lines.append(f"  {kind}: {n}")
                for example in self.stats.examples[kind]:
                    lines.append(f"    e.g. {example}")
        else:
            lines.append("unexpected errors: none")
        failed = failed_rss or bool(unexpected)
        reasons = [r for r, bad in (("RSS grew more than 10 % after the warm-up", failed_rss),
                                    ("unexpected errors", bool(unexpected))) if bad]
        lines.append("soak: FAIL (" + "; ".join(reasons) + ")" if failed else "soak: PASS")
        print("\n".join(lines), flush=True)
        if failed:
            if self.log_tail:
                say("the last lines restmcp logged (besides call lines):")
                for line in list(self.log_tail)[-15:]:
                    print(f"  {line}", file=sys.stderr)
        if args.json:
            with open(args.json, "w") as file:
                json.dump({"duration_s": duration, "calls": calls, "counts": dict(counts),
                           "unexpected": dict(unexpected), "rss_mb": self.rss, "rss_start_mb": self.rss_start,
                           "metrics_outcomes": dict(figures.get("outcomes", {})), "passed": not failed}, file)
        if failed:
            return 1
        return 130 if interrupted else 0


def resolve_binary(flag: str | None) -> str:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    given = flag or os.environ.get("RESTMCP_BIN")
    binary = given or "target/release/restmcp"
    if not os.path.isabs(binary):
        binary = os.path.normpath(os.path.join(root, binary))
    if not os.path.exists(binary):
        if given:
            raise SystemExit(f"soak: {binary} not found")
        say("building restmcp (release)")
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=root, check=True)
    return binary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=600, help="seconds of traffic (default 600)")
    parser.add_argument("--warmup", type=float, default=60, help="seconds before the RSS baseline (default 60)")
    parser.add_argument("--workers", type=int, default=8, help="client threads, half of them stateless (default 8)")
    parser.add_argument("--reload-every", type=float, default=10, help="seconds between reloads (default 10)")
    parser.add_argument("--bin", help="the restmcp binary (default $RESTMCP_BIN, else target/release/restmcp)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the traffic mix (default 1)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON to FILE")
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        return serve_upstream()
    if args.warmup >= args.duration:
        parser.error("--warmup must be shorter than --duration")
    if args.workers < 1 or args.reload_every <= 0:
        parser.error("--workers must be at least 1 and --reload-every positive")
    binary = resolve_binary(args.bin)
    work = tempfile.mkdtemp(prefix="restmcp-soak-")
    soak = Soak(args, binary, work)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM: like Ctrl-C
    code = 1
    try:
        code = soak.run()
    except KeyboardInterrupt:
        say("interrupted")
        code = 130
    except Exception as e:  # noqa: BLE001 - report, clean up, fail
        say(f"error: {type(e).__name__}: {e}")
        for line in list(soak.log_tail)[-15:]:
            print(f"  {line}", file=sys.stderr)
        code = 1
    finally:
        soak.cleanup()
        if code in (0, 130):
            shutil.rmtree(work, ignore_errors=True)
        else:
            say(f"kept {work} (config, specs, restmcp.log)")
    return code


if __name__ == "__main__":
    sys.exit(main())
