#!/usr/bin/env python3
"""Idempotency for non-idempotent operations, with a real upstream, a real Redis
and two restmcp replicas sharing it, driven by the official MCP Python SDK.

restmcp serves tests/idempotency/idem-api.yaml as the API "pets", whose paths are under httpbin's
/anything/ (and /delay/{n} for a slow call): httpbin 0.10.4 under gunicorn, an upstream nobody
here wrote, which echoes each request back with its headers, so a result shows the
Idempotency-Key restmcp sent. gunicorn's access log (--access-logfile, whose format here ends
with `key="<the request's Idempotency-Key header>"`) is the witness of what did, or did not,
reach the upstream, and with which key: before reading it a check sends httpbin a marker request
and waits for its line, so everything restmcp sent earlier is in the file by then.

Redis: Debian's `redis-server`, started here on free loopback ports, each in a directory of its
own, from a config file (`save ""`, `appendonly no`: nothing written to disk):
  S  shared by the replicas A and B;
  P  with `requirepass` (a random password);
  O  the one stopped mid-test (and started again), then frozen (SIGSTOP) and thawed.
restmcp (`restmcp serve`, all on 127.0.0.1 and free ports, killed on any exit), every one with
`[apis.pets] idempotency_header = "Idempotency-Key"`, `confirm = "destructive"` and the
confirmation state key from SHARED_CONFIRM_KEY (one value for all), unless said otherwise:
  A, B  `[server.store] url = redis://S`, idempotency_ttl_seconds = 600: two replicas;
  C, D  no [server.store] (in-process): two replicas that share nothing but the state key;
  N     no idempotency_header, no store, no confirm (what an operation's own declared header does);
  P     redis://P with `password_env = "REDIS_PASSWORD"`, idempotency_ttl_seconds = 2, RUST_LOG=debug;
  Q     redis://P with a wrong password in REDIS_PASSWORD;
  O     redis://O;
  E1, E2  redis://S behind `[server.oauth]` (HS256 tokens signed here, secret from
        OAUTH_HMAC_SECRET; the issuer is never contacted): callers told apart.

Checks, with the SDK's `mcp.Client` over Streamable HTTP at 2025-11-25 (mode "legacy":
initialize and a session) and at 2026-07-28 (mode "auto": server/discover, stateless):
  - tools/list: createCharge, slowCharge (POST) and updateCharge (PATCH) have an optional string
    argument `idempotency_key`; listCharges (GET) and deleteCharge (DELETE) have none;
    createRefund and createPayout, which declare the header (`Idempotency-Key`,
    `idempotency-key`), have that argument and no `idempotency_key`;
  - createCharge without a key, twice: both reach httpbin, each with an Idempotency-Key header,
    two different values; no replay;
  - with a key: httpbin gets it in the header (and not in the JSON body), once; the repeat at A
    and the retry at B are answered from the store (the same result, `_meta
    {"io.restmcp/idempotentReplay": true}`), nothing sent; the same arguments in another member
    order are the same arguments; the key with other arguments is an isError result ("used with
    other arguments") at A and at B, nothing sent; the same key on another tool is another entry;
    a key with CR LF in it never adds a header line; arguments refused before sending store
    nothing under the key (the corrected call with it, at B, is sent);
  - createRefund / createPayout: the declared header argument is the key (sent as is, a repeat
    at B replayed); without it a fresh generated key per call;
  - slowCharge (httpbin /delay/3) with a key: a repeat at A and at B while the first is still
    running are isError results ("still running") that come back before the first ends, nothing
    sent; httpbin sees one POST; afterwards the repeat is a replay;
  - six calls with one new key at once, three at A and three at B: one is sent.
A POST with a key is retried like an idempotent request (chargeWhileDown, httpbin's 503): 1 +
max_retries POSTs, all with one key (the caller's or the generated one); without
idempotency_header (N) one POST, no key.
Callers (E1, E2): alice's retry at the other replica is replayed; bob with her key and her
arguments, and carol with her key and other arguments, are sent (entries are per caller).
Without a store (C, D; SDK at 2026-07-28): a repeat at C is replayed, but the retry at D is sent
again (two POSTs with one key): the documented behaviour, and why [server.store] exists.
Server N: createCharge sends no Idempotency-Key; createRefund still sends one (generated, or the
argument's) and replays a repeat.
updateCharge (PATCH, destructive) with a key, confirmed through the SDK's elicitation callback:
the header is the key (what a repeat then does is printed as a note).
Confirmation states across replicas (raw 2026-07-28 JSON-RPC over httpx2): a requestState
accepted at A and replayed at B (and at A) is refused with -32602, nothing sent; one issued by A
and first accepted at B is then refused at A; the same without a store (C, D) is printed as a note.
Redis S afterwards: restmcp wrote keys, and every one of them expires (TTL 1..600 s).
The password (P): a key is stored and replayed (the Redis server refuses commands without
AUTH, so restmcp authenticated); the key is forgotten after idempotency_ttl_seconds (2 s: the
call is sent again); neither the password nor the wrong one (Q) ever appears in restmcp's
stderr (P logs at debug level); Q never sends a call with a key (it fails closed, or refuses to
start); a store url with a password in it is refused at startup without repeating it.
The store unreachable (O, redis-server stopped): a call with a key (new, or the repeat of one
stored before) is an isError result saying the idempotency store cannot be reached, nothing
sent; calls without a key still work; once redis-server is back a call with a key works again.
Frozen (SIGSTOP: connections accepted, never answered): a call with a key is an isError result
about the store within HUNG_LIMIT s, nothing sent; thawed, a new key works and replays, and the
key whose call was refused while frozen is free again within RELEASE_LIMIT s (its retry is sent,
not told "still running" for a call that never ran); Redis O's entries are printed.

Output: `ok N - name` / `not ok N - name` (with `#` detail lines), then `1..N` and
`idempotency-python: P passed, F failed`; exit status 0 only when nothing failed. On failure (or
with IDEM_TEST_KEEP=1) the work directory (configs, every process's stderr) is kept and named.

Usage: python_idempotency.py --bin PATH/TO/restmcp [--redis-server PATH] [--httpbin URL --access-log FILE]
(run by tests/idempotency/run.sh in a venv with mcp==2.3.0, httpbin==0.10.4 and gunicorn==27.0.1;
without --httpbin it starts its own httpbin under gunicorn with the venv's Python; an httpbin
given must log with ACCESS_FORMAT below, or the keys are not seen).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
import harness  # noqa: E402 - tests/lib/harness.py: results, processes, httpbin and its access log
from harness import (  # noqa: E402
    CHILDREN, NEW, OLD, STEP, AccessLog, Child, R, dump, error_text, finish, free_port, install_signals, kill_all, note,
    result_of, run_suites, save_logs, short, start_httpbin, summary,
)

SUITE_TIMEOUT = 120.0  # seconds: one suite
HARD_LIMIT = 480  # seconds: the process kills itself (and its children) past this
API = "pets"
REPLAY = "io.restmcp/idempotentReplay"
AB_TTL = 600  # A's and B's idempotency_ttl_seconds
P_TTL = 2  # P's
SLOW = 3  # seconds httpbin takes to answer slowCharge
MAX_RETRIES = 2  # apis.NAME.max_retries, the default
RELEASE_LIMIT = 15  # seconds after the thaw for a key whose call was refused to be usable again
HUNG_LIMIT = 8  # seconds: a call with a key while the store does not answer (timeout_seconds is 2 by default)
# gunicorn's access log: the request line, status, size and the request's Idempotency-Key
# header ("-" when there was none).
ISSUER = "http://127.0.0.1:9/issuer"  # E1's and E2's token issuer: never contacted (HMAC-signed tokens)
ACCESS_FORMAT = '%(h)s %(t)s "%(r)s" %(s)s %(b)s key="%({idempotency-key}i)s"'

# --------------------------------------------------------------------------------------
# Processes (tests/lib/harness.py)


def child_env(extra: dict[str, str]) -> dict[str, str]:
    return harness.child_env(extra, prefixes=("IDEM_TEST_",), names=("REDIS_PASSWORD", "SHARED_CONFIRM_KEY", "RUST_LOG"))


# --------------------------------------------------------------------------------------
# Redis: Debian's redis-server, and raw RESP to look into it


class RespError(Exception):
    pass


def resp_encode(args: tuple[Any, ...]) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        data = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def resp_read(f: Any) -> Any:
    line = f.readline()
    if not line:
        raise ConnectionError("the Redis server closed the connection")
    kind, rest = line[:1], line[1:].rstrip(b"\r\n")
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        return RespError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2]
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [resp_read(f) for _ in range(n)]
    raise ConnectionError(f"not RESP: {line[:80]!r}")


class Redis:
    """One redis-server of ours: a free loopback port, a directory and a config file of its own."""

    def __init__(self, name: str, binary: str, work: Path, password: str | None = None) -> None:
        self.name = name
        self.binary = binary
        self.port = free_port()
        self.password = password
        self.dir = work / f"redis-{name}"
        self.dir.mkdir()
        self.conf = self.dir / "redis.conf"
        lines = [f"port {self.port}", "bind 127.0.0.1", "protected-mode yes", "daemonize no", 'logfile ""',
                 'save ""', "appendonly no", f"dir {self.dir}", "databases 4"]
        if password:
            lines.append(f"requirepass {password}")
        self.conf.write_text("\n".join(lines) + "\n")
        self.conf.chmod(0o600)
        self.child: Child | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.starts += 1
        self.child = Child(f"redis-server {self.name} (start {self.starts})", [self.binary, str(self.conf)],
                           child_env({}), self.dir)
        CHILDREN.append(self.child)
        self.child.wait_for(r"Ready to accept connections", "stdout")

    def stop(self) -> int | None:
        assert self.child is not None
        self.child.stop()
        return self.child.proc.returncode

    def command(self, *args: Any, auth: bool = True) -> Any:
        """One command over a fresh connection (AUTH first when the server has a password)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            f = s.makefile("rb")
            commands: list[tuple[Any, ...]] = []
            if auth and self.password:
                commands.append(("AUTH", self.password))
            commands.append(args)
            s.sendall(b"".join(resp_encode(c) for c in commands))
            replies = [resp_read(f) for _ in commands]
        for reply in replies[:-1]:
            if isinstance(reply, RespError):
                raise reply
        return replies[-1]

    def keys(self) -> list[bytes]:
        cursor, found = b"0", []
        while True:
            reply = self.command("SCAN", cursor, "COUNT", 1000)
            if isinstance(reply, RespError):
                raise reply
            cursor, batch = reply
            found.extend(batch)
            if cursor in (b"0", "0"):
                return found


# --------------------------------------------------------------------------------------
# httpbin's access log: what reached the upstream, with which Idempotency-Key

LOG_LINE = re.compile(r'"([A-Z]+) (\S+) HTTP/[\d.]+" \d+ \S+ key="([^"]*)"')

Sent = tuple[str, str, str | None]  # method, target, Idempotency-Key (None: none sent)


def sent_of(line: str) -> Sent | None:
    """(method, target, Idempotency-Key) of an access log line in ACCESS_FORMAT."""
    m = LOG_LINE.search(line)
    if not m:
        return None
    key = m.group(3)
    return (m.group(1), m.group(2), None if key in ("-", "") else key)


def fmt(reqs: list[Sent]) -> str:
    return short(", ".join(f"{m} {t} [key {k!r}]" for m, t, k in reqs) or "none", 700)


# --------------------------------------------------------------------------------------
# The world


class World:
    work: Path
    bin: str
    httpbin: str
    log: AccessLog
    confirm_key: str
    redis_s: Redis
    redis_p: Redis
    redis_o: Redis
    urls: dict[str, str]
    servers: dict[str, Child]
    q_exited: str | None
    wrong_password: str
    hmac_secret: str


def write_config(w: World, name: str, port: int, store: str, api: str) -> Path:
    path = w.work / f"{name}.toml"
    path.write_text(f"""[server]
listen = "127.0.0.1:{port}"
{store}
[server.confirm]
state_key_env = "SHARED_CONFIRM_KEY"

[apis.{API}]
spec = "idem-api.yaml"
base_url = "{w.httpbin}"
{api}""")
    return path


def store_block(redis: Redis, ttl: int | None = None, password: bool = False) -> str:
    lines = ["[server.store]", f'url = "{redis.url}"']
    if password:
        lines.append('password_env = "REDIS_PASSWORD"')
    if ttl is not None:
        lines.append(f"idempotency_ttl_seconds = {ttl}")
    return "\n".join(lines) + "\n"


IDEM_API = 'confirm = "destructive"\nidempotency_header = "Idempotency-Key"\n'


def start(args: argparse.Namespace, work: Path) -> World:
    w = World()
    w.work = work
    w.bin = args.bin
    w.servers = {}
    if args.httpbin:
        w.httpbin = args.httpbin.rstrip("/")
        w.log = AccessLog(Path(args.access_log).resolve(), w.httpbin, "idem", sent_of)
    else:
        w.httpbin, log = start_httpbin(work, ACCESS_FORMAT, threads=8)
        w.log = AccessLog(log, w.httpbin, "idem", sent_of)
    shutil.copy(HERE / "idem-api.yaml", work / "idem-api.yaml")

    w.redis_s = Redis("S", args.redis_server, work)
    w.redis_p = Redis("P", args.redis_server, work, password="pw-" + secrets.token_urlsafe(24))
    w.redis_o = Redis("O", args.redis_server, work)
    for redis in (w.redis_s, w.redis_p, w.redis_o):
        redis.start()

    w.confirm_key = secrets.token_urlsafe(32)
    base = {"SHARED_CONFIRM_KEY": w.confirm_key}
    wrong = "wrong-" + secrets.token_urlsafe(24)
    plan = {
        "a": (store_block(w.redis_s, AB_TTL), IDEM_API, base),
        "b": (store_block(w.redis_s, AB_TTL), IDEM_API, base),
        "c": ("", IDEM_API, base),
        "d": ("", IDEM_API, base),
        "n": ("", "", base),
        "p": (store_block(w.redis_p, P_TTL, password=True), IDEM_API,
              {**base, "REDIS_PASSWORD": w.redis_p.password or "", "RUST_LOG": "debug"}),
        "q": (store_block(w.redis_p, password=True), IDEM_API, {**base, "REDIS_PASSWORD": wrong}),
        "o": (store_block(w.redis_o), IDEM_API, base),
    }
    w.wrong_password = wrong
    ports = {name: free_port() for name in list(plan) + ["e1", "e2"]}
    # E1, E2: replicas sharing Redis S behind OAuth; callers are told apart by their tokens
    # (HS256, signed here with a secret restmcp reads from OAUTH_HMAC_SECRET).
    w.hmac_secret = secrets.token_urlsafe(32)
    for name in ("e1", "e2"):
        oauth = (f'[server.oauth]\nresource = "http://127.0.0.1:{ports[name]}/mcp"\nissuers = ["{ISSUER}"]\n'
                 'algorithms = ["HS256"]\nhmac_secret_env = "OAUTH_HMAC_SECRET"\n')
        plan[name] = (store_block(w.redis_s, AB_TTL) + oauth, IDEM_API, {**base, "OAUTH_HMAC_SECRET": w.hmac_secret})
    for name, (store, api, env) in plan.items():
        config = write_config(w, name, ports[name], store, api)
        child = Child(f"restmcp serve ({name.upper()})", [w.bin, "serve", "--config", str(config)], child_env(env), work)
        CHILDREN.append(child)
        w.servers[name] = child
    w.q_exited = None
    for name, child in w.servers.items():
        try:
            child.wait_for(r"MCP over Streamable HTTP at http://", "stderr")
        except RuntimeError as e:
            # Q (a wrong Redis password) may refuse to start, or not get ready: that is
            # checked, not fatal.
            if name != "q":
                raise
            w.q_exited = child.text() if child.proc.poll() is not None else f"not ready: {e}"
    w.urls = {name: f"http://127.0.0.1:{ports[name]}/mcp" for name in plan}
    return w


# --------------------------------------------------------------------------------------
# Results of tools/call


def result_text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def echo_of(result: types.CallToolResult) -> dict[str, Any] | None:
    """httpbin's echo (of /anything/: method, url, json, headers; of /delay/: url, headers, no
    method): the structured content, else the JSON of the text."""
    data = result.structured_content
    if isinstance(data, dict) and "result" in data and "headers" not in data:
        data = data["result"]
    if isinstance(data, dict) and "headers" in data:
        return data
    try:
        data = json.loads(result_text(result))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def sent_key(echo: dict[str, Any] | None) -> str | None:
    """The Idempotency-Key header httpbin received (any case), None without one."""
    headers = (echo or {}).get("headers") or {}
    for name, value in headers.items() if isinstance(headers, dict) else []:
        if name.lower() == "idempotency-key":
            return value
    return None


def replayed(result: types.CallToolResult) -> bool:
    return (result.meta or {}).get(REPLAY) is True


OTHER_ARGS = re.compile(r"other arguments|different arguments|another set of arguments|arguments (differ|do not match|that differ)", re.I)
RUNNING = re.compile(r"still running|in progress|in flight|not (yet )?finished|has not (yet )?(finished|completed|answered)", re.I)
STORE = re.compile(r"\bstore\b", re.I)
UNREACHABLE = re.compile(r"reach|unavailable|connect|down\b|not respond|did not answer|timed? ?out", re.I)


def fresh_key(slug: str) -> str:
    return f"{slug}-{secrets.token_hex(8)}"


def client(url: str, mode: str, asker: Any = None) -> Client:
    return Client(url, mode=mode, elicitation_callback=asker, read_timeout_seconds=STEP)


def props(tool: types.Tool) -> tuple[dict[str, Any], list[str]]:
    schema = tool.input_schema or {}
    return schema.get("properties") or {}, list(schema.get("required") or [])


def header_arg(tool: types.Tool) -> str | None:
    """The name of the tool's argument for a declared Idempotency-Key header (any case)."""
    p, _ = props(tool)
    return next((name for name in p if name.lower() == "idempotency-key"), None)


# --------------------------------------------------------------------------------------
# The shared store: A and B, with the SDK at each revision


async def tools_checks(w: World, c: Client, label: str) -> dict[str, types.Tool]:
    tools = {t.name: t for t in (await c.list_tools()).tools}
    keyed, plain = [], {}
    for name in ("createCharge", "slowCharge", "updateCharge"):
        p, req = props(tools[name]) if name in tools else ({}, [])
        keyed.append((name, p.get("idempotency_key"), "idempotency_key" in req))
    R.check(f"{label}: tools/list: createCharge, slowCharge (POST) and updateCharge (PATCH) have an optional string argument idempotency_key",
            all(isinstance(s, dict) and s.get("type") == "string" and not r for _, s, r in keyed), short(keyed, 800))
    for name in ("listCharges", "deleteCharge"):
        plain[name] = sorted(props(tools[name])[0]) if name in tools else None
    R.check(f"{label}: tools/list: listCharges (GET) and deleteCharge (DELETE) have no idempotency_key",
            all(v is not None and "idempotency_key" not in v for v in plain.values()), short(plain))
    declared = {name: (header_arg(tools[name]), sorted(props(tools[name])[0])) if name in tools else None
                for name in ("createRefund", "createPayout")}
    R.check(f"{label}: tools/list: createRefund and createPayout keep their declared header argument "
            "(Idempotency-Key, idempotency-key) and get no idempotency_key",
            declared.get("createRefund", (None,))[0] == "Idempotency-Key"
            and declared.get("createPayout", (None,))[0] == "idempotency-key"
            and all("idempotency_key" not in v[1] for v in declared.values() if v), short(declared))
    return tools


async def shared_suite(w: World, version: str, mode: str, slug: str) -> None:
    label = f"shared {version}"
    async with client(w.urls["a"], mode) as ca, client(w.urls["b"], mode) as cb:
        R.check(f"{label}: the SDK connected to A and B at {version}",
                ca.protocol_version == version and cb.protocol_version == version,
                f"{ca.protocol_version!r}, {cb.protocol_version!r}")
        tools = await tools_checks(w, ca, label)

        # No key: one generated per call, nothing cached.
        body = {"amount": 100, "currency": "eur"}
        mark = await w.log.mark()
        r1 = await ca.call_tool("createCharge", dict(body))
        r2 = await ca.call_tool("createCharge", dict(body))
        sent = await w.log.since(mark)
        k1, k2 = sent_key(echo_of(r1)), sent_key(echo_of(r2))
        R.check(f"{label}: createCharge without a key, twice: both answered by httpbin, each with an Idempotency-Key header, "
                "two different values, no replay",
                r1.is_error is not True and r2.is_error is not True and bool(k1) and bool(k2) and k1 != k2
                and not replayed(r1) and not replayed(r2), f"keys {k1!r}, {k2!r}; {dump(r1)}; {dump(r2)}")
        R.check(f"{label}: createCharge without a key, twice: httpbin's log shows two POSTs with those two keys",
                sent == [("POST", "/anything/charges", k1), ("POST", "/anything/charges", k2)], fmt(sent))
        note(f"{label}: generated keys look like {k1!r}, {k2!r}")

        # With a key: sent once, then answered from the store at A and at B.
        key = fresh_key(slug)
        args = {"amount": 2500, "currency": "eur", "idempotency_key": key}
        mark = await w.log.mark()
        first = await ca.call_tool("createCharge", dict(args))
        sent = await w.log.since(mark)
        echo = echo_of(first)
        R.check(f"{label}: createCharge with idempotency_key: httpbin got that key in the Idempotency-Key header and "
                "the JSON body without it",
                first.is_error is not True and sent_key(echo) == key and (echo or {}).get("json") == {"amount": 2500, "currency": "eur"},
                dump(first))
        R.check(f"{label}: the first call with the key is no replay; httpbin's log shows one POST with the key",
                not replayed(first) and sent == [("POST", "/anything/charges", key)], f"_meta {first.meta!r}; {fmt(sent)}")

        mark = await w.log.mark()
        again = await ca.call_tool("createCharge", dict(args))
        at_b = await cb.call_tool("createCharge", dict(args))
        reordered = await cb.call_tool("createCharge", {"currency": "eur", "idempotency_key": key, "amount": 2500})
        sent = await w.log.since(mark)
        R.check(f"{label}: the repeat at A is answered from the store: the same result, _meta {REPLAY}: true",
                again.is_error is not True and replayed(again) and echo_of(again) == echo and result_text(again) == result_text(first),
                dump(again))
        R.check(f"{label}: the retry at replica B is answered from the shared store: the same result, _meta {REPLAY}: true",
                at_b.is_error is not True and replayed(at_b) and echo_of(at_b) == echo, dump(at_b))
        R.check(f"{label}: the same arguments in another member order (at B) are the same arguments: replayed",
                reordered.is_error is not True and replayed(reordered) and echo_of(reordered) == echo, dump(reordered))
        R.check(f"{label}: none of the repeats reached httpbin (one POST with the key in all)", sent == [], fmt(sent))

        # The key with other arguments.
        mark = await w.log.mark()
        other_a = await ca.call_tool("createCharge", {"amount": 9999, "currency": "eur", "idempotency_key": key})
        other_b = await cb.call_tool("createCharge", {"amount": 2500, "currency": "usd", "idempotency_key": key})
        sent = await w.log.since(mark)
        R.check(f"{label}: the key with other arguments, at A and at B: isError results saying the key was used with other arguments",
                other_a.is_error is True and other_b.is_error is True
                and bool(OTHER_ARGS.search(result_text(other_a))) and bool(OTHER_ARGS.search(result_text(other_b)))
                and not replayed(other_a) and not replayed(other_b), f"{dump(other_a)}; {dump(other_b)}")
        R.check(f"{label}: the key with other arguments: nothing reached httpbin", sent == [], fmt(sent))

        # A key that would add a header line of its own (CR LF in it): never sent as such.
        bad_key = f"{slug}-crlf\r\nX-Injected: yes"
        mark = await w.log.mark()
        crlf = await ca.call_tool("createCharge", {"amount": 2600, "currency": "eur", "idempotency_key": bad_key})
        sent = await w.log.since(mark)
        headers = {k.lower() for k in ((echo_of(crlf) or {}).get("headers") or {})}
        note(f"{label}: a key with CR LF in it: {'isError: ' + short(result_text(crlf), 200) if crlf.is_error else 'sent'}; "
             f"httpbin got {fmt(sent)}")
        R.check(f"{label}: a key with CR LF in it is refused (isError, nothing sent) or sent without the line it carries; "
                "httpbin never sees an X-Injected header",
                "x-injected" not in headers and ((crlf.is_error is True and sent == []) or crlf.is_error is not True),
                f"{dump(crlf)}; {fmt(sent)}")

        # Arguments refused before anything is sent store nothing under the key (as Stripe does:
        # a request that failed validation is not saved): the corrected call with it is sent.
        vkey = fresh_key(slug + "-invalid")
        mark = await w.log.mark()
        invalid = await ca.call_tool("createCharge", {"amount": "lots", "currency": "eur", "idempotency_key": vkey})
        corrected = await cb.call_tool("createCharge", {"amount": 2700, "currency": "eur", "idempotency_key": vkey})
        sent = await w.log.since(mark)
        R.check(f"{label}: invalid arguments with a key are refused, nothing sent; the corrected call with that key (at B) is sent",
                invalid.is_error is True and corrected.is_error is not True and not replayed(corrected)
                and sent_key(echo_of(corrected)) == vkey and sent == [("POST", "/anything/charges", vkey)],
                f"{dump(invalid)}; {dump(corrected)}; {fmt(sent)}")

        # The same key on another tool: keyed by tool too, so another entry.
        mark = await w.log.mark()
        slow0 = await cb.call_tool("slowCharge", {"seconds": 0, "amount": 2500, "currency": "eur", "idempotency_key": key})
        sent = await w.log.since(mark)
        R.check(f"{label}: the same key on another tool (slowCharge) is another entry: sent with the key, no replay, no error",
                slow0.is_error is not True and not replayed(slow0) and sent_key(echo_of(slow0)) == key
                and sent == [("POST", "/delay/0", key)], f"{dump(slow0)}; {fmt(sent)}")

        # createRefund: the declared header argument is the key.
        refund_arg = header_arg(tools["createRefund"]) or "Idempotency-Key"
        rkey = fresh_key(slug + "-refund")
        rargs = {"charge": f"ch_{slug}", "amount": 100, refund_arg: rkey}
        mark = await w.log.mark()
        refund = await ca.call_tool("createRefund", dict(rargs))
        refund_b = await cb.call_tool("createRefund", dict(rargs))
        sent = await w.log.since(mark)
        recho = echo_of(refund)
        R.check(f"{label}: createRefund's declared {refund_arg} argument is sent as the key; the retry at B is replayed",
                refund.is_error is not True and sent_key(recho) == rkey and (recho or {}).get("json") == {"charge": f"ch_{slug}", "amount": 100}
                and not replayed(refund) and replayed(refund_b) and echo_of(refund_b) == recho,
                f"{dump(refund)}; {dump(refund_b)}")
        R.check(f"{label}: createRefund with its key: httpbin got one POST with it", sent == [("POST", "/anything/refunds", rkey)], fmt(sent))

        mark = await w.log.mark()
        n1 = await ca.call_tool("createRefund", {"charge": f"ch_{slug}"})
        n2 = await cb.call_tool("createRefund", {"charge": f"ch_{slug}"})
        sent = await w.log.since(mark)
        g1, g2 = sent_key(echo_of(n1)), sent_key(echo_of(n2))
        R.check(f"{label}: createRefund without its argument: a fresh generated key per call, both sent",
                bool(g1) and bool(g2) and g1 != g2 and not replayed(n1) and not replayed(n2)
                and sent == [("POST", "/anything/refunds", g1), ("POST", "/anything/refunds", g2)],
                f"{g1!r}, {g2!r}; {fmt(sent)}")

        payout_arg = header_arg(tools["createPayout"]) or "idempotency-key"
        pkey = fresh_key(slug + "-payout")
        pargs = {"amount": 5, "currency": "eur", payout_arg: pkey}
        mark = await w.log.mark()
        payout = await ca.call_tool("createPayout", dict(pargs))
        payout_b = await cb.call_tool("createPayout", dict(pargs))
        sent = await w.log.since(mark)
        R.check(f"{label}: createPayout (header declared as {payout_arg!r}): its argument is the key, sent once, replayed at B",
                sent_key(echo_of(payout)) == pkey and replayed(payout_b) and echo_of(payout_b) == echo_of(payout)
                and sent == [("POST", "/anything/payouts", pkey)], f"{dump(payout)}; {dump(payout_b)}; {fmt(sent)}")

        # A repeat while the first call is still running.
        skey = fresh_key(slug + "-slow")
        sargs = {"seconds": SLOW, "amount": 700, "currency": "eur", "idempotency_key": skey}
        got: dict[str, Any] = {}
        mark = await w.log.mark()

        async def first_slow() -> None:
            got["first"] = await ca.call_tool("slowCharge", dict(sargs))
            got["first_done"] = time.monotonic()

        async with anyio.create_task_group() as tg:
            tg.start_soon(first_slow)
            await anyio.sleep(1.0)
            got["a"] = await ca.call_tool("slowCharge", dict(sargs))
            got["b"] = await cb.call_tool("slowCharge", dict(sargs))
            got["early"] = "first_done" not in got
        sent = await w.log.since(mark)
        slow_a, slow_b, slow_first = got["a"], got["b"], got["first"]
        R.check(f"{label}: a repeat at A and at B while the first slowCharge is still running: isError results saying "
                "it is still running, back before the first ended",
                slow_a.is_error is True and slow_b.is_error is True and got["early"]
                and bool(RUNNING.search(result_text(slow_a))) and bool(RUNNING.search(result_text(slow_b))),
                f"before the first ended: {got['early']}; {dump(slow_a)}; {dump(slow_b)}")
        R.check(f"{label}: the first slowCharge ends with httpbin's echo; httpbin got one POST /delay/{SLOW} with the key",
                slow_first.is_error is not True and sent_key(echo_of(slow_first)) == skey
                and sent == [("POST", f"/delay/{SLOW}", skey)], f"{dump(slow_first)}; {fmt(sent)}")
        mark = await w.log.mark()
        later = await cb.call_tool("slowCharge", dict(sargs))
        sent = await w.log.since(mark)
        R.check(f"{label}: once it has ended, the repeat at B is a replay of its result; nothing sent",
                replayed(later) and echo_of(later) == echo_of(slow_first) and sent == [], f"{dump(later)}; {fmt(sent)}")

        # Six calls with one new key at once, three at A and three at B (set-if-absent in the
        # store): one is sent, the others are told it is still running (or, if late, replayed).
        rkey = fresh_key(slug + "-race")
        rargs = {"seconds": 1, "amount": 800, "currency": "eur", "idempotency_key": rkey}
        answers: list[types.CallToolResult] = []

        async def one(c: Client) -> None:
            answers.append(await c.call_tool("slowCharge", dict(rargs)))

        mark = await w.log.mark()
        async with anyio.create_task_group() as tg:
            for i in range(6):
                tg.start_soon(one, ca if i % 2 == 0 else cb)
        sent = await w.log.since(mark)
        ran = [r for r in answers if r.is_error is not True and not replayed(r)]
        running = [r for r in answers if r.is_error is True and RUNNING.search(result_text(r))]
        replays = [r for r in answers if r.is_error is not True and replayed(r)]
        R.check(f"{label}: six calls with one new key at once (three at A, three at B): one sent, the others "
                "'still running' (or replays); httpbin got one POST",
                len(ran) == 1 and len(running) + len(replays) == 5 and sent == [("POST", "/delay/1", rkey)],
                f"{len(ran)} sent, {len(running)} still running, {len(replays)} replays, others "
                f"{short([dump(r) for r in answers if r not in ran + running + replays], 600)}; {fmt(sent)}")


# --------------------------------------------------------------------------------------
# Retries: a POST with a key is retried like an idempotent request, with the same key


async def retries_suite(w: World) -> None:
    label = f"retries {NEW}"
    attempts = 1 + MAX_RETRIES
    async with client(w.urls["a"], "auto") as ca, client(w.urls["b"], "auto") as cb, client(w.urls["n"], "auto") as cn:
        key = fresh_key("retry")
        args = {"amount": 5000, "currency": "eur", "idempotency_key": key}
        mark = await w.log.mark()
        down = await ca.call_tool("chargeWhileDown", dict(args))
        sent = await w.log.since(mark)
        R.check(f"{label}: chargeWhileDown (POST, httpbin answers 503) with a key: an isError result; httpbin got {attempts} POSTs "
                f"(1 + max_retries {MAX_RETRIES}), every one with that key",
                down.is_error is True and sent == [("POST", "/status/503", key)] * attempts, f"{dump(down)}; {fmt(sent)}")
        mark = await w.log.mark()
        unkeyed = await ca.call_tool("chargeWhileDown", {"amount": 5000, "currency": "eur"})
        sent = await w.log.since(mark)
        keys = {k for _, _, k in sent}
        R.check(f"{label}: without a key too: {attempts} POSTs, all with the one key restmcp generated for the call",
                unkeyed.is_error is True and len(sent) == attempts and all(t == "/status/503" for _, t, _ in sent)
                and len(keys) == 1 and None not in keys, fmt(sent))
        mark = await w.log.mark()
        plain = await cn.call_tool("chargeWhileDown", {"amount": 5000, "currency": "eur"})
        sent = await w.log.since(mark)
        R.check(f"{label}: server N (no idempotency_header): the POST has no key and is not retried (one POST)",
                plain.is_error is True and sent == [("POST", "/status/503", None)], fmt(sent))
        mark = await w.log.mark()
        repeat = await cb.call_tool("chargeWhileDown", dict(args))
        sent = await w.log.since(mark)
        note(f"{label}: the keyed 503 call repeated at B: {'replayed' if replayed(repeat) else 'not replayed'}"
             f"{' (isError)' if repeat.is_error else ''}; httpbin got {fmt(sent)}")


# --------------------------------------------------------------------------------------
# Callers: E1 and E2 behind OAuth, sharing Redis S


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token_for(w: World, subject: str) -> str:
    """An HS256 access token of ISSUER for `subject`, valid for E1 and E2 (RFC 9068 claims)."""
    now = int(time.time())
    header = b64url(json.dumps({"alg": "HS256", "typ": "at+jwt"}).encode())
    claims = b64url(json.dumps({"iss": ISSUER, "sub": subject, "aud": [w.urls["e1"], w.urls["e2"]],
                                "iat": now, "exp": now + 600, "client_id": "idem-test"}).encode())
    signature = hmac.new(w.hmac_secret.encode(), f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64url(signature)}"


def client_as(w: World, url: str, mode: str, subject: str) -> Client:
    http = httpx2.AsyncClient(timeout=STEP, headers={"Authorization": f"Bearer {token_for(w, subject)}"})
    return Client(streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=STEP)


async def callers_suite(w: World) -> None:
    label = f"callers {NEW}"
    async with client_as(w, w.urls["e1"], "auto", "alice") as alice1, client_as(w, w.urls["e2"], "auto", "alice") as alice2, \
            client_as(w, w.urls["e1"], "auto", "bob") as bob1, client_as(w, w.urls["e2"], "auto", "bob") as bob2, \
            client_as(w, w.urls["e1"], "auto", "carol") as carol1:
        key = fresh_key("callers")
        args = {"amount": 6100, "currency": "eur", "idempotency_key": key}
        mark = await w.log.mark()
        first = await alice1.call_tool("createCharge", dict(args))
        again = await alice2.call_tool("createCharge", dict(args))
        sent = await w.log.since(mark)
        R.check(f"{label}: alice's call with a key at E1 is sent once; her retry at E2 is replayed (OAuth callers, shared store)",
                first.is_error is not True and not replayed(first) and replayed(again) and echo_of(again) == echo_of(first)
                and sent == [("POST", "/anything/charges", key)], f"{dump(first)}; {dump(again)}; {fmt(sent)}")
        mark = await w.log.mark()
        bob = await bob2.call_tool("createCharge", dict(args))
        carol = await carol1.call_tool("createCharge", {"amount": 1, "currency": "usd", "idempotency_key": key})
        sent = await w.log.since(mark)
        R.check(f"{label}: bob, with alice's key and her arguments (at E2), is not given alice's stored result: his call is sent",
                bob.is_error is not True and not replayed(bob) and sent_key(echo_of(bob)) == key, dump(bob))
        R.check(f"{label}: carol, with alice's key and other arguments (at E1), gets no 'other arguments' error: her call is sent",
                carol.is_error is not True and not replayed(carol) and sent_key(echo_of(carol)) == key, dump(carol))
        R.check(f"{label}: httpbin got bob's and carol's calls, both with that key",
                sent == [("POST", "/anything/charges", key)] * 2, fmt(sent))
        mark = await w.log.mark()
        bob_again = await bob1.call_tool("createCharge", dict(args))
        carol_other = await carol1.call_tool("createCharge", {"amount": 2, "currency": "usd", "idempotency_key": key})
        sent = await w.log.since(mark)
        R.check(f"{label}: then each has an entry of their own: bob's repeat (at E1) is replayed with his result, "
                "carol's key with other arguments is an error; nothing sent",
                replayed(bob_again) and echo_of(bob_again) == echo_of(bob) and carol_other.is_error is True
                and bool(OTHER_ARGS.search(result_text(carol_other))) and sent == [],
                f"{dump(bob_again)}; {dump(carol_other)}; {fmt(sent)}")


# --------------------------------------------------------------------------------------
# No store: C and D; the plain API: N; PATCH with a confirmation


async def local_suite(w: World) -> None:
    label = f"in-process {NEW}"
    async with client(w.urls["c"], "auto") as cc, client(w.urls["d"], "auto") as cd:
        key = fresh_key("local")
        args = {"amount": 4200, "currency": "eur", "idempotency_key": key}
        mark = await w.log.mark()
        first = await cc.call_tool("createCharge", dict(args))
        again = await cc.call_tool("createCharge", dict(args))
        sent = await w.log.since(mark)
        R.check(f"{label}: without [server.store], replica C still replays its own repeat (one POST with the key)",
                first.is_error is not True and not replayed(first) and replayed(again) and echo_of(again) == echo_of(first)
                and sent == [("POST", "/anything/charges", key)], f"{dump(again)}; {fmt(sent)}")
        mark = await w.log.mark()
        at_d = await cd.call_tool("createCharge", dict(args))
        sent = await w.log.since(mark)
        R.check(f"{label}: documented behaviour: without a shared store the retry at replica D is sent again "
                "(httpbin gets a second POST with the same key): why [server.store] exists",
                at_d.is_error is not True and not replayed(at_d) and sent == [("POST", "/anything/charges", key)],
                f"{dump(at_d)}; {fmt(sent)}")


async def plain_suite(w: World) -> None:
    label = f"no idempotency_header {NEW}"
    async with client(w.urls["n"], "auto") as cn:
        tools = {t.name: t for t in (await cn.list_tools()).tools}
        R.check(f"{label}: createCharge has no idempotency_key argument; createRefund keeps its Idempotency-Key",
                "idempotency_key" not in props(tools["createCharge"])[0] and header_arg(tools["createRefund"]) == "Idempotency-Key",
                short({n: sorted(props(t)[0]) for n, t in tools.items() if n in ("createCharge", "createRefund")}))
        mark = await w.log.mark()
        charge = await cn.call_tool("createCharge", {"amount": 1, "currency": "eur"})
        refund = await cn.call_tool("createRefund", {"charge": "ch_plain"})
        sent = await w.log.since(mark)
        generated = sent_key(echo_of(refund))
        R.check(f"{label}: createCharge sends no Idempotency-Key; createRefund (declared header) sends a generated one",
                charge.is_error is not True and sent_key(echo_of(charge)) is None and bool(generated)
                and sent == [("POST", "/anything/charges", None), ("POST", "/anything/refunds", generated)],
                f"{dump(charge)}; {dump(refund)}; {fmt(sent)}")
        key = fresh_key("plain")
        mark = await w.log.mark()
        r1 = await cn.call_tool("createRefund", {"charge": "ch_plain", "Idempotency-Key": key})
        r2 = await cn.call_tool("createRefund", {"charge": "ch_plain", "Idempotency-Key": key})
        sent = await w.log.since(mark)
        R.check(f"{label}: createRefund with its declared key, twice: sent once, the repeat replayed (in-process store)",
                sent_key(echo_of(r1)) == key and not replayed(r1) and replayed(r2)
                and sent == [("POST", "/anything/refunds", key)], f"{dump(r2)}; {fmt(sent)}")


class Asker:
    """The client's elicitation callback: records every request and accepts."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.seen.append(params)
        return types.ElicitResult(action="accept", content={})


async def patch_suite(w: World, version: str, mode: str, slug: str) -> None:
    label = f"PATCH {version}"
    asker = Asker()
    async with client(w.urls["a"], mode, asker) as ca:
        key = fresh_key(slug)
        args = {"chargeId": slug, "description": "refunded in part", "idempotency_key": key}
        mark = await w.log.mark()
        result = await ca.call_tool("updateCharge", dict(args))
        sent = await w.log.since(mark)
        echo = echo_of(result)
        R.check(f"{label}: updateCharge (PATCH, confirmed by the callback) sends idempotency_key as the Idempotency-Key header, "
                "the body without it",
                len(asker.seen) == 1 and result.is_error is not True and sent_key(echo) == key
                and (echo or {}).get("json") == {"description": "refunded in part"}
                and sent == [("PATCH", f"/anything/charges/{slug}", key)],
                f"{len(asker.seen)} elicitation(s); {dump(result)}; {fmt(sent)}")
        asker.seen = []
        mark = await w.log.mark()
        repeat = await ca.call_tool("updateCharge", dict(args))
        sent = await w.log.since(mark)
        note(f"{label}: the same PATCH repeated with its key: asked {len(asker.seen)} time(s), "
             f"{'replayed' if replayed(repeat) else 'isError' if repeat.is_error else 'not replayed'}; httpbin got {fmt(sent)}")


# --------------------------------------------------------------------------------------
# Confirmation states across replicas: raw 2026-07-28 JSON-RPC


class Raw(harness.Raw):
    client_name = "restmcp-idempotency-raw"


def state_of(message: dict[str, Any]) -> str:
    r = result_of(message)
    state = r.get("requestState") if r.get("resultType") == "input_required" else None
    return state if isinstance(state, str) else ""


def is_invalid_params(message: dict[str, Any]) -> bool:
    err = message.get("error")
    return "result" not in message and isinstance(err, dict) and err.get("code") == -32602


def raw_echo(message: dict[str, Any]) -> dict[str, Any] | None:
    data = result_of(message).get("structuredContent")
    if isinstance(data, dict) and "headers" in data:
        return data
    text = "\n".join(c.get("text", "") for c in result_of(message).get("content") or [] if isinstance(c, dict))
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


async def confirm_suite(w: World) -> None:
    async with httpx2.AsyncClient(timeout=STEP) as http:
        a, b, c, d = (Raw(http, w.urls[n]) for n in "abcd")

        # Issued and accepted at A, replayed at B and at A.
        mark = await w.log.mark()
        state = state_of(await a.call("deleteCharge", {"chargeId": "confirm-ab"}))
        accepted = await a.call("deleteCharge", {"chargeId": "confirm-ab"}, answer="accept", state=state)
        at_b = await b.call("deleteCharge", {"chargeId": "confirm-ab"}, answer="accept", state=state)
        at_a = await a.call("deleteCharge", {"chargeId": "confirm-ab"}, answer="accept", state=state)
        sent = await w.log.since(mark)
        R.check("confirm: deleteCharge at A: input_required, then accepted at A: httpbin's echo of the DELETE",
                bool(state) and (raw_echo(accepted) or {}).get("method") == "DELETE", short(accepted, 600))
        R.check("confirm: that accepted requestState replayed at replica B (same store) is refused with -32602",
                is_invalid_params(at_b), short(at_b, 600))
        R.check("confirm: and replayed at A, refused with -32602", is_invalid_params(at_a), short(at_a, 600))
        R.check("confirm: httpbin got one DELETE only", [(m, t) for m, t, _ in sent] == [("DELETE", "/anything/charges/confirm-ab")], fmt(sent))

        # Issued at A, first accepted at B, then replayed at A.
        mark = await w.log.mark()
        state = state_of(await a.call("deleteCharge", {"chargeId": "confirm-ba"}))
        at_b = await b.call("deleteCharge", {"chargeId": "confirm-ba"}, answer="accept", state=state)
        at_a = await a.call("deleteCharge", {"chargeId": "confirm-ba"}, answer="accept", state=state)
        sent = await w.log.since(mark)
        R.check("confirm: a requestState issued by A and accepted at B runs there; replayed at A it is refused (-32602); one DELETE",
                bool(state) and (raw_echo(at_b) or {}).get("method") == "DELETE" and is_invalid_params(at_a)
                and [(m, t) for m, t, _ in sent] == [("DELETE", "/anything/charges/confirm-ba")],
                f"B: {short(at_b, 300)}; A: {short(at_a, 300)}; {fmt(sent)}")

        # The same without a store: printed, not checked.
        mark = await w.log.mark()
        state = state_of(await c.call("deleteCharge", {"chargeId": "confirm-cd"}))
        at_c = await c.call("deleteCharge", {"chargeId": "confirm-cd"}, answer="accept", state=state)
        at_d = await d.call("deleteCharge", {"chargeId": "confirm-cd"}, answer="accept", state=state)
        sent = await w.log.since(mark)
        note(f"without a store: a state accepted at C ({'sent' if (raw_echo(at_c) or {}).get('method') == 'DELETE' else short(at_c, 200)}) "
             f"replayed at D: {'refused (-32602)' if is_invalid_params(at_d) else 'NOT refused: ' + short(at_d, 200)}; httpbin got {fmt(sent)}")


async def store_keys_suite(w: World) -> None:
    keys = w.redis_s.keys()
    ttls = {k.decode(errors="replace"): w.redis_s.command("TTL", k) for k in keys}
    note(f"Redis S holds {len(keys)} key(s), e.g. {short(sorted(ttls)[:6], 500)}")
    R.check(f"Redis S: restmcp wrote keys, and every one expires (TTL 1..{AB_TTL} s)",
            bool(keys) and all(isinstance(t, int) and 0 < t <= AB_TTL for t in ttls.values()),
            short({k: t for k, t in ttls.items() if not (isinstance(t, int) and 0 < t <= AB_TTL)} or ttls, 800))


# --------------------------------------------------------------------------------------
# The password (P, Q) and a URL with one in it


async def password_suite(w: World) -> None:
    redis = w.redis_p
    password = redis.password or ""
    wrong = w.wrong_password
    noauth = redis.command("DBSIZE", auth=False)
    R.check("password: Redis P refuses commands without AUTH (NOAUTH)",
            isinstance(noauth, RespError) and "NOAUTH" in str(noauth), repr(noauth))
    async with client(w.urls["p"], "auto") as cp:
        key = fresh_key("pw")
        args = {"amount": 300, "currency": "eur", "idempotency_key": key}
        mark = await w.log.mark()
        first = await cp.call_tool("createCharge", dict(args))
        again = await cp.call_tool("createCharge", dict(args))
        sent = await w.log.since(mark)
        size = redis.command("DBSIZE")
        R.check("password: P (password_env) stores the call in Redis P and replays the repeat; one POST",
                first.is_error is not True and replayed(again) and echo_of(again) == echo_of(first)
                and isinstance(size, int) and size > 0 and sent == [("POST", "/anything/charges", key)],
                f"DBSIZE {size!r}; {dump(first)}; {dump(again)}; {fmt(sent)}")
        await anyio.sleep(P_TTL + 1.5)
        mark = await w.log.mark()
        late = await cp.call_tool("createCharge", dict(args))
        sent = await w.log.since(mark)
        R.check(f"password: after idempotency_ttl_seconds ({P_TTL} s) the key is forgotten: the call is sent again",
                late.is_error is not True and not replayed(late) and sent == [("POST", "/anything/charges", key)],
                f"{dump(late)}; {fmt(sent)}")

    # Q: a wrong password.
    q = w.servers["q"]
    if w.q_exited is not None:
        R.check("password: Q (a wrong password) refused to start, saying why (the store, its password)",
                q.proc.poll() is not None and bool(re.search(r"store|redis|auth|password", w.q_exited, re.I)),
                short(w.q_exited, 800))
    else:
        async with client(w.urls["q"], "auto") as cq:
            key = fresh_key("wrongpw")
            mark = await w.log.mark()
            keyed = await cq.call_tool("createCharge", {"amount": 1, "currency": "eur", "idempotency_key": key})
            unkeyed = await cq.call_tool("createCharge", {"amount": 1, "currency": "eur"})
            sent = await w.log.since(mark)
            R.check("password: Q (a wrong password) fails closed for a call with a key: isError, nothing sent with that key",
                    keyed.is_error is True and not any(k == key for _, _, k in sent), f"{dump(keyed)}; {fmt(sent)}")
            note(f"password: Q's call without a key: {'isError: ' + short(result_text(unkeyed), 200) if unkeyed.is_error else 'sent'}")
    p_err, q_err = w.servers["p"].text(), q.text()
    R.check("password: P logged (at debug level) and Q logged, but neither password appears in their output",
            bool(p_err) and password not in p_err and password not in q_err and wrong not in q_err and wrong not in p_err,
            f"P: {len(p_err)} chars, Q: {len(q_err)} chars; password in P: {password in p_err}, in Q: {password in q_err}, "
            f"wrong one in Q: {wrong in q_err}")
    note(f"password: Q said: {short([l for l in q_err.splitlines() if re.search(r'store|redis|auth', l, re.I)][:3], 600)}")

    # A password in the URL is refused at startup, and not repeated.
    secret = "s3cret-" + secrets.token_hex(8)
    bad = w.work / "url-with-password.toml"
    bad.write_text(f"""[server]
listen = "127.0.0.1:{free_port()}"
[server.store]
url = "redis://:{secret}@127.0.0.1:{redis.port}/0"
[apis.{API}]
spec = "idem-api.yaml"
base_url = "{w.httpbin}"
idempotency_header = "Idempotency-Key"
""")
    try:
        done = subprocess.run([w.bin, "serve", "--config", str(bad)], cwd=w.work, env=child_env({}), capture_output=True,
                              text=True, timeout=STEP, stdin=subprocess.DEVNULL)
        out = done.stdout + done.stderr
        R.check("password: a store url with a password in it is refused at startup, pointing at password_env, without repeating it",
                done.returncode != 0 and "password_env" in out and secret not in out, f"exit {done.returncode}: {short(out, 800)}")
    except subprocess.TimeoutExpired as e:
        R.check("password: a store url with a password in it is refused at startup", False,
                f"still serving after {STEP} s: {short(str(e.stderr or ''), 600)}")


# --------------------------------------------------------------------------------------
# The store unreachable (O)


async def outage_suite(w: World) -> None:
    label = f"outage {NEW}"
    redis = w.redis_o
    async with client(w.urls["o"], "auto") as co:
        before = fresh_key("before")
        bargs = {"amount": 10, "currency": "eur", "idempotency_key": before}
        mark = await w.log.mark()
        stored = await co.call_tool("createCharge", dict(bargs))
        sent = await w.log.since(mark)
        R.check(f"{label}: with Redis O up, a call with a key is sent once",
                stored.is_error is not True and sent == [("POST", "/anything/charges", before)], f"{dump(stored)}; {fmt(sent)}")

        code = redis.stop()
        note(f"{label}: redis-server O stopped (exit {code})")
        key = fresh_key("down")
        mark = await w.log.mark()
        t0 = time.monotonic()
        down = await co.call_tool("createCharge", {"amount": 11, "currency": "eur", "idempotency_key": key})
        took = time.monotonic() - t0
        repeat = await co.call_tool("createCharge", dict(bargs))
        unkeyed = await co.call_tool("createCharge", {"amount": 12, "currency": "eur"})
        listed = await co.call_tool("listCharges", {})
        sent = await w.log.since(mark)
        text = result_text(down)
        note(f"{label}: a call with a key, store down, answered in {took:.1f} s: {short(text, 300)!r}")
        R.check(f"{label}: store down: a call with a new key is an isError result saying the idempotency store cannot be reached",
                down.is_error is True and bool(STORE.search(text)) and bool(UNREACHABLE.search(text)), dump(down))
        R.check(f"{label}: store down: the repeat of a key stored before is an isError result too (neither replayed nor sent)",
                repeat.is_error is True and not replayed(repeat) and bool(STORE.search(result_text(repeat))), dump(repeat))
        generated = sent_key(echo_of(unkeyed))
        R.check(f"{label}: store down: calls without a key still work (createCharge with a generated key, listCharges)",
                unkeyed.is_error is not True and bool(generated) and listed.is_error is not True, f"{dump(unkeyed)}; {dump(listed)}")
        R.check(f"{label}: store down: httpbin got only those two calls, nothing with a caller's key",
                sorted(sent, key=str) == sorted([("POST", "/anything/charges", generated), ("GET", "/anything/charges", None)], key=str),
                fmt(sent))

        redis.start()
        note(f"{label}: redis-server O started again on port {redis.port}")
        key = fresh_key("back")
        mark = await w.log.mark()
        deadline = time.monotonic() + 15
        attempts, back = 0, None
        while time.monotonic() < deadline:
            attempts += 1
            back = await co.call_tool("createCharge", {"amount": 13, "currency": "eur", "idempotency_key": key})
            if back.is_error is not True:
                break
            await anyio.sleep(0.5)
        sent = await w.log.since(mark)
        R.check(f"{label}: once redis-server is back, a call with a key works again (within 15 s; {attempts} attempt(s)), sent once",
                back is not None and back.is_error is not True and sent == [("POST", "/anything/charges", key)],
                f"{dump(back)}; {fmt(sent)}")

        # A store that takes connections but never answers (redis-server frozen with SIGSTOP,
        # as behind a network partition): the call with a key must not hang, nor be sent.
        assert redis.child is not None
        pid = redis.child.proc.pid
        hung_key = fresh_key("hung")
        hargs = {"amount": 14, "currency": "eur", "idempotency_key": hung_key}
        mark = await w.log.mark()
        os.kill(pid, signal.SIGSTOP)
        try:
            t0 = time.monotonic()
            hung = await co.call_tool("createCharge", dict(hargs))
            took = time.monotonic() - t0
            unkeyed = await co.call_tool("createCharge", {"amount": 15, "currency": "eur"})
        finally:
            os.kill(pid, signal.SIGCONT)
        sent = await w.log.since(mark)
        note(f"{label}: redis-server frozen (SIGSTOP): a call with a key answered in {took:.1f} s: {short(result_text(hung), 300)!r}")
        R.check(f"{label}: store frozen (SIGSTOP): a call with a key is an isError result about the store within {HUNG_LIMIT} s, nothing sent",
                hung.is_error is True and bool(STORE.search(result_text(hung))) and took < HUNG_LIMIT
                and not any(k == hung_key for _, _, k in sent), f"{took:.1f} s; {dump(hung)}; {fmt(sent)}")
        R.check(f"{label}: store frozen: a call without a key still works",
                unkeyed.is_error is not True and bool(sent_key(echo_of(unkeyed))), dump(unkeyed))

        # Thawed: the connection must be usable again and answer the right replies.
        key = fresh_key("thawed")
        mark = await w.log.mark()
        deadline = time.monotonic() + 15
        attempts, back = 0, None
        while time.monotonic() < deadline:
            attempts += 1
            back = await co.call_tool("createCharge", {"amount": 16, "currency": "eur", "idempotency_key": key})
            if back.is_error is not True:
                break
            await anyio.sleep(0.5)
        again = await co.call_tool("createCharge", {"amount": 16, "currency": "eur", "idempotency_key": key})
        sent = await w.log.since(mark)
        R.check(f"{label}: redis-server thawed (SIGCONT): a call with a new key works again ({attempts} attempt(s)), sent once, "
                "its repeat replayed",
                back is not None and back.is_error is not True and replayed(again) and echo_of(again) == echo_of(back)
                and sent == [("POST", "/anything/charges", key)], f"{dump(back)}; {dump(again)}; {fmt(sent)}")
        # The call with hung_key was refused and never sent; restmcp documents that such a call
        # frees its key ("a call that never got [an answer] ... frees its key, and its retry is
        # sent again"). Its claim may still reach Redis once it thaws: the key must not stay
        # "still running" for a call that never ran.
        mark = await w.log.mark()
        deadline = time.monotonic() + RELEASE_LIMIT
        tries, retry = 0, None
        while True:
            tries += 1
            retry = await co.call_tool("createCharge", dict(hargs))
            if not (retry.is_error and RUNNING.search(result_text(retry))) or time.monotonic() > deadline:
                break
            await anyio.sleep(1.0)
        sent = await w.log.since(mark)
        note(f"{label}: the key whose call was refused while the store was frozen, retried after the thaw ({tries} time(s) "
             f"in {RELEASE_LIMIT} s): {'isError: ' + short(result_text(retry), 200) if retry.is_error else 'replayed' if replayed(retry) else 'sent'}; "
             f"httpbin got {fmt(sent)}")
        R.check(f"{label}: the key whose call was refused (never sent) while the store was frozen is free again after the thaw: "
                f"within {RELEASE_LIMIT} s its retry is sent, once, not told 'still running'",
                retry.is_error is not True and not replayed(retry) and sent == [("POST", "/anything/charges", hung_key)],
                f"{tries} attempt(s); last answer {dump(retry)}; httpbin: {fmt(sent)}")
        entries = []
        for k in redis.keys():
            value = redis.command("GET", k)
            entries.append((k.decode(errors="replace")[:40], redis.command("TTL", k),
                            short(value.decode(errors="replace") if isinstance(value, bytes) else repr(value), 120)))
        note(f"{label}: Redis O now holds (key, TTL, value): {short(entries, 1500)}")


# --------------------------------------------------------------------------------------


async def run(w: World) -> None:
    suites: list[tuple[str, Any]] = [
        (f"shared {OLD}", lambda: shared_suite(w, OLD, "legacy", "s25")),
        (f"shared {NEW}", lambda: shared_suite(w, NEW, "auto", "s26")),
        ("retries", lambda: retries_suite(w)),
        ("callers", lambda: callers_suite(w)),
        ("in-process", lambda: local_suite(w)),
        ("no idempotency_header", lambda: plain_suite(w)),
        (f"PATCH {OLD}", lambda: patch_suite(w, OLD, "legacy", "patch25")),
        (f"PATCH {NEW}", lambda: patch_suite(w, NEW, "auto", "patch26")),
        ("confirm", lambda: confirm_suite(w)),
        ("Redis S keys", lambda: store_keys_suite(w)),
        ("password", lambda: password_suite(w)),
        ("outage", lambda: outage_suite(w)),
    ]
    await run_suites(suites, SUITE_TIMEOUT)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="the restmcp binary")
    parser.add_argument("--redis-server", default=shutil.which("redis-server") or "/usr/bin/redis-server",
                        help="Debian's redis-server (default: from PATH)")
    parser.add_argument("--httpbin", help="a running httpbin's base URL (else one is started here)")
    parser.add_argument("--access-log", help="that httpbin's gunicorn --access-logfile, in ACCESS_FORMAT (with --httpbin)")
    args = parser.parse_args()
    args.bin = str(Path(args.bin).resolve())
    if bool(args.httpbin) != bool(args.access_log):
        parser.error("--httpbin and --access-log go together")
    if not os.access(args.redis_server, os.X_OK):
        parser.error(f"redis-server not found: {args.redis_server}")

    install_signals("idempotency-python", HARD_LIMIT)

    work = Path(tempfile.mkdtemp(prefix="restmcp-idem-py-"))
    w: World | None = None
    try:
        try:
            w = start(args, work)
        except Exception as e:  # noqa: BLE001
            R.check("start httpbin, redis-server and the restmcp servers", False, error_text(e))
        else:
            version = subprocess.run([args.redis_server, "--version"], capture_output=True, text=True).stdout.strip()
            note(f"{version}; httpbin {w.httpbin} (access log {w.log.path})")
            note("redis S :%d, P :%d (password), O :%d; restmcp %s" % (
                w.redis_s.port, w.redis_p.port, w.redis_o.port,
                ", ".join(f"{n.upper()} {u}" for n, u in w.urls.items())))
            anyio.run(run, w)
    finally:
        kill_all()
        save_logs(work)
        finish(work, "IDEM_TEST_KEEP")
    return summary("idempotency-python")


if __name__ == "__main__":
    sys.exit(main())
