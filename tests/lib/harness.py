"""What the Python harnesses under tests/ share: every one of them imports it.
tests/confirm/python_confirm.py, tests/hostile/python_hostile.py,
tests/idempotency/python_idempotency.py, tests/results/python_paging.py and
python_operations.py, tests/surface/python_surface.py, tests/oauth/python_oauth.py, tests/interop/python_client.py and
python_sizes.py, tests/world/world.py and tests/scale-out/scale_client.py.

Each of them is one process that starts restmcp servers (and an upstream: httpbin under
gunicorn, a FastAPI app, redis-server, oidc-provider) on free loopback ports, or is handed
them (scale-out), drives them with the official MCP Python SDK and prints one line per check.
This module owns the parts that are the same in all of them:
  - the results: `R.check(name, ok, detail)` prints the line, in one of two styles (`R.style`):
    TAP, `ok N - name` / `not ok N - name` with `#   ` detail lines on failure (confirm,
    hostile, idempotency, results, surface), or PASS_FAIL, `PASS name -- detail` / `FAIL name --
    detail` (interop, oauth, world, scale-out, whose lines carry what was seen on success too);
    `summary(label)` prints the closing lines (TAP: `1..N` and the failed checks) and `LABEL:
    P passed, F failed` and gives the exit status; `note(text)` prints a `# ` line;
  - formatting: `short` (a value cut to n characters), `dump` (an SDK result as JSON, cut),
    `error_text` (an exception, with the members of an exception group), `describe` (the same
    on one line, an MCPError's code and message named);
  - processes: `free_port`, `Child` (a process in its own group, its stdout and stderr kept
    line by line, `wait_for` a banner line, `stop` with SIGTERM then SIGKILL, its group's
    leftovers too), `CHILDREN` (every one started) and `kill_all`, `child_env` (the runner's
    environment less what restmcp would read as its configuration), `install_signals` (a hard
    time limit, and SIGTERM/SIGINT/SIGHUP kill every child), `save_logs` (each child's output
    to the work directory), `finish` (keep the work directory on failure or when asked, else
    remove it);
  - `run_suites`: every suite under a time limit, an exception a `not ok` line, then on;
  - httpbin: `start_httpbin` (httpbin under gunicorn with an access log in a format of the
    caller's) and `AccessLog` (what reached it, read once a marker request of ours is logged);
  - the protocol: `NEW` and `OLD` (the revisions), `ELICIT_CAPS`, and `Raw` (plain 2026-07-28
    JSON-RPC requests over HTTP, for what no SDK will send: tampered or replayed request
    states, chosen clientCapabilities) with `result_of`.
What each suite checks, its servers and configs, and how it reads its upstream's answers stay
in the suite's own file.

The scripts import it from their own location (`sys.path` gets tests/lib); standard library
only, plus anyio and httpx2 (the SDK's, in target/interop/python-venv and target/world/venv)
for `run_suites`, `AccessLog` and `Raw`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import anyio
import httpx2

STEP = 20.0  # seconds: one process start, one request
NEW = "2026-07-28"  # the protocol revisions the suites speak
OLD = "2025-11-25"
ELICIT_CAPS = {"elicitation": {"form": {}}}  # clientCapabilities of a client that can be asked

# --------------------------------------------------------------------------------------
# Results


TAP = "tap"  # `ok N - name` / `not ok N - name`, the detail as `#   ` lines on failure only
PASS_FAIL = "pass-fail"  # `PASS name -- detail` / `FAIL name -- detail`, the detail either way


class Results:
    def __init__(self, style: str = TAP) -> None:
        self.style = style
        self.passed = 0
        self.failed = 0
        self.failures: list[str] = []

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        n = self.passed + self.failed + 1
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            self.failures.append(f"{n} - {name}")
        if self.style == PASS_FAIL:
            print(f"{'PASS' if ok else 'FAIL'} {name}" + (f" -- {detail}" if detail else ""), flush=True)
        elif ok:
            print(f"ok {n} - {name}", flush=True)
        else:
            print(f"not ok {n} - {name}", flush=True)
            for line in (detail or "").splitlines() or [""]:
                if line:
                    print(f"#   {line}", flush=True)
        return ok


R = Results()  # the checks of this process; a PASS_FAIL harness sets R.style first thing


def summary(label: str) -> int:
    """The closing lines (TAP: `1..N` and the failed checks; both styles: `LABEL: P passed,
    F failed`) and the exit status: 0 only when something passed and nothing failed."""
    if R.style == TAP:
        print(f"1..{R.passed + R.failed}", flush=True)
        for failure in R.failures:
            print(f"# failed: {failure}", flush=True)
    print(f"{label}: {R.passed} passed, {R.failed} failed", flush=True)
    return 0 if R.failed == 0 and R.passed > 0 else 1


def note(text: str) -> None:
    print(f"# {text}", flush=True)


def short(value: Any, n: int = 400) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str) if isinstance(value, (dict, list)) else repr(value)
    return text if len(text) <= n else text[:n] + f"... ({len(text)} chars)"


def dump(result: Any, n: int = 800) -> str:
    """An SDK object (a tool result) as its JSON, anything else as is; cut to n characters."""
    try:
        data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    except AttributeError:
        data = result
    return short(data, n)


def error_text(e: BaseException) -> str:
    detail = "".join(traceback.format_exception_only(type(e), e)).strip()
    if isinstance(e, BaseExceptionGroup):
        detail += " | " + " | ".join(short(repr(x), 400) for x in e.exceptions)
    return short(detail, 1500)


def describe(exc: BaseException, data: bool = False) -> str:
    """An exception on one line: an MCPError as its code and message (and, with `data`, its
    data), an exception group as its members, anything else as `Type: message`."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e, data) for e in exc.exceptions)
    err = getattr(exc, "error", None)  # mcp.shared.exceptions.MCPError carries ErrorData
    if err is not None and hasattr(err, "code"):
        more = f", data={err.data!r}" if data else ""
        return f"{type(exc).__name__}(code={err.code}, message={err.message!r}{more})"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


async def run_suites(suites: list[tuple[str, Callable[[], Any]]], timeout: float) -> None:
    """Each suite in turn within `timeout` seconds; one that raises (or runs out of time) is a
    `not ok` line "NAME: the suite ran to its end", and the next one runs."""
    for name, suite in suites:
        try:
            with anyio.fail_after(timeout):
                await suite()
        except Exception as e:  # noqa: BLE001 - every failure is a "not ok" line, then on to the next suite
            R.check(f"{name}: the suite ran to its end", False, error_text(e))


# --------------------------------------------------------------------------------------
# Processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Child:
    """A process in its own group, its output kept line by line; `wait_for` a line. Its stdin
    is empty unless `stdin` says otherwise (subprocess.PIPE: open until it is stopped, for a
    child that exits when its stdin closes)."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], cwd: Path, stdin: int = subprocess.DEVNULL) -> None:
        self.name = name
        self.lines: list[tuple[str, str]] = []  # (stream, line)
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        for stream in ("stdout", "stderr"):
            threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: str) -> None:
        for line in getattr(self.proc, stream):
            with self.cond:
                self.lines.append((stream, line.rstrip("\n")))
                self.cond.notify_all()

    def wait_for(self, pattern: str, stream: str) -> re.Match[str]:
        deadline = time.monotonic() + STEP
        regex = re.compile(pattern)
        with self.cond:
            while True:
                for s, line in self.lines:
                    m = regex.search(line) if s == stream else None
                    if m:
                        return m
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.name} exited ({self.proc.returncode}): {short(self.text(), 1500)}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"{self.name}: no line matching {pattern!r} within {STEP} s: {short(self.text(), 1500)}")
                self.cond.wait(min(left, 0.5))

    def text(self, stream: str | None = None) -> str:
        """Its output so far: one stream's lines, or (None) both, in the order they came."""
        with self.cond:
            return "\n".join(line for s, line in self.lines if stream is None or s == stream)

    def stop(self) -> None:
        """SIGTERM to its group, SIGKILL after 5 s; then SIGKILL to what is left of the group
        (a worker of gunicorn or uvicorn that outlived its parent)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGCONT)  # a frozen (SIGSTOP) process too
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass


CHILDREN: list[Child] = []  # every child started, for kill_all and save_logs


def kill_all() -> None:
    for child in CHILDREN:
        child.stop()


def child_env(extra: dict[str, str], prefixes: tuple[str, ...] = (), names: tuple[str, ...] = ()) -> dict[str, str]:
    """The runner's environment for a child, with `extra` added. restmcp reads every RESTMCP_*
    variable as configuration: none of the runner's reach it; nor do variables starting with
    one of `prefixes` (the suite's own, such as CONFIRM_TEST_) or named in `names`."""
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith("RESTMCP_") and not k.startswith(prefixes) and k not in names}
    return {**env, **extra}


def install_signals(label: str, hard_limit: int) -> None:
    """TAP: past `hard_limit` seconds print "LABEL: hard time limit reached", kill every child
    and exit 2; on SIGTERM, SIGINT or SIGHUP kill every child and exit 130. PASS_FAIL: either
    way print `FAIL hard limit of N s reached; killing children` (or `FAIL signal N; ...`), kill
    every child, print `LABEL: P passed, F failed` counting that failure and exit 1."""
    if R.style == PASS_FAIL:
        def stop(signum: int, _frame: Any) -> None:
            why = f"hard limit of {hard_limit} s reached" if signum == signal.SIGALRM else f"signal {signum}"
            print(f"FAIL {why}; killing children", flush=True)
            kill_all()
            print(f"{label}: {R.passed} passed, {R.failed + 1} failed", flush=True)
            os._exit(1)

        for sig in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, stop)
        signal.alarm(hard_limit)
        return
    signal.signal(signal.SIGALRM, lambda *_: (print(f"{label}: hard time limit reached", flush=True), kill_all(), os._exit(2)))
    signal.alarm(hard_limit)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: (kill_all(), os._exit(130)))


def save_logs(work: Path) -> None:
    """Every child's output (both streams) to WORK/<its name as a slug>.log."""
    for child in CHILDREN:
        slug = re.sub(r"[^A-Za-z0-9]+", "-", child.name).strip("-")
        (work / f"{slug}.log").write_text(child.text() + "\n")


def finish(work: Path, keep_env: str) -> None:
    """Keep (and name) the work directory when a check failed or `keep_env` is set, else remove it."""
    if R.failed or os.environ.get(keep_env):
        print(f"# work directory kept: {work}", flush=True)
    else:
        shutil.rmtree(work, ignore_errors=True)


# --------------------------------------------------------------------------------------
# httpbin under gunicorn, and its access log: what reached the upstream

MARKER_PATH = "/status/204"  # our marker requests; left out of AccessLog.requests


def start_httpbin(work: Path, access_format: str, threads: int) -> tuple[str, Path]:
    """httpbin under gunicorn (this Python's) on a free port, as the child "httpbin", logging
    every request to WORK/httpbin-access.log in `access_format`: (its base URL, the log)."""
    port = free_port()
    log = work / "httpbin-access.log"
    httpbin = Child("httpbin", [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "1",
                                "--threads", str(threads), "--log-level", "info", "--access-logfile", str(log),
                                "--access-logformat", access_format, "httpbin:app"],
                    child_env({"PYTHONDONTWRITEBYTECODE": "1"}), work)
    CHILDREN.append(httpbin)
    httpbin.wait_for(r"Listening at: http://", "stderr")
    return f"http://127.0.0.1:{port}", log


class AccessLog:
    """gunicorn's --access-logfile of httpbin: one line per request, written once it answered.
    `parse` turns a line into the suite's tuple (method, target, ...), or None for a line that
    is not a request; `tag` names the suite in the marker requests' query."""

    def __init__(self, path: Path, base: str, tag: str, parse: Callable[[str], tuple[Any, ...] | None]) -> None:
        self.path = path
        self.base = base
        self.tag = tag
        self.parse = parse
        self.markers = 0

    def requests(self) -> list[Any]:
        """The parsed line of every request so far, the markers left out."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            entry = self.parse(line)
            if entry is not None and not entry[1].startswith(MARKER_PATH):
                out.append(entry)
        return out

    async def settled(self) -> list[Any]:
        """The requests once everything sent before this call is logged: send a marker request
        of our own, wait for its line (gunicorn logs after answering, so what restmcp got an
        answer for earlier is logged by then, give or take a thread switch)."""
        self.markers += 1
        marker = f"{MARKER_PATH}?{self.tag}-marker={os.getpid()}-{self.markers}"
        async with httpx2.AsyncClient(timeout=STEP) as http:
            await http.get(self.base + marker)
        deadline = time.monotonic() + STEP
        while time.monotonic() < deadline:
            try:
                if marker in self.path.read_text(encoding="utf-8", errors="replace"):
                    await anyio.sleep(0.1)
                    return self.requests()
            except FileNotFoundError:
                pass
            await anyio.sleep(0.05)
        raise RuntimeError(f"httpbin's access log {self.path} never showed the marker {marker}")

    async def mark(self) -> int:
        return len(await self.settled())

    async def since(self, mark: int) -> list[Any]:
        return (await self.settled())[mark:]


# --------------------------------------------------------------------------------------
# Raw 2026-07-28 JSON-RPC over HTTP (httpx2, the SDK's own HTTP client): what no SDK will do


class Raw:
    """Plain 2026-07-28 requests: no session; MCP-Protocol-Version, Mcp-Method and Mcp-Name
    headers agreeing with the body, whose _meta carries the version, clientInfo and
    clientCapabilities. A suite names its client with a subclass: `client_name = "..."`."""

    client_name = "restmcp-raw"

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http = http
        self.url = url
        self.id = 0

    async def send(self, method: str, params: dict[str, Any], caps: dict[str, Any]) -> dict[str, Any]:
        self.id += 1
        params = {**params, "_meta": {
            "io.modelcontextprotocol/protocolVersion": NEW,
            "io.modelcontextprotocol/clientInfo": {"name": self.client_name, "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": caps,
        }}
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": NEW, "Mcp-Method": method}
        if method == "tools/call":
            headers["Mcp-Name"] = params["name"]
        body = {"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}
        response = await self.http.post(self.url, json=body, headers=headers)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            for line in response.text.splitlines():
                if line.startswith("data:"):
                    try:
                        message = json.loads(line[5:].strip())
                    except ValueError:
                        continue
                    if isinstance(message, dict) and message.get("id") == self.id:
                        return message
            return {"http_status": response.status_code, "raw": short(response.text, 600)}
        try:
            message = response.json()
        except ValueError:
            return {"http_status": response.status_code, "raw": short(response.text, 600)}
        return message if isinstance(message, dict) else {"http_status": response.status_code, "raw": message}

    async def call(self, name: str, arguments: dict[str, Any], *, caps: dict[str, Any] | None = None,
                   answer: str | None = None, state: str | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if answer is not None:
            params["inputResponses"] = {"confirm": {"action": answer}}
        if state is not None:
            params["requestState"] = state
        return await self.send("tools/call", params, ELICIT_CAPS if caps is None else caps)


def result_of(message: dict[str, Any]) -> dict[str, Any]:
    r = message.get("result")
    return r if isinstance(r, dict) else {}
