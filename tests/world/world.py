#!/usr/bin/env python3
"""The third-party suite: restmcp against upstreams and clients nobody on the team wrote.

Upstreams, started on loopback from their registries:
  * httpbin (PyPI `httpbin`, the WSGI app behind httpbin.org) under gunicorn, described by
    tests/world/httpbin-openapi.yaml (OpenAPI 3.0.3) and httpbin-swagger2.yaml (Swagger 2.0);
  * a small FastAPI app (tests/world/app.py) under uvicorn, described by app-openapi.yaml
    (OpenAPI 3.0.3) and app-openapi-3.1.yaml.
Client: the official MCP Python SDK (`mcp`), over stdio (`restmcp stdio`, which negotiates
2026-07-28), Streamable HTTP (`restmcp serve`: 2026-07-28 by discovery, and 2025-11-25 by the
initialize handshake) and the legacy HTTP+SSE transport (2025-11-25 over /sse).

One named check per defect third-party software found in restmcp, d1 to d11 (d8 and d10 are
spec-level: they read `restmcp tools --json`). Each prints one line, `PASS name -- what was seen` or `FAIL name -- every problem`,
then `world: N passed, M failed`; the exit status is 0 only when nothing failed.

Usage: world.py --bin PATH/TO/restmcp [--shared DIR] [--only d1,d5]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import gzip
import hashlib
import json
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Awaitable, Callable

import anyio
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from harness import CHILDREN, PASS_FAIL, Child, R, child_env, describe, free_port, install_signals, kill_all, summary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PY = sys.executable

TIMEOUT = 30.0  # one MCP request or one upstream look-up
PART_TIMEOUT = 60.0  # one part of a check
START_TIMEOUT = 60.0  # an upstream or restmcp to accept connections
CONNECT_TIMEOUT = 120.0  # the four SDK clients to connect (discovery may fall back)
CHECKS_TIMEOUT = 300.0  # every check, and closing the clients
HARD_LIMIT = 420  # seconds: past this the driver kills its children and itself

LATEST = "2026-07-28"
SSE_EVENT_LIMIT = 1024 * 1024  # the Python SDK's max_event_size, for SSE on both transports
PAGE_LIMIT = 512 * 1024  # the tools/list page size restmcp keeps under

# --------------------------------------------------------------------------------------
# Results: tests/lib/harness.py's, as PASS/FAIL lines

R.style = PASS_FAIL


def short(value: Any, limit: int = 240) -> str:
    s = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    s = s.replace("\n", " ⏎ ")
    return s if len(s) <= limit else s[:limit] + "..."


def canon(value: Any) -> str:
    """Equality that tells 7 from 7.0 and true from 1."""
    return json.dumps(value, sort_keys=True)


class Check:
    """One named check: parts run in turn, each failure kept, one line at the end."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.problems: list[str] = []
        self.seen: list[str] = []
        self.started = time.monotonic()

    def expect(self, ok: bool, problem: str) -> bool:
        if not ok:
            self.problems.append(problem)
        return ok

    def note(self, text: str) -> None:
        self.seen.append(text)

    async def part(self, label: str, body: Callable[[], Awaitable[None]]) -> None:
        try:
            with anyio.fail_after(PART_TIMEOUT):
                await body()
        except TimeoutError:
            self.problems.append(f"{label}: no answer within {PART_TIMEOUT:.0f} s")
        except Exception as exc:  # the SDK raising is a finding, not a crash
            self.problems.append(f"{label}: {describe(exc)}")

    def report(self) -> None:
        took = f" ({time.monotonic() - self.started:.1f} s)"
        if self.problems:
            R.check(self.name, False, " | ".join(short(p, 400) for p in self.problems) + took)
        else:
            R.check(self.name, True, "; ".join(short(s, 200) for s in self.seen) + took)


# --------------------------------------------------------------------------------------
# Child processes: each in its own process group, killed with it on exit (tests/lib/harness.py:
# Child, CHILDREN, kill_all).


def restmcp_env() -> dict[str, str]:
    # restmcp reads every RESTMCP_* variable as configuration and refuses unknown keys, so the
    # runner's own RESTMCP_BIN must not reach it.
    # Every tool listed, whatever the description's size: d6 reads GitHub's whole tools/list
    # over legacy SSE and d8 walks every GitHub tool for dangling $refs (discovery = "auto"
    # would serve GitHub in search mode).
    env = child_env({"RESTMCP_TOOLS__AUTO_BUDGET_TOKENS": "0"})
    env.setdefault("RUST_LOG", "warn")
    return env


class Server:
    """A server child on a free loopback port, its output kept (harness.Child)."""

    def __init__(self, label: str, args: list[str], env: dict[str, str] | None = None, port: int | None = None) -> None:
        self.label = label
        self.port = port or free_port()
        argv = [a.replace("{port}", str(self.port)) for a in args]
        self.child = Child(label, argv, dict(os.environ) if env is None else env, Path(ROOT))
        CHILDREN.append(self.child)
        self.proc = self.child.proc

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def wait_ready(self, path: str = "/") -> None:
        """Until an HTTP GET of `path` gets any answer."""
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.label} exited with {self.proc.returncode}: {self.log_text()}")
            try:
                await anyio.to_thread.run_sync(lambda: urllib.request.urlopen(self.base + path, timeout=2).read())
                return
            except urllib.error.HTTPError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.label}: nothing on port {self.port} after {START_TIMEOUT:.0f} s") from None
                await anyio.sleep(0.1)

    def peak_rss_mib(self) -> float | None:
        """The process's peak resident set (VmHWM), in MiB."""
        try:
            with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def stop(self) -> None:
        self.child.stop()

    def log_text(self) -> str:
        return self.child.text()[-3000:]


def serve_child(label: str, args: list[str]) -> Server:
    """`restmcp serve` on a free loopback port."""
    port = free_port()
    env = restmcp_env()
    env["RESTMCP_SERVER__LISTEN"] = f"127.0.0.1:{port}"
    return Server(label, args, env=env, port=port)


def http_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=TIMEOUT) as r:
        return json.loads(r.read())


def run_cli(binary: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary, *args], capture_output=True, text=True, timeout=120, env=restmcp_env(), cwd=ROOT, stdin=subprocess.DEVNULL
    )


# --------------------------------------------------------------------------------------
# Tool results


def texts(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content if getattr(b, "type", "") == "text")


def text_json(result: Any) -> Any:
    """The first text block parsed as JSON, or None."""
    for b in result.content:
        if getattr(b, "type", "") == "text":
            try:
                return json.loads(b.text)
            except ValueError:
                return None
    return None


def truncated(result: Any) -> bool:
    return bool(re.search(r"truncat", texts(result), re.IGNORECASE))


def unwrap(version: str, value: Any) -> Any:
    """The structured value as the data: {"result": v} before 2026-07-28 holds non-objects."""
    if version != LATEST and isinstance(value, dict) and set(value) == {"result"}:
        return value["result"]
    return value


def header(headers: dict[str, Any] | None, name: str) -> str | None:
    for k, v in (headers or {}).items():
        if k.lower() == name.lower():
            return v
    return None


def media_ranges(accept: str | None) -> list[tuple[str, float]]:
    out = []
    for item in (accept or "").split(","):
        fields = [f.strip() for f in item.split(";")]
        if not fields[0]:
            continue
        q = 1.0
        for f in fields[1:]:
            if f.lower().startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = -1
        out.append((fields[0].lower(), q))
    return out


def prop(schema: dict[str, Any] | None, name: str) -> tuple[str, dict[str, Any]] | None:
    """A property of an inputSchema by name, case-insensitively: (key, subschema)."""
    for k, v in ((schema or {}).get("properties") or {}).items():
        if k.lower() == name.lower():
            return k, v if isinstance(v, dict) else {}
    return None


# --------------------------------------------------------------------------------------
# The world


class World:
    def __init__(self, binary: str, shared: str | None) -> None:
        self.binary = binary
        self.shared = shared
        self.tmp = tempfile.mkdtemp(prefix="restmcp-world-")
        self.clients: dict[str, Any] = {}
        self.connect_errors: dict[str, str] = {}
        self.tools: dict[str, Any] = {}  # name -> Tool, as listed over Streamable HTTP
        self.app: Server | None = None
        self.httpbin: Server | None = None
        self.serve: Server | None = None
        self.config = os.path.join(self.tmp, "config.toml")

    # --- upstreams and restmcp ---------------------------------------------------------

    def start_upstreams(self) -> None:
        self.app = Server(
            "fastapi",
            [PY, "-m", "uvicorn", "app:app", "--app-dir", HERE, "--host", "127.0.0.1", "--port", "{port}",
             "--log-level", "warning", "--no-access-log"],
        )
        self.httpbin = Server(
            "httpbin",
            [PY, "-m", "gunicorn", "--bind", "127.0.0.1:{port}", "--workers", "2", "--threads", "4",
             "--log-level", "warning", "httpbin:app"],
        )

    def write_config(self, path: str, extra: dict[str, str] | None = None) -> None:
        assert self.app and self.httpbin
        extra = extra or {}
        apis = [
            ("app", "app-openapi.yaml", self.app.base),
            ("app31", "app-openapi-3.1.yaml", self.app.base),
            ("httpbin", "httpbin-openapi.yaml", self.httpbin.base),
            ("httpbin2", "httpbin-swagger2.yaml", self.httpbin.base),
        ]
        lines = ["[reload]", "enabled = false", ""]
        for name, spec, base in apis:
            lines += [f"[apis.{name}]", f"spec = {json.dumps(os.path.join(HERE, spec))}", f"base_url = {json.dumps(base)}",
                      # d6 is about the transports' own size limits, not the result budget,
                      # which tests/results covers.
                      "max_result_tokens = 0"]
            if name in extra:
                lines.append(extra[name])
            lines.append("")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))

    def start_serve(self) -> None:
        self.write_config(self.config)
        self.serve = serve_child("restmcp-serve", [self.binary, "serve", "--config", self.config])

    async def connect(self, stack: AsyncExitStack, stdio_log: Any) -> None:
        assert self.serve
        base = self.serve.base
        makers: list[tuple[str, Callable[[], Any]]] = [
            (
                "stdio",
                lambda: Client(
                    stdio_client(
                        StdioServerParameters(command=self.binary, args=["stdio", "--config", self.config], env=restmcp_env()),
                        errlog=stdio_log,
                    ),
                    read_timeout_seconds=TIMEOUT,
                ),
            ),
            ("http", lambda: Client(f"{base}/mcp", read_timeout_seconds=TIMEOUT)),
            ("http-2025", lambda: Client(f"{base}/mcp", mode="legacy", read_timeout_seconds=TIMEOUT)),
            ("sse", lambda: Client(sse_client(f"{base}/sse", timeout=TIMEOUT), mode="legacy", read_timeout_seconds=TIMEOUT)),
        ]
        for label, make in makers:
            try:
                self.clients[label] = await stack.enter_async_context(make())
            except Exception as exc:
                self.connect_errors[label] = describe(exc)
        if "http" in self.clients:
            cursor = None
            for _ in range(100):
                page = await self.clients["http"].list_tools(cursor=cursor)
                for t in page.tools:
                    self.tools[t.name] = t
                cursor = page.next_cursor
                if not cursor:
                    break
        versions = {k: c.protocol_version for k, c in self.clients.items()}
        print(f"clients: {versions}" + (f"; not connected: {self.connect_errors}" if self.connect_errors else ""), flush=True)

    def client(self, check: Check, label: str) -> Any | None:
        c = self.clients.get(label)
        if c is None:
            check.expect(False, f"{label}: not connected ({self.connect_errors.get(label, 'unknown')})")
        return c

    def input_schema(self, name: str) -> dict[str, Any]:
        t = self.tools.get(name)
        return dict(t.input_schema) if t is not None else {}

    def seen(self, path: str) -> list[dict[str, Any]]:
        assert self.app
        return http_json(f"{self.app.base}/_seen?path={urllib.request.quote(path, safe='')}")


# --------------------------------------------------------------------------------------
# The checks, one per defect


async def d1_accept(w: World) -> Check:
    c = Check("d1_accept_petstore_style_xml_or_json")
    expected_pet = {"id": 7, "name": "doggie", "status": "available", "tags": [{"id": 1, "name": "good"}]}

    # Petstore style: XML documented first, then JSON; the SDK validates structuredContent
    # against the outputSchema, and fails the call when it is missing.
    for label in ("stdio", "http", "http-2025", "sse"):
        client = w.client(c, label)
        if client is None:
            continue

        async def pet(client: Any = client, label: str = label) -> None:
            r = await client.call_tool("getPetById", {"petId": 7})
            c.expect(r.is_error is False, f"{label} getPetById: isError={r.is_error} text={short(texts(r))}")
            c.expect(
                canon(r.structured_content) == canon(expected_pet),
                f"{label} getPetById: structuredContent={short(r.structured_content)} text={short(texts(r), 120)}",
            )

        await c.part(f"{label} getPetById", pet)

    async def accept_seen() -> None:
        seen = w.seen("/pets/7")
        c.expect(bool(seen), "the app saw no GET /pets/7")
        if not seen:
            return
        accept = seen[-1]["headers"].get("accept")
        ranges = media_ranges(accept)
        ok = bool(ranges) and ranges[0] == ("application/json", 1.0)
        xml_q = dict(ranges).get("application/xml")
        ok = ok and xml_q is not None and 0 < xml_q < 1
        c.expect(ok, f"Accept sent for getPetById was {accept!r} (want application/json first, application/xml;q<1)")
        c.note(f"getPetById Accept: {accept}")

    await c.part("Accept for XML-then-JSON", accept_seen)

    http = w.client(c, "http")
    if http is not None:

        async def echoed(tool: str) -> str | None:
            r = await http.call_tool(tool, {})
            data = r.structured_content if isinstance(r.structured_content, dict) and r.structured_content else text_json(r)
            c.expect(r.is_error is False and isinstance(data, dict), f"{tool}: isError={r.is_error} {short(texts(r))}")
            return header((data or {}).get("headers") if isinstance(data, dict) else None, "Accept")

        async def httpbin_accepts() -> None:
            negotiate = await echoed("anythingNegotiate")
            ranges = media_ranges(negotiate)
            c.expect(
                bool(ranges) and ranges[0][0] == "application/json" and 0 < dict(ranges).get("application/xml", 0) < 1,
                f"httpbin saw Accept {negotiate!r} for an XML-then-JSON operation",
            )
            vendor = await echoed("anythingVendor")
            ranges = media_ranges(vendor)
            c.expect(
                bool(ranges) and ranges[0][0] == "application/vnd.world.v2+json" and 0 < dict(ranges).get("text/csv", 0) < 1,
                f"httpbin saw Accept {vendor!r} for a vendor-JSON-and-CSV operation",
            )
            swagger2 = await echoed("anythingPetSwagger2")
            ranges = media_ranges(swagger2)
            c.expect(
                bool(ranges) and ranges[0][0] == "application/json" and 0 < dict(ranges).get("application/xml", 0) < 1,
                f"httpbin saw Accept {swagger2!r} for a Swagger 2.0 operation producing XML, then JSON",
            )
            undocumented = await echoed("anythingUndocumented")
            c.expect(undocumented == "*/*", f"httpbin saw Accept {undocumented!r} for an operation documenting no media type")
            c.note(f"httpbin saw {negotiate!r}, {vendor!r}, {swagger2!r}, {undocumented!r}")

        await c.part("Accept seen by httpbin", httpbin_accepts)

        async def stubborn() -> None:
            # Documents XML and JSON but answers XML whatever is asked: the result must not
            # claim structured data it does not have (the empty placeholder {} claims nothing).
            r = await http.call_tool("getPetStubborn", {"petId": 3})
            c.expect("<Pet>" in texts(r), f"getPetStubborn: the XML is not in the text: {short(texts(r))}")
            c.expect(r.structured_content != {}, "getPetStubborn: structuredContent is the placeholder {}")
            c.note(f"XML answer to a JSON-promising tool: isError={r.is_error}, structured={short(r.structured_content, 60)}")

        await c.part("getPetStubborn", stubborn)

        async def xml_only() -> None:
            r = await http.call_tool("getReport", {})
            c.expect(r.is_error is False and "<report>" in texts(r), f"getReport: isError={r.is_error} {short(texts(r))}")
            c.expect(r.structured_content != {}, "getReport: structuredContent is the placeholder {}")

        await c.part("getReport (XML only)", xml_only)

    async def override() -> None:
        # apis.NAME.accept replaces the Accept built from the description.
        cfg = os.path.join(w.tmp, "accept.toml")
        w.write_config(cfg, {"httpbin": 'accept = "application/vnd.github+json"'})
        p = run_cli(w.binary, ["call", "anythingNegotiate", "--config", cfg])
        if not c.expect(p.returncode == 0, f"apis.httpbin.accept: restmcp call exited {p.returncode}: {short(p.stderr.strip(), 300)}"):
            return
        out = json.loads(p.stdout)
        data = out.get("structuredContent") or {}
        got = header(data.get("headers"), "Accept")
        c.expect(got == "application/vnd.github+json", f"apis.httpbin.accept: httpbin saw Accept {got!r}")

    await c.part("accept override", override)
    return c


SCALARS: dict[str, Any] = {
    "getString": "hello, world",
    "getNumber": 42.5,
    "getInteger": 7,
    "getBoolean": True,
    "listNames": ["alpha", "beta", "gamma"],
    "listThings": [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}],
}


async def d2_scalars(w: World) -> Check:
    c = Check("d2_scalar_and_array_results")
    for label in ("stdio", "http", "http-2025", "sse"):
        client = w.client(c, label)
        if client is None:
            continue

        async def run(client: Any = client, label: str = label) -> None:
            version = client.protocol_version
            for tool, value in SCALARS.items():
                expected = value if version == LATEST else {"result": value}
                r = await client.call_tool(tool, {})
                c.expect(r.is_error is False, f"{label}/{version} {tool}: isError={r.is_error} {short(texts(r))}")
                c.expect(
                    canon(r.structured_content) == canon(expected),
                    f"{label}/{version} {tool}: structuredContent={short(r.structured_content)} (want {short(expected)})",
                )
                c.expect(
                    canon(text_json(r)) == canon(expected),
                    f"{label}/{version} {tool}: text={short(texts(r))} (want the structured value, {short(expected)})",
                )
            c.note(f"{label}:{version}")

        await c.part(label, run)
    return c


PNG_BYTES = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + bytes(range(256))
CSV_TEXT = "id,name\n1,alpha\n2,beta\n"


def file_argument(schema: dict[str, Any], key: str, data: bytes, filename: str) -> dict[str, Any]:
    """The arguments for a file property as its published inputSchema asks: base64 where it
    says contentEncoding base64, raw text otherwise; a filename where the schema offers one."""
    props = schema.get("properties") or {}
    sub = props.get(key) or {}
    args: dict[str, Any] = {}
    if sub.get("type") == "object" or "properties" in sub:
        inner = sub.get("properties") or {}
        value: dict[str, Any] = {}
        for k, v in inner.items():
            if k.lower() in ("content", "data", "value", "contents", "bytes"):
                value[k] = base64.b64encode(data).decode() if (v or {}).get("contentEncoding") == "base64" else data.decode("latin-1")
            elif "filename" in k.lower() or k.lower() == "name":
                value[k] = filename
        args[key] = value
    elif sub.get("contentEncoding") == "base64":
        args[key] = base64.b64encode(data).decode()
    else:
        args[key] = data.decode("utf-8")
    for k in props:
        low = k.lower()
        if k != key and "filename" in low and (low.startswith(key.lower()) or low == "filename"):
            args[k] = filename
    return args


async def d3_multipart(w: World) -> Check:
    c = Check("d3_multipart_file_part")
    client = w.client(c, "http")
    if client is None:
        return c

    async def upload(tool: str, key: str, data: bytes, filename: str, want_type: str | None, extra: dict[str, Any]) -> None:
        schema = w.input_schema(tool)
        sub = (schema.get("properties") or {}).get(key) or {}
        if sub.get("contentEncoding") != "base64" and sub.get("type") == "string":
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                data = CSV_TEXT.encode()  # the schema takes raw text only: send text
        args = {**file_argument(schema, key, data, filename), **extra}
        r = await client.call_tool(tool, args)
        got = r.structured_content if isinstance(r.structured_content, dict) else {}
        if not c.expect(r.is_error is False, f"{tool}: isError={r.is_error} {short(texts(r), 300)}"):
            return
        c.expect(bool(got.get("filename")), f"{tool}: the server saw no file name (not a file part): {short(got)}")
        named = any("filename" in k.lower() or isinstance(v, dict) for k, v in args.items())
        if named and got.get("filename"):
            c.expect(got.get("filename") == filename, f"{tool}: file named {got.get('filename')!r}, the call said {filename!r}")
        c.expect(got.get("sha256") == hashlib.sha256(data).hexdigest() and got.get("size") == len(data),
                 f"{tool}: the server got {got.get('size')} bytes with another digest (sent {len(data)})")
        if want_type:
            c.expect((got.get("content_type") or "").split(";")[0] == want_type,
                     f"{tool}: part Content-Type {got.get('content_type')!r}, want {want_type}")
        for k, v in extra.items():
            c.expect(got.get(k) == v, f"{tool}: field {k} arrived as {got.get(k)!r}")
        c.note(f"{tool}: {got.get('filename')} {got.get('content_type')} {got.get('size')} B")

    await c.part("uploadFile (format: binary)", lambda: upload("uploadFile", "file", CSV_TEXT.encode(), "rows.csv", None, {"note": "hi"}))
    await c.part("uploadAvatar (encoding contentType)", lambda: upload("uploadAvatar", "avatar", PNG_BYTES, "a.png", "image/png", {}))
    await c.part("uploadEncoded (contentEncoding base64)", lambda: upload("uploadEncoded", "file", PNG_BYTES, "b.png", "image/png", {"note": "x"}))
    await c.part("uploadCsv (contentMediaType only)", lambda: upload("uploadCsv", "file", CSV_TEXT.encode(), "c.csv", "text/csv", {}))

    async def httpbin_upload() -> None:
        schema = w.input_schema("anythingUpload")
        args = {**file_argument(schema, "file", CSV_TEXT.encode(), "rows.csv"), "title": "report"}
        r = await client.call_tool("anythingUpload", args)
        echo = r.structured_content if isinstance(r.structured_content, dict) else {}
        files, form = echo.get("files") or {}, echo.get("form") or {}
        c.expect("file" in files and "file" not in form,
                 f"httpbin (Werkzeug) put the file under form, not files: files={short(files)} form={short(form)}")
        c.expect(form.get("title") == "report", f"httpbin form: {short(form)}")

    await c.part("httpbin anythingUpload", httpbin_upload)
    return c


async def d4_swagger2_headers(w: World) -> Check:
    c = Check("d4_swagger2_header_params")
    client = w.client(c, "http")
    if client is None:
        return c
    schema = w.input_schema("headersWithAuth")
    typed = w.input_schema("anythingTyped")
    for name, s in (("Authorization", schema), ("Accept", schema), ("Content-Type", typed)):
        c.expect(prop(s, name) is not None, f"{name} is not an argument: {short(sorted((s.get('properties') or {}).keys()))}")

    async def headers() -> None:
        auth, accept = prop(schema, "Authorization"), prop(schema, "Accept")
        if auth is None or accept is None:
            return
        args = {auth[0]: "Token world-123", accept[0]: "application/hal+json"}
        rid = prop(schema, "X-Request-Id")
        if rid:
            args[rid[0]] = "r-1"
        r = await client.call_tool("headersWithAuth", args)
        got = (r.structured_content or {}).get("headers") if isinstance(r.structured_content, dict) else None
        c.expect(r.is_error is False, f"headersWithAuth: isError={r.is_error} {short(texts(r))}")
        c.expect(header(got, "Authorization") == "Token world-123", f"httpbin saw Authorization {header(got, 'Authorization')!r}")
        c.expect(header(got, "Accept") == "application/hal+json", f"httpbin saw Accept {header(got, 'Accept')!r}")
        c.note(f"httpbin saw Authorization={header(got, 'Authorization')!r} Accept={header(got, 'Accept')!r}")

    await c.part("headersWithAuth", headers)

    async def content_type() -> None:
        ct = prop(typed, "Content-Type")
        if ct is None:
            return
        body = prop(typed, "body")
        args = {ct[0]: "text/plain"}
        if body:
            args[body[0]] = "hello"
        r = await client.call_tool("anythingTyped", args)
        got = (r.structured_content or {}).get("headers") if isinstance(r.structured_content, dict) else None
        seen = (header(got, "Content-Type") or "").split(";")[0]
        c.expect(r.is_error is False and seen == "text/plain", f"anythingTyped: httpbin saw Content-Type {seen!r} ({short(texts(r))})")

    await c.part("anythingTyped", content_type)
    return c


def compressed_document(encoding: str) -> dict[str, Any]:  # app.py's compressed_document
    return {"encoding": encoding, "items": [{"id": i, "name": f"item {i}", "tags": ["a", "b", "c"]} for i in range(500)]}


async def d5_compression(w: World) -> Check:
    c = Check("d5_gzip_deflate_br_bomb")
    client = w.client(c, "http-2025")
    if client is None:
        return c

    async def httpbin_encoded() -> None:
        for tool, flag in (("gzip", "gzipped"), ("deflate", "deflated"), ("brotli", "brotli")):
            r = await client.call_tool(tool, {})
            got = r.structured_content if isinstance(r.structured_content, dict) else {}
            c.expect(r.is_error is False and got.get(flag) is True, f"httpbin /{tool}: isError={r.is_error} {short(texts(r), 200)}")
            if tool == "gzip" and got:
                c.note(f"Accept-Encoding sent: {header(got.get('headers'), 'Accept-Encoding')!r}")

    await c.part("httpbin /gzip /deflate /brotli", httpbin_encoded)

    async def app_encoded() -> None:
        for enc in ("gzip", "deflate", "br"):
            r = await client.call_tool("getCompressed", {"encoding": enc})
            c.expect(r.is_error is False and canon(r.structured_content) == canon(compressed_document(enc)),
                     f"app /compressed/{enc}: isError={r.is_error} {short(texts(r), 200)}")

    await c.part("FastAPI /compressed/{gzip,deflate,br}", app_encoded)

    async def bombs() -> None:
        assert w.serve
        before = w.serve.peak_rss_mib()
        for enc in ("gzip", "deflate", "br"):
            started = time.monotonic()
            r = await client.call_tool("getBomb", {"encoding": enc})
            took = time.monotonic() - started
            text = texts(r)
            # Either refused as too large or cut at the cap with the marker: never 256 MiB.
            c.expect(r.is_error is True or truncated(r), f"bomb {enc}: isError={r.is_error}, {len(text)} chars, no truncation marker")
            c.expect(len(text) < 8 * 1024 * 1024, f"bomb {enc}: {len(text)} chars of text reached the client")
            c.expect(took < 20, f"bomb {enc}: took {took:.1f} s")
            c.note(f"bomb {enc}: {'error' if r.is_error else 'truncated'} in {took:.1f} s ({short(text.splitlines()[-1] if text else '', 90)})")
        after = w.serve.peak_rss_mib()
        if before is not None and after is not None:
            c.expect(after - before < 128, f"restmcp's peak RSS grew {after - before:.0f} MiB over the bombs ({before:.0f} → {after:.0f})")
            c.note(f"peak RSS {before:.0f} → {after:.0f} MiB")
        r = await client.call_tool("getString", {})
        c.expect(r.is_error is False, "the session did not survive the bombs")

    await c.part("bombs", bombs)
    return c


async def d6_large(w: World) -> Check:
    c = Check("d6_large_result_over_sse")
    assert w.serve
    base = w.serve.base

    async def over(label: str, make: Callable[[], Any], progress: bool) -> None:
        async with make() as client:
            kwargs: dict[str, Any] = {}
            if progress:  # a progress token makes restmcp answer the POST with an SSE stream

                async def on_progress(_p: float, _t: float | None, _m: str | None) -> None:
                    pass

                kwargs["progress_callback"] = on_progress
            try:
                with anyio.fail_after(TIMEOUT):
                    r = await client.call_tool("getLarge", {"kib": 3072}, **kwargs)
            except Exception as exc:
                c.expect(False, f"{label}: a 3 MiB result killed the call: {describe(exc)}")
                r = None
            if r is not None:
                size = sum(len(getattr(b, "text", "")) for b in r.content)
                c.expect(truncated(r), f"{label}: a 3 MiB result arrived without a truncation marker ({size} chars)")
                c.expect(size < SSE_EVENT_LIMIT, f"{label}: {size} chars of content in one SSE event")
                c.note(f"{label}: {'truncated' if truncated(r) else 'whole'}, {size} chars")
            try:
                with anyio.fail_after(TIMEOUT):
                    again = await client.call_tool("getString", {})
                c.expect(again.is_error is False, f"{label}: the call after the large one failed")
            except Exception as exc:
                c.expect(False, f"{label}: the session died: {describe(exc)}")

    await c.part("legacy SSE", lambda: over(
        "legacy SSE", lambda: Client(sse_client(f"{base}/sse", timeout=TIMEOUT), mode="legacy", read_timeout_seconds=TIMEOUT), False))
    await c.part("Streamable HTTP SSE response", lambda: over(
        "Streamable HTTP with progress", lambda: Client(f"{base}/mcp", mode="legacy", read_timeout_seconds=TIMEOUT), True))

    stdio = w.client(c, "stdio")
    if stdio is not None:

        async def whole_on_stdio() -> None:
            # stdio has no event size limit: the whole 3 MiB arrives; over the 4 MiB cap it is cut.
            r = await stdio.call_tool("getLarge", {"kib": 3072})
            items = (r.structured_content or {}).get("items") if isinstance(r.structured_content, dict) else None
            c.expect(r.is_error is False and isinstance(items, list) and len(items) == 3072,
                     f"stdio: 3 MiB result: isError={r.is_error}, {len(items) if isinstance(items, list) else 'no'} items")
            r = await stdio.call_tool("getLarge", {"kib": 6144})
            c.expect(truncated(r), f"stdio: a 6 MiB result over max_response_bytes has no truncation marker: {short(texts(r)[-200:])}")

        await c.part("stdio", whole_on_stdio)

    github = os.path.join(w.shared, "specs", "real", "github.json") if w.shared else None
    if github and os.path.exists(github):

        async def github_list() -> None:
            gh = serve_child("restmcp-github", [w.binary, "serve", "--spec", github, "--base-url", "http://127.0.0.1:9"])
            try:
                await list_over_sse(gh)
            finally:
                gh.stop()

        async def list_over_sse(gh: Server) -> None:
            await gh.wait_ready("/healthz")
            # Wait until the tools are loaded (MCP routes answer 503 before).
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline:
                try:
                    await anyio.to_thread.run_sync(lambda: urllib.request.urlopen(gh.base + "/readyz", timeout=2).read())
                    break
                except OSError:
                    await anyio.sleep(0.2)
            names, pages, biggest = 0, 0, 0
            async with Client(sse_client(f"{gh.base}/sse", timeout=TIMEOUT), mode="legacy", read_timeout_seconds=TIMEOUT) as client:
                cursor = None
                for _ in range(200):
                    page = await client.list_tools(cursor=cursor)
                    pages += 1
                    names += len(page.tools)
                    biggest = max(biggest, len(page.model_dump_json(by_alias=True, exclude_none=True)))
                    cursor = page.next_cursor
                    if not cursor:
                        break
            c.expect(names > 1000, f"GitHub over legacy SSE: only {names} tools listed")
            c.expect(biggest <= PAGE_LIMIT, f"GitHub over legacy SSE: a tools/list page of {biggest} bytes")
            c.note(f"GitHub tools/list over SSE: {names} tools in {pages} pages, largest {biggest // 1024} KiB")

        await c.part("GitHub tools/list over legacy SSE", github_list)
    else:
        c.note("GitHub spec not found (no shared/specs): its tools/list not read")
    return c


ARN = "arn:aws:ecs:us-east-1:123456789012:cluster/world"


async def d7_hash_suffix(w: World) -> Check:
    c = Check("d7_hash_suffix_paths")
    client = w.client(c, "http")
    if client is None:
        return c

    async def untag() -> None:
        r = await client.call_tool("UntagResource", {"resourceArn": ARN, "tagKeys": ["team", "env"]})
        got = r.structured_content if isinstance(r.structured_content, dict) else {}
        c.expect(r.is_error is False and got.get("resourceArn") == ARN and got.get("removed") == ["team", "env"],
                 f"UntagResource (DELETE /tags/{{resourceArn}}#tagKeys): isError={r.is_error} {short(texts(r))}")

    await c.part("UntagResource", untag)

    async def list_tags() -> None:
        r = await client.call_tool("ListTagsForResource", {"resourceArn": ARN})
        got = r.structured_content if isinstance(r.structured_content, dict) else {}
        c.expect(r.is_error is False and got.get("resourceArn") == ARN, f"ListTagsForResource: {short(texts(r))}")

    await c.part("ListTagsForResource", list_tags)

    async def describe_things() -> None:
        r = await client.call_tool("GET_DescribeThings", {"Action": "DescribeThings", "Version": "2015-12-01", "MaxItems": 5})
        got = r.structured_content if isinstance(r.structured_content, dict) else {}
        c.expect(r.is_error is False and got.get("Action") == "DescribeThings",
                 f"GET /#Action=DescribeThings: isError={r.is_error} {short(texts(r))}")
        seen = [s for s in w.seen("/") if s["method"] == "GET"]
        if seen:
            actions = [v for k, v in seen[-1]["query_items"] if k == "Action"]
            c.expect(actions == ["DescribeThings"], f"GET /#Action=DescribeThings sent Action {actions} (query {seen[-1]['query']!r})")

    await c.part("GET_DescribeThings", describe_things)

    async def create_thing() -> None:
        r = await client.call_tool("POST_CreateThing", {"Name": "widget"})
        got = r.structured_content if isinstance(r.structured_content, dict) else {}
        c.expect(r.is_error is False and got.get("Action") == "CreateThing" and (got.get("form") or {}).get("Name") == "widget",
                 f"POST /#Action=CreateThing (Action only in the suffix): isError={r.is_error} {short(texts(r))}")
        if got:
            c.note(f"CreateThing query {got.get('query')}")

    await c.part("POST_CreateThing", create_thing)

    async def explain() -> None:
        p = run_cli(w.binary, ["explain", "UntagResource", "--config", w.config, "--json"])
        c.expect(p.returncode == 0 and "#tagKeys" in p.stdout, f"explain UntagResource does not show the #tagKeys suffix: {short(p.stdout + p.stderr)}")

    await c.part("explain", explain)
    return c


def dangling_refs(tools: list[dict[str, Any]]) -> list[str]:
    """Every `$ref` in a tool's schemas that does not resolve inside that same schema."""
    out: list[str] = []

    def resolve(doc: Any, ref: str) -> bool:
        if not ref.startswith("#"):
            return False
        cur = doc
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = urllib.request.unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(cur, dict) and part in cur:
                cur = cur[part]
            elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
                cur = cur[int(part)]
            else:
                return False
        return True

    def walk(doc: Any, v: Any, path: str) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "$ref" and isinstance(x, str) and not resolve(doc, x):
                    out.append(f"{path} → {x}")
                walk(doc, x, f"{path}/{k}")
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(doc, x, f"{path}/{i}")

    for t in tools:
        for key in ("inputSchema", "outputSchema"):
            if isinstance(t.get(key), dict):
                walk(t[key], t[key], f"{t.get('name')}/{key}")
    return out


def tools_json(w: World, spec: str) -> list[dict[str, Any]]:
    p = run_cli(w.binary, ["tools", "--spec", spec, "--json"])
    if p.returncode != 0:
        raise RuntimeError(f"restmcp tools --spec {os.path.basename(spec)} exited {p.returncode}: {short(p.stderr, 300)}")
    return json.loads(p.stdout)["tools"]


async def d8_example_refs(w: World) -> Check:
    c = Check("d8_no_ref_leaves_a_tool")

    async def fixture() -> None:
        tools = await anyio.to_thread.run_sync(lambda: tools_json(w, os.path.join(HERE, "spec-level.yaml")))
        bad = dangling_refs(tools)
        c.expect(not bad, f"spec-level.yaml: {len(bad)} dangling $ref: {short(bad, 300)}")
        c.note(f"spec-level.yaml: {len(tools)} tools, {len(bad)} dangling $ref")

    await c.part("spec-level.yaml", fixture)
    github = os.path.join(w.shared, "specs", "real", "github.json") if w.shared else None
    if github and os.path.exists(github):

        async def gh() -> None:
            tools = await anyio.to_thread.run_sync(lambda: tools_json(w, github))
            bad = dangling_refs(tools)
            c.expect(not bad, f"github.json: {len(bad)} dangling $ref: {short(bad, 300)}")
            c.expect(len(tools) > 1000, f"github.json: only {len(tools)} tools walked")
            c.note(f"github.json: {len(tools)} tools, {len(bad)} dangling $ref")

        await c.part("github.json", gh)
    return c


ORDER_XML = "<order><item>widget</item><quantity>3</quantity></order>"


def xml_body_args(schema: dict[str, Any], fields: dict[str, Any], document: str) -> dict[str, Any] | None:
    """Arguments for an XML body: the fields when the schema has them, else the document for
    a string argument, else None (the body is not part of the tool)."""
    props = schema.get("properties") or {}
    if all(k in props for k in fields):
        return dict(fields)
    strings = [k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "string"]
    if len(strings) == 1:
        return {strings[0]: document}
    return None


async def d9_xml_body(w: World) -> Check:
    c = Check("d9_xml_request_body")
    client = w.client(c, "http")
    if client is None:
        return c

    async def order() -> None:
        args = xml_body_args(w.input_schema("createOrder"), {"item": "widget", "quantity": 3}, ORDER_XML)
        if args is None:
            p = run_cli(w.binary, ["check", "--config", w.config])
            line = next((ln for ln in p.stdout.splitlines() if "/orders" in ln), "")
            c.expect("xml" in p.stdout.lower(), f"createOrder has no body argument and check does not say why: {line!r}")
            c.note("createOrder: body left out of the tool, check says so")
            return
        r = await client.call_tool("createOrder", args)
        got = r.structured_content if isinstance(r.structured_content, dict) else {}
        c.expect(r.is_error is False and got.get("content_type") == "application/xml" and got.get("root") == "order",
                 f"createOrder: isError={r.is_error} {short(texts(r), 300)}")
        fields = got.get("fields") or {}
        c.expect(fields.get("item") == "widget" and fields.get("quantity") == "3", f"createOrder: the app parsed {short(fields)}")
        c.note(f"createOrder: {got.get('content_type')} <{got.get('root')}> {fields}")

    await c.part("createOrder (application/xml only)", order)

    async def httpbin_xml() -> None:
        args = xml_body_args(w.input_schema("anythingXml"), {"Action": "Ping", "Name": "w"},
                             "<Envelope><Action>Ping</Action><Name>w</Name></Envelope>")
        if args is None:
            c.note("anythingXml: body left out of the tool")
            return
        r = await client.call_tool("anythingXml", args)
        echo = r.structured_content if isinstance(r.structured_content, dict) else {}
        ct = (header(echo.get("headers"), "Content-Type") or "").split(";")[0]
        data = echo.get("data") or ""
        c.expect(ct == "text/xml" and data.lstrip().startswith("<") and "Ping" in data,
                 f"anythingXml (text/xml only): httpbin saw Content-Type {ct!r}, body {short(data, 120)!r}")

    await c.part("httpbin anythingXml (text/xml only)", httpbin_xml)
    return c


async def d10_html_text(w: World) -> Check:
    c = Check("d10_text_that_cleans_to_nothing")

    async def run() -> None:
        tools = {t["name"]: t for t in await anyio.to_thread.run_sync(lambda: tools_json(w, os.path.join(HERE, "spec-level.yaml")))}
        stop = tools.get("stopSession") or {}
        desc, title = stop.get("description") or "", stop.get("title")
        c.expect("POST /sessions/{sessionId}/stop" in desc, f"stopSession (HTML-only text): description {desc!r}")
        c.expect(title is None or (title.strip() and not re.search(r"[<>]|&nbsp;", title)), f"stopSession: title {title!r}")
        get = tools.get("getSession") or {}
        c.expect(get.get("title") == "Get a session", f"getSession: title {get.get('title')!r} (want 'Get a session')")
        c.note(f"stopSession: title {title!r}, description {short(desc, 80)!r}; getSession title {get.get('title')!r}")

    await c.part("spec-level.yaml", run)
    return c


async def d11_redirects(w: World) -> Check:
    c = Check("d11_redirects_followed_as_browsers_do")
    client = w.client(c, "http")
    if client is None:
        return c
    assert w.httpbin
    port = w.httpbin.base.rsplit(":", 1)[1]

    async def methods() -> None:
        # 307 sends the same request again; 302 and 303 turn a POST into a GET without its body.
        for status, method, body in (("307", "POST", {"a": 1}), ("302", "GET", None), ("303", "GET", None)):
            r = await client.call_tool("redirectTo", {"url": "/anything", "status_code": int(status), "body": {"a": 1}})
            got = r.structured_content if isinstance(r.structured_content, dict) else {}
            c.expect(r.is_error is False and got.get("method") == method and got.get("json") == body,
                     f"{status} after a POST: httpbin's /anything saw {got.get('method')!r} with {short(got.get('json'))} "
                     f"(want {method} with {body}); isError={r.is_error} {short(texts(r), 160)}")
            c.note(f"{status}: {got.get('method')} {short(got.get('json'))}")

    await c.part("redirectTo 307/302/303", methods)

    async def hops() -> None:
        five = await client.call_tool("redirectTimes", {"n": 5})
        got = five.structured_content if isinstance(five.structured_content, dict) else {}
        c.expect(five.is_error is False and str(got.get("url", "")).endswith("/get"),
                 f"/redirect/5: five redirects are followed to /get; isError={five.is_error} {short(texts(five), 160)}")
        six = await client.call_tool("redirectTimes", {"n": 6})
        c.expect(six.is_error is True and "at most 5 redirects" in texts(six),
                 f"/redirect/6: the sixth redirect is the answer, with a note; isError={six.is_error} {short(texts(six), 200)}")

    await c.part("redirectTimes 5 and 6", hops)

    async def elsewhere() -> None:
        # localhost is another origin than 127.0.0.1: not in follow_redirects, so not followed.
        r = await client.call_tool("redirectTo", {"url": f"http://localhost:{port}/get", "status_code": 302})
        c.expect(r.is_error is True and f"http://localhost:{port}" in texts(r) and "follow_redirects" in texts(r),
                 f"a redirect to another origin: isError={r.is_error} {short(texts(r), 200)}")

    await c.part("another origin", elsewhere)
    return c


CHECKS: list[tuple[str, Callable[[World], Awaitable[Check]]]] = [
    ("d1", d1_accept),
    ("d2", d2_scalars),
    ("d3", d3_multipart),
    ("d4", d4_swagger2_headers),
    ("d5", d5_compression),
    ("d6", d6_large),
    ("d7", d7_hash_suffix),
    ("d8", d8_example_refs),
    ("d9", d9_xml_body),
    ("d10", d10_html_text),
    ("d11", d11_redirects),
]


async def main_async(w: World, only: set[str] | None) -> None:
    w.start_upstreams()
    assert w.app and w.httpbin
    await w.app.wait_ready("/_seen?path=/")
    await w.httpbin.wait_ready("/json")
    w.start_serve()
    assert w.serve
    await w.serve.wait_ready("/readyz")
    print(f"fastapi {w.app.base}, httpbin {w.httpbin.base}, restmcp serve {w.serve.base}", flush=True)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as stdio_log:
        # One scope for the clients' whole life (a scope cannot end while their task groups
        # live): the connects get CONNECT_TIMEOUT, then the deadline moves for the checks.
        with anyio.fail_after(CONNECT_TIMEOUT) as scope:
            async with AsyncExitStack() as stack:
                await w.connect(stack, stdio_log)
                scope.deadline = anyio.current_time() + CHECKS_TIMEOUT
                for key, check in CHECKS:
                    if only and key not in only:
                        continue
                    try:
                        result = await check(w)
                    except Exception as exc:  # a bug in the check itself
                        traceback.print_exc()
                        result = Check(key)
                        result.expect(False, f"the check raised {describe(exc)}")
                    result.report()
        if R.failed and os.environ.get("WORLD_LOGS"):
            stdio_log.seek(0)
            print(f"--- restmcp stdio stderr ---\n{stdio_log.read()[-3000:]}\n---", flush=True)
            print(f"--- restmcp serve log ---\n{w.serve.log_text()}\n---", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="path to the restmcp binary")
    parser.add_argument("--shared", default=None, help="the shared/ directory with specs/real/github.json (optional)")
    parser.add_argument("--only", default="", help="comma-separated check keys, e.g. d1,d5")
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        print(f"restmcp binary not found or not executable: {binary}", file=sys.stderr)
        print("world: 0 passed, 1 failed", flush=True)
        return 1
    # The SDK logs a traceback for an oversized SSE event; the check's line says it already.
    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    only = {k.strip() for k in args.only.split(",") if k.strip()} or None

    install_signals("world", HARD_LIMIT)
    started = time.monotonic()
    w = World(binary, os.path.abspath(args.shared) if args.shared else None)
    try:
        asyncio.run(main_async(w, only))
    except BaseException as exc:  # noqa: BLE001 - report, never hang or lose the summary
        traceback.print_exc()
        R.check("run", False, describe(exc))
    finally:
        kill_all()
        signal.alarm(0)
    print(f"(took {time.monotonic() - started:.1f} s)", flush=True)
    return summary("world")


if __name__ == "__main__":
    sys.exit(main())
