#!/usr/bin/env python3
"""The console (`/console` of `restmcp serve`) in a real browser: headless Chromium from the
Debian packages, driven by Playwright for Python (PyPI, told to use that Chromium; no browser
is downloaded), against the shipped config.toml (Petstore, mock) and a live httpbin upstream.

Servers (`restmcp serve --config <repo>/config.toml`, all on 127.0.0.1 and free ports, killed
on any exit), each the shipped config plus environment variables:
  A   the API "httpbin" added: tests/console/httpbin-api.yaml on the httpbin started by
      run.sh, `confirm = "destructive"` (so deleteEverything, a DELETE, asks), and the
      overlay beside that spec rewriting echoGet's description; no inbound auth, so the
      console answers without a token;
  B   the same, with `server.auth.tokens_file` (one token): the console's API wants it;
  C   the shipped config with `server.console = false`.
gunicorn's access log of httpbin (--access-logfile) is the witness of what reached the
upstream; before reading it, a check sends httpbin a marker request of its own and waits for
its line.

Checks, in the browser unless said otherwise (each an `ok N - ...` line):
  1. APIs: a row per API, petstore with its 19 tools and httpbin with 4, each in discovery
     mode "all" (their tools fit the auto budget), mock and live as configured;
  2. Tools: all 24 listed (the Petstore's 19, its workflow and httpbin's 4), "echo get" finds echoGet alone, the API filter keeps httpbin's 4,
     deleteEverything badged destructive and confirm, the shipped resources and prompt listed below; echoGet's page shows the overlay's description and its
     provenance table names the overlay file as the description's source (and
     httpbinStatus's names its x-mcp);
  3. Try it: getPetById with petId set through its form field answers from the mock and
     shows the request (GET …/pet/7); echoGet with q, limit, order and verbose set through the
     form (text, number, select, checkbox) is sent to httpbin (the access log has the query),
     and the page shows httpbin's echo, the request restmcp sent and the status;
  4. Confirmation: deleteEverything asks in the page's dialog (its message names DELETE and
     /delete); declined, the result is an error saying so and httpbin got nothing; accepted,
     httpbin got exactly one DELETE and the page shows its echo;
  5. Calls: the calls made above are in the live list, a call made meanwhile by an MCP client
     (a plain 2026-07-28 tools/call POST to /mcp) appears on top without reloading, and both
     charts have drawn (their data-points attribute, pixels on the canvas), the latency chart
     with a row for each tool called;
  6. Auth (server B): over plain HTTP /console/api/overview is 401 without a token and with a
     wrong one, 200 with it; the page shows the token form and no API data, refuses a wrong
     token, and shows the APIs once the right one is entered;
  7. Off (server C): /console, its assets and /console/api/overview answer 404.
And no Content-Security-Policy violation nor script error in any page.

Screenshots (1280x800) of each page go to --screenshots DIR when given (run.sh passes
$CONSOLE_SCREENSHOTS): console-apis, console-tools, console-tool, console-try,
console-confirm, console-calls and console-token .png.

Output: `ok N - name` / `not ok N - name` (with `#` detail lines), then `1..N` and
`console: P passed, F failed`; exit status 0 only when nothing failed. On failure (or with
CONSOLE_TEST_KEEP=1) the work directory (every process's output) is kept and named.

Usage: console_test.py --bin PATH/TO/restmcp --httpbin URL --access-log FILE --chromium PATH
       [--screenshots DIR]
(run by tests/console/run.sh in target/console/venv: playwright, anyio and httpx2 pinned there.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable

from playwright.sync_api import Page, sync_playwright

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE.parent / "lib"))
import harness  # noqa: E402 - tests/lib/harness.py: results and processes
from harness import CHILDREN, NEW, STEP, Child, R, error_text, finish, free_port, install_signals, kill_all, save_logs, short, summary  # noqa: E402

HARD_LIMIT = 300  # seconds: the process kills itself (and its children) past this
TIMEOUT_MS = 15_000  # one wait in the browser
TOKEN = "console-test-token-" + os.urandom(8).hex()
REQUEST_LINE = re.compile(r'"([A-Z]+) (\S+) HTTP/[\d.]+"')
MARKER = "/status/204"

# --------------------------------------------------------------------------------------
# Servers, plain HTTP and httpbin's access log


def serve(work: Path, bin_path: str, name: str, env: dict[str, str]) -> str:
    """`restmcp serve` of the shipped config.toml with `env` added, on a free port: its URL."""
    port = free_port()
    extra = {"RESTMCP_SERVER__LISTEN": f"127.0.0.1:{port}", **env}
    child = Child(f"restmcp serve ({name})", [bin_path, "serve", "--config", str(ROOT / "config.toml")],
                  harness.child_env(extra, prefixes=("CONSOLE_TEST_",)), work)
    CHILDREN.append(child)
    child.wait_for(r"MCP over Streamable HTTP at http://", "stderr")
    return f"http://127.0.0.1:{port}"


def http(method: str, url: str, headers: dict[str, str] | None = None, body: Any = None) -> tuple[int, str]:
    """(status, body text) of one plain request; an HTTP error status is an answer too."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=STEP) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


class AccessLog:
    """httpbin's access log: the requests that reached it, once a marker of ours is logged
    (gunicorn logs a request after answering it, so what restmcp had an answer for earlier is
    in the file by then)."""

    def __init__(self, path: Path, base: str) -> None:
        self.path = path
        self.base = base
        self.markers = 0

    def settled(self) -> list[tuple[str, str]]:
        self.markers += 1
        marker = f"{MARKER}?console-marker={os.getpid()}-{self.markers}"
        http("GET", self.base + marker)
        deadline = time.monotonic() + STEP
        while time.monotonic() < deadline:
            text = self.path.read_text(encoding="utf-8", errors="replace") if self.path.exists() else ""
            if marker in text:
                out = []
                for line in text.splitlines():
                    m = REQUEST_LINE.search(line)
                    if m and not m.group(2).startswith(MARKER):
                        out.append((m.group(1), m.group(2)))
                return out
            time.sleep(0.05)
        raise RuntimeError(f"httpbin's access log {self.path} never showed the marker {marker}")


def mcp_call(base: str, name: str, arguments: dict[str, Any]) -> int:
    """One stateless 2026-07-28 tools/call to /mcp, as an MCP client sends it: the HTTP status."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": name, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": NEW,
            "io.modelcontextprotocol/clientInfo": {"name": "console-test", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": {}}}}
    status, _ = http("POST", base + "/mcp", {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": NEW, "Mcp-Method": "tools/call", "Mcp-Name": name}, body)
    return status


# --------------------------------------------------------------------------------------
# The browser


class Browser:
    """One Chromium; pages that record script errors and CSP violations; screenshots."""

    def __init__(self, pw: Any, chromium: str, shots: Path | None) -> None:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []  # root: Chromium's sandbox refuses to start
        self.browser = pw.chromium.launch(executable_path=chromium, headless=True, args=args)
        self.shots = shots
        self.problems: list[str] = []

    def page(self) -> Page:
        """A page in a context of its own (its own sessionStorage), light scheme, 1280x800."""
        context = self.browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="light")
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)

        def on_console(msg: Any) -> None:
            # A 401 the page expects is logged by Chromium as a failed resource load: not a problem.
            if msg.type == "error" and "Failed to load resource" not in msg.text:
                self.problems.append(f"console: {msg.text}")
            if "Content Security Policy" in msg.text or "Refused to" in msg.text:
                self.problems.append(f"CSP: {msg.text}")

        page.on("console", on_console)
        page.on("pageerror", lambda e: self.problems.append(f"script error: {e}"))
        return page

    def shot(self, page: Page, name: str) -> None:
        if self.shots:
            page.mouse.move(0, 0)  # no hover state in the picture
            page.screenshot(path=str(self.shots / f"console-{name}.png"))


def step(name: str, fn: Callable[[], str | None]) -> bool:
    """One check: `fn` raises (an assertion or a Playwright timeout) to fail, with its text."""
    try:
        detail = fn()
    except Exception as e:  # noqa: BLE001 - every failure is a "not ok" line, then on
        return R.check(name, False, error_text(e))
    return R.check(name, True, detail or "")


def text(page: Page, selector: str) -> str:
    return page.locator(selector).first.inner_text()


def expect_in(haystack: str, *needles: str) -> None:
    for needle in needles:
        assert needle in haystack, f"{needle!r} not in {short(haystack, 1200)!r}"


# --------------------------------------------------------------------------------------
# The checks


def check_apis(b: Browser, page: Page, base: str) -> None:
    def run() -> None:
        page.goto(base + "/console#/apis")
        pet = page.locator('[data-testid=api-row][data-api=petstore]')
        bin_ = page.locator('[data-testid=api-row][data-api=httpbin]')
        pet.wait_for()
        bin_.wait_for()
        assert pet.locator('[data-testid=api-tools]').inner_text() == "19", pet.inner_text()
        assert bin_.locator('[data-testid=api-tools]').inner_text() == "4", bin_.inner_text()
        for row in (pet, bin_):
            assert row.locator('[data-testid=api-discovery]').inner_text() == "all", row.inner_text()
        expect_in(pet.inner_text(), "Swagger Petstore", "mock")
        expect_in(bin_.inner_text(), "httpbin (console test)", "live", base_of_httpbin[0])
        b.shot(page, "apis")
    step("APIs: petstore (19 tools) and httpbin (4 tools) listed, discovery mode all, mock and live", run)


def check_tools(b: Browser, page: Page) -> None:
    def search() -> None:
        page.click('#nav a[data-route=tools]')
        page.locator('[data-testid=tool-row][data-tool=getPetById]').wait_for()
        rows = "() => [...document.querySelectorAll('[data-testid=tool-row]')].map(r => r.dataset.tool).join(' ')"
        page.wait_for_function(f"() => ({rows})().split(' ').length === 24")
        page.fill('[data-testid=tool-search]', "echo get")  # every word must match: "echo" alone also finds createItem
        page.wait_for_function(f"() => ({rows})() === 'echoGet'")
        page.fill('[data-testid=tool-search]', "")
        page.select_option('[data-testid=tool-api]', "httpbin")
        page.wait_for_function(f"() => ({rows})().split(' ').length === 4")
        expect_in(page.locator('[data-testid=tool-row][data-tool=deleteEverything]').inner_text(), "destructive", "confirm")
        b.shot(page, "tools")
        page.select_option('[data-testid=tool-api]', "")
        page.wait_for_function(f"() => ({rows})().split(' ').length === 24")
    step("Tools: 24 tools listed, \"echo get\" finds echoGet alone, the API filter keeps httpbin's 4, deleteEverything badged destructive and confirm", search)

    def surface() -> None:
        # The shipped config serves three Petstore reads as resources and one prompt.
        page.locator('[data-testid=surface] [data-testid=resource-row]').first.wait_for()
        resources = page.locator('[data-testid=surface] [data-testid=resource-row]')
        assert resources.count() == 3, resources.count()
        expect_in(page.locator('[data-testid=surface]').inner_text(), "petstore://pets/{petId}", "getPetById", "pet_report")
    step("Tools: the resources (3, each with the tool a read runs) and the prompt the shipped config makes of them are listed", surface)

    def provenance() -> None:
        page.click('[data-testid=tool-row][data-tool=echoGet]')
        page.locator('[data-testid=tool-detail] [data-testid=provenance]').wait_for()
        assert "#/tools/echoGet" in page.url, page.url
        expect_in(text(page, '[data-testid=tool-description]'), "description from the console test's overlay")
        rows = page.locator('[data-testid=provenance] tbody tr')
        found = [r for r in (rows.nth(i).inner_text() for i in range(rows.count())) if r.startswith("description")]
        assert found, f"no description row in {text(page, '[data-testid=provenance]')!r}"
        expect_in(found[0], "overlay", "tests/console/httpbin-api.overlay.yaml", "/tools/echoGet/description")
        expect_in(text(page, '[data-testid=explain]'), "echoGet", "GET /get")
        b.shot(page, "tool")
        return f"description ← {found[0].split(None, 1)[1]}"
    step("Tool page: echoGet's description is the overlay's, and the provenance table names the overlay file", provenance)

    def x_mcp() -> None:
        page.goto(page.url.split("#")[0] + "#/tools/httpbinStatus")
        page.locator('[data-testid=provenance]').wait_for()
        page.wait_for_function("() => document.querySelector('[data-testid=tool-detail] h1').textContent === 'httpbinStatus'")
        expect_in(text(page, '[data-testid=provenance]'), "x-mcp", "httpbin-api.yaml")
    step("Tool page: httpbinStatus's provenance names its x-mcp", x_mcp)


def open_tool(page: Page, base: str, name: str) -> None:
    page.goto(f"{base}/console#/tools/{name}")
    page.wait_for_function(f"() => (document.querySelector('[data-testid=tool-detail] h1') || {{}}).textContent === {json.dumps(name)}")
    page.locator('[data-testid=try-form]').wait_for()


def check_try(b: Browser, page: Page, base: str, log: AccessLog) -> None:
    def pet() -> None:
        open_tool(page, base, "getPetById")
        page.fill('[data-testid=arg-petId]', "7")
        assert json.loads(page.input_value('[data-testid=args-json]')) == {"petId": 7}, page.input_value('[data-testid=args-json]')
        page.click('[data-testid=try-call]')
        page.locator('[data-testid=call-result]').wait_for()
        result = json.loads(text(page, '[data-testid=call-result]'))
        assert result.get("isError") is not True, result
        expect_in(text(page, '[data-testid=call-request]'), "GET", "/pet/7")
        expect_in(text(page, '[data-testid=call-timing]'), "200")
    step("Try it: getPetById with petId 7 from the form field answers from the mock; the request shown is GET …/pet/7", pet)

    def echo() -> str:
        open_tool(page, base, "echoGet")
        page.fill('[data-testid=arg-q]', "console hello")
        page.fill('[data-testid=arg-limit]', "5")
        page.select_option('[data-testid=arg-order]', "desc")
        page.check('[data-testid=arg-verbose]')
        args = json.loads(page.input_value('[data-testid=args-json]'))
        assert args == {"q": "console hello", "limit": 5, "order": "desc", "verbose": True}, args
        expect_in(page.inner_text('label[for=arg-q]'), "*")  # q is required
        before = len(log.settled())
        page.click('[data-testid=try-call]')
        page.locator('[data-testid=call-result]').wait_for()
        result = text(page, '[data-testid=call-result]')
        expect_in(result, "console hello")
        assert "is-error" not in (page.get_attribute('[data-testid=call-result]', "class") or ""), result
        request = text(page, '[data-testid=call-request]')
        expect_in(request, "GET", base_of_httpbin[0] + "/get?", "q=console")
        expect_in(text(page, '[data-testid=call-timing]'), "200")
        sent = log.settled()[before:]
        assert len(sent) == 1 and sent[0][0] == "GET" and sent[0][1].startswith("/get?") and "q=console" in sent[0][1], sent
        page.locator('[data-testid=call-timing]').scroll_into_view_if_needed()
        b.shot(page, "try")
        return f"httpbin got {sent[0][0]} {sent[0][1]}"
    step("Try it: echoGet with text, number, choice and checkbox fields reaches httpbin; the page shows its echo, the request and 200", echo)


def check_confirm(b: Browser, page: Page, base: str, log: AccessLog) -> None:
    def declined() -> None:
        open_tool(page, base, "deleteEverything")
        page.fill('[data-testid=arg-what]', "declined-in-console")
        before = len(log.settled())
        page.click('[data-testid=try-call]')
        page.locator('[data-testid=confirm-dialog]').wait_for(state="visible")
        expect_in(text(page, '[data-testid=confirm-message]'), "DELETE", "/delete", "what=declined-in-console")
        page.click('[data-testid=confirm-decline]')
        page.locator('[data-testid=call-result]').wait_for()
        result = text(page, '[data-testid=call-result]')
        assert "is-error" in (page.get_attribute('[data-testid=call-result]', "class") or ""), result
        assert re.search(r"declin", result, re.I) and re.search(r"not sent|nothing (was )?sent", result, re.I), result
        expect_in(text(page, '[data-testid=call-request]'), "Nothing was sent")
        sent = log.settled()[before:]
        assert not sent, f"httpbin got {sent}"
    step("Confirmation declined in the page: the dialog names DELETE /delete, the result says nothing was sent, httpbin got nothing", declined)

    def accepted() -> str:
        open_tool(page, base, "deleteEverything")
        page.fill('[data-testid=arg-what]', "accepted-in-console")
        before = len(log.settled())
        page.click('[data-testid=try-call]')
        page.locator('[data-testid=confirm-dialog]').wait_for(state="visible")
        expect_in(text(page, '[data-testid=confirm-message]'), "DELETE", "what=accepted-in-console")
        assert not log.settled()[before:], "sent before the answer"
        b.shot(page, "confirm")
        page.click('[data-testid=confirm-accept]')
        page.locator('[data-testid=call-result]').wait_for()
        expect_in(text(page, '[data-testid=call-result]'), "accepted-in-console")
        expect_in(text(page, '[data-testid=call-request]'), "DELETE", "/delete?what=accepted-in-console")
        sent = log.settled()[before:]
        assert sent == [("DELETE", "/delete?what=accepted-in-console")], sent
        return f"httpbin got {sent}"
    step("Confirmation accepted in the page: nothing sent while asked, then exactly one DELETE, its echo shown", accepted)


def check_calls(b: Browser, page: Page, base: str) -> None:
    def listed() -> str:
        page.click('#nav a[data-route=calls]')
        page.locator('[data-testid=call-row]').first.wait_for()
        tools = page.eval_on_selector_all('[data-testid=call-row]', "rows => rows.map(r => r.dataset.tool)")
        for name in ("getPetById", "echoGet", "deleteEverything"):
            assert name in tools, tools
        return f"{len(tools)} rows"
    step("Calls: the calls tried in the page are in the live list", listed)

    def live() -> None:
        rows = page.locator('[data-testid=call-row][data-tool=findPetsByStatus]')
        assert rows.count() == 0
        assert mcp_call(base, "findPetsByStatus", {"status": "sold"}) == 200
        rows.first.wait_for()
        first = page.locator('[data-testid=call-row]').first.get_attribute("data-tool")
        assert first == "findPetsByStatus", f"newest row is {first}"
    step("Calls: a tools/call from an MCP client appears on top of the list without a reload", live)

    def charts() -> str:
        # The stats are polled every 2 s: wait for a poll after the last call, so that both
        # charts cover every tool called (the latency chart names its rows in data-tools).
        called = ["getPetById", "echoGet", "deleteEverything", "findPetsByStatus"]
        page.wait_for_function(
            """called => {
                const rate = document.querySelector('[data-testid=chart-rate]');
                const latency = document.querySelector('[data-testid=chart-latency]');
                const tools = (latency.dataset.tools || '').split(' ');
                return +(rate.dataset.points || 0) >= 4 && called.every(t => tools.includes(t));
            }""", arg=called, timeout=20_000)
        inked = page.evaluate("""() => ['chart-rate', 'chart-latency'].map(id => {
            const c = document.querySelector(`[data-testid=${id}]`);
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let n = 0;
            for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
            return n; })""")
        assert all(n > 500 for n in inked), inked
        b.shot(page, "calls")
        return f"inked pixels {inked}"
    step("Calls: the rate chart has drawn, and the latency chart has a row for each tool called", charts)


def check_auth(b: Browser, base: str) -> None:
    def plain() -> str:
        none, body = http("GET", base + "/console/api/overview")
        wrong, _ = http("GET", base + "/console/api/overview", {"Authorization": "Bearer not-" + TOKEN})
        right, good = http("GET", base + "/console/api/overview", {"Authorization": "Bearer " + TOKEN})
        assert (none, wrong, right) == (401, 401, 200), (none, wrong, right, short(body))
        assert "petstore" not in body, body
        assert "petstore" in good, good
        return f"without {none}, wrong {wrong}, with {right}"
    step("Auth: /console/api/overview over plain HTTP is 401 without the token and with a wrong one, 200 with it", plain)

    page = b.page()

    def form() -> None:
        page.goto(base + "/console")
        page.locator('[data-testid=token-form]').wait_for(state="visible")
        assert page.locator('[data-testid=api-row]').count() == 0
        assert page.locator('[data-testid=apis]').is_hidden()
        assert "petstore" not in page.inner_text("body")
        b.shot(page, "token")
        page.fill('[data-testid=token-input]', "not-" + TOKEN)
        page.click('[data-testid=token-submit]')
        page.locator('#token-error').wait_for(state="visible")
        assert page.locator('[data-testid=api-row]').count() == 0
        page.fill('[data-testid=token-input]', TOKEN)
        page.click('[data-testid=token-submit]')
        page.locator('[data-testid=api-row][data-api=petstore]').wait_for()
        assert page.locator('[data-testid=token-form]').is_hidden()
        stored = page.evaluate("() => Object.keys(localStorage).length")
        assert stored == 0, "the token went to localStorage"
    step("Auth: the page shows the token form and no API data, refuses a wrong token, shows the APIs with the right one", form)
    page.context.close()


def check_off(base: str) -> None:
    def off() -> str:
        got = {p: http("GET", base + p)[0] for p in ("/console", "/console/app.js", "/console/api/overview")}
        assert all(s == 404 for s in got.values()), got
        assert http("GET", base + "/healthz")[0] == 200
        return str(got)
    step("Off: with server.console = false, /console, its assets and its API are 404 (the server runs)", off)


base_of_httpbin = [""]  # the httpbin URL, for the checks that look for it in the page


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--httpbin", required=True)
    parser.add_argument("--access-log", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--screenshots")
    args = parser.parse_args()
    install_signals("console", HARD_LIMIT)
    work = Path(tempfile.mkdtemp(prefix="restmcp-console-"))
    shots = Path(args.screenshots) if args.screenshots else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)
    httpbin = args.httpbin.rstrip("/")
    base_of_httpbin[0] = httpbin
    log = AccessLog(Path(args.access_log).resolve(), httpbin)
    tokens = work / "tokens"
    tokens.write_text(f"# the console test's one token\n{TOKEN}\n")
    api = {
        "RESTMCP_APIS__HTTPBIN__SPEC": str(HERE / "httpbin-api.yaml"),
        "RESTMCP_APIS__HTTPBIN__BASE_URL": httpbin,
        "RESTMCP_APIS__HTTPBIN__CONFIRM": "destructive",
    }
    b: Browser | None = None
    try:
        a = serve(work, args.bin, "A", api)
        b_url = serve(work, args.bin, "B, token", {**api, "RESTMCP_SERVER__AUTH__TOKENS_FILE": str(tokens)})
        c = serve(work, args.bin, "C, console off", {"RESTMCP_SERVER__CONSOLE": "false"})
        with sync_playwright() as pw:
            b = Browser(pw, args.chromium, shots)
            page = b.page()
            check_apis(b, page, a)
            check_tools(b, page)
            check_try(b, page, a, log)
            check_confirm(b, page, a, log)
            check_calls(b, page, a)
            page.context.close()
            check_auth(b, b_url)
            b.browser.close()
        check_off(c)
        R.check("no script error and no Content-Security-Policy violation in any page", not b.problems, "\n".join(b.problems))
    except Exception as e:  # noqa: BLE001 - a server or the browser that did not start
        R.check("the servers and the browser started", False, error_text(e))
    finally:
        kill_all()
        save_logs(work)
    status = summary("console")
    finish(work, "CONSOLE_TEST_KEEP")
    return status


if __name__ == "__main__":
    sys.exit(main())
