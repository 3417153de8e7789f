#!/usr/bin/env python3
"""The official MCP Python SDK's OAuth client against restmcp, given nothing but its URL.

The promise: `mcp.client.auth.OAuthClientProvider` (mcp 2.3.0) connects to
restmcp over Streamable HTTP knowing only restmcp's URL. Everything else it must find itself:
restmcp's 401 challenge, its protected-resource metadata (RFC 9728), the provider's metadata
(RFC 8414), dynamic registration (RFC 7591), then authorization code + PKCE with a resource
indicator (RFC 8707) through the provider's login and consent pages, which this test answers
like a browser (redirect_handler) before handing the final redirect's code and state back to the
SDK (callback_handler). It then lists the tools and calls `whoami`, whose upstream is httpbin:
httpbin's echo of the Authorization header it received proves that restmcp exchanged the user's
token (RFC 8693) for one meant for httpbin, with the user's subject, and did not pass the MCP
token through; httpbin's access log, which records the Authorization header it received, is the
witness (restmcp redacts the tokens it obtained from tool results, so httpbin's echo in the
result reads "Bearer [REDACTED]"). Two users, alice (a confidential client, client_secret_basic) and bob (a public
client, no secret), each in a fresh client with empty storage, must each see their own subject
upstream. The console's API (/console/api/*) is checked behind the same resource server with
alice's token: refused without it, a call tried from it runs as alice (her exchanged token
upstream, her scopes) and shows the request sent with its credential by name only.

Scope-aware tools: the SDK's first token has the scope of restmcp's 401
challenge (mcp:tools), so alice's and bob's first tools/list must not show whoami (echo:read), and
calling it anyway gets restmcp's 403 insufficient_scope, on which the SDK steps up (SEP-2350:
authorizes again, login and consent again, for the challenged scope together with the one it
had) and retries. A third user, dave, proves that step-up on its own: no adminReport in his first
listing, one 403 naming echo:admin (seen by an httpx2 response hook), one new authorization
asking for mcp:tools echo:admin, the retried call reaching httpbin with his exchanged token,
adminReport listed afterwards; and the SDK's listing (2026-07-28) says cacheScope private. The
step-up works only because provider.mjs does not hold dynamically registered clients to the
scope they registered with: the SDK registers with the scope of its first challenge and never
registers again, and oidc-provider would refuse the step-up's authorization request with
error=invalid_scope ("requested scope is not allowed").

Why the SDK and not our own HTTP: the SDK is what real MCP clients run; it decides which
metadata URLs to try, which scope and resource to ask for, and how to register, so it proves
that restmcp's discovery chain works for a client nobody here wrote. httpbin (PyPI, under
gunicorn) is an upstream nobody here wrote either.

Processes, all on 127.0.0.1 and free ports, killed on any exit: tests/oauth/provider.mjs
(oidc-provider, with the RFC 8693 grant), httpbin under gunicorn, `restmcp serve` with
[server.oauth] and [apis.echo.auth.user_oauth.token_exchange] (tests/oauth/echo-api.yaml).

One line per check, then `oauth-python: N passed, M failed`; exit 0 only when nothing failed.
On failure (or with OAUTH_TEST_KEEP=1) the work directory (config.toml, restmcp.stderr,
provider.stderr, httpbin.log) is kept and named.

Usage: python_oauth.py --bin PATH/TO/restmcp [--node node]
(run by tests/oauth/run.sh in a venv with mcp==2.3.0, httpbin==0.10.4 and gunicorn)
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlparse

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "lib"))
import harness  # noqa: E402 - tests/lib/harness.py: results and processes
from harness import CHILDREN, PASS_FAIL, Child, R, error_text, finish, free_port, install_signals, kill_all, summary  # noqa: E402

STEP = 20.0  # seconds: one process start, one HTTP request
USER_TIMEOUT = 90.0  # seconds: one user's whole connect, flow and calls
HARD_LIMIT = 300  # seconds: the process kills itself (and its children) past this
EXCHANGER_SECRET = "exchanger-" + secrets.token_urlsafe(18)  # random per run
STATIC_TOKEN = "static-" + secrets.token_urlsafe(18)

# --------------------------------------------------------------------------------------
# Results (PASS/FAIL lines) and processes: tests/lib/harness.py

R.style = PASS_FAIL


def short(value: Any, n: int = 300) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= n else text[:n] + "..."


def header_of(echo: dict[str, Any]) -> str:
    return next((v for k, v in (echo.get("headers") or {}).items() if k.lower() == "authorization"), "")


def jwt_payload(token: str) -> dict[str, Any]:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def child_env(extra: dict[str, str]) -> dict[str, str]:
    return harness.child_env(extra, prefixes=("OAUTH_TEST_",))


# --------------------------------------------------------------------------------------
# The browser: answers the provider's login and consent pages


class Browser:
    """What a user's browser does between the SDK's redirect_handler and callback_handler:
    follows the authorization URL, signs in on oidc-provider's dev login page (any password),
    clicks Continue on its consent page, and stops at the redirect to the client's redirect URI,
    whose code, state and iss go back to the SDK."""

    def __init__(self, login: str, redirect_uri: str) -> None:
        self.login = login
        self.redirect_uri = redirect_uri
        self.authorization_urls: list[str] = []
        self.forms: list[str] = []
        self.result: AuthorizationCodeResult | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        self.authorization_urls.append(authorization_url)
        url, data = authorization_url, None
        async with httpx2.AsyncClient(follow_redirects=False, timeout=STEP) as http:
            for _ in range(12):
                if url.startswith(self.redirect_uri):
                    break
                response = await (http.post(url, data=data) if data else http.get(url))
                data = None
                location = response.headers.get("location")
                if location:
                    url = urljoin(url, location)
                    continue
                html = response.text
                action = re.search(r'<form[^>]*action="([^"]+)"', html)
                prompt = re.search(r'name="prompt" value="([^"]+)"', html)
                if not (action and prompt):
                    raise RuntimeError(f"no login or consent form at {url} ({response.status_code}): {short(html)}")
                self.forms.append(prompt.group(1))
                url = urljoin(url, action.group(1).replace("&amp;", "&"))
                data = {"prompt": "login", "login": self.login, "password": "any"} if prompt.group(1) == "login" else {"prompt": prompt.group(1)}
        if not url.startswith(self.redirect_uri):
            raise RuntimeError(f"the provider never redirected back; last URL {url}")
        query = {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}
        if "code" not in query:
            raise RuntimeError(f"redirected back without a code: {short(query)}")
        self.result = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def callback_handler(self) -> AuthorizationCodeResult:
        assert self.result is not None, "callback before redirect"
        result, self.result = self.result, None
        return result


class MemoryStorage:
    """The SDK's TokenStorage, in memory: each user starts with nothing."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


# --------------------------------------------------------------------------------------
# The checks


class World:
    issuer: str
    httpbin: str
    url: str  # restmcp's MCP endpoint: all the SDK is told
    provider: Child
    restmcp: Child
    httpbin_log: Child


ACCESS_FORMAT = '%(h)s %(t)s "%(r)s" %(s)s authorization="%({authorization}i)s"'


def upstream_lines(w: World, path: str = "/anything/profile") -> list[str]:
    """httpbin's access-log lines for `path` (whoami's, GET /anything/profile, by default), oldest first."""
    return [line for line in w.httpbin_log.text("stdout").splitlines() if f'"GET {path}' in line]


def token_scope(storage: MemoryStorage) -> list[str]:
    """The scope claim of the MCP access token the SDK holds (what restmcp decides by)."""
    token = storage.tokens.access_token if storage.tokens else ""
    return str(jwt_payload(token).get("scope", "")).split() if token.count(".") == 2 else []


def challenge_params(header: str) -> dict[str, str]:
    """WWW-Authenticate: Bearer k="v", k2=v2 -> {k: v, k2: v2}."""
    return {k.lower(): v if v else bare for k, v, bare in re.findall(r'([A-Za-z0-9_-]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))', header)}


class Wire:
    """Every response the SDK's HTTP client received, its OAuth flow's included (an httpx2
    response hook): method, URL, status, WWW-Authenticate."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, int, str]] = []

    async def hook(self, response: httpx2.Response) -> None:
        self.seen.append((response.request.method, str(response.request.url), response.status_code,
                          response.headers.get("www-authenticate", "")))


def exchanges(w: World) -> dict[str, Any]:
    with httpx2.Client(timeout=STEP) as http:
        return http.get(f"{w.issuer}/__test/exchanges").json()


async def one_user(w: World, login: str, auth_method: str | None, seen_upstream: dict[str, str]) -> None:
    who = f"{login} ({auth_method or 'default auth method: confidential'})"
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"  # never contacted: the browser stops there
    browser = Browser(login, redirect_uri)
    storage = MemoryStorage()
    metadata: dict[str, Any] = {
        "client_name": f"restmcp oauth test ({login})",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
    }
    if auth_method:
        metadata["token_endpoint_auth_method"] = auth_method
    oauth = OAuthClientProvider(
        server_url=w.url,
        client_metadata=OAuthClientMetadata.model_validate(metadata),
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )
    before = exchanges(w)
    hits_before = len(upstream_lines(w))
    with anyio.fail_after(USER_TIMEOUT):
        async with httpx2.AsyncClient(auth=oauth, timeout=STEP) as http:
            async with Client(streamable_http_client(w.url, http_client=http)) as client:
                R.check(f"{who}: the SDK connected (discovery, registration, login, consent, code + PKCE)", True)
                granted = token_scope(storage)
                tools = [t.name for t in (await client.list_tools()).tools]
                # Scope-aware tools (part 3): whoami needs echo:read, which the SDK's first token
                # (the scope of restmcp's 401 challenge) may lack; then calling it steps up.
                R.check(f"{who}: tools/list shows whoami only if the token has echo:read, openInfo always, adminReport never",
                        ("whoami" in tools) == ("echo:read" in granted) and "openInfo" in tools and "adminReport" not in tools,
                        f"token scope {' '.join(granted)!r}, tools {short(tools)}")
                result = await client.call_tool("whoami", {})
                echo = result.structured_content
                if not isinstance(echo, dict) or "headers" not in echo:
                    texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
                    try:
                        echo = json.loads(texts[0]) if texts else None
                    except ValueError:
                        echo = None
                ok = result.is_error is not True and isinstance(echo, dict)
                if not R.check(f"{who}: whoami is no error", ok, "" if ok else short(result.model_dump(mode="json"), 600)):
                    return
    after = exchanges(w)
    await anyio.sleep(0.3)  # the access-log line arrives just after the response
    hits = upstream_lines(w)[hits_before:]

    # What the SDK did, from what it stored and what its browser saw.
    auth_url = browser.authorization_urls[0] if browser.authorization_urls else ""
    q = {k: v[0] for k, v in parse_qs(urlparse(auth_url).query).items()}
    R.check(f"{who}: authorization request at the provider's endpoint, S256 PKCE, resource = restmcp",
            auth_url.startswith(f"{w.issuer}/auth?") and q.get("code_challenge_method") == "S256"
            and q.get("resource") == w.url, short(auth_url.split("&code_challenge=")[0], 200) + f" resource={q.get('resource')}")
    # login, consent; twice that if restmcp's 403 insufficient_scope made the SDK step up.
    R.check(f"{who}: the browser answered login then consent", browser.forms[:2] == ["login", "consent"], short(browser.forms))
    info = storage.client_info
    R.check(f"{who}: registered dynamically at the provider",
            info is not None and bool(info.client_id) and (auth_method != "none" or not info.client_secret),
            f"client_id={info.client_id if info else None}, auth={info.token_endpoint_auth_method if info else None}")
    mcp_token = storage.tokens.access_token if storage.tokens else ""
    mine = jwt_payload(mcp_token) if mcp_token.count(".") == 2 else {}
    R.check(f"{who}: its MCP token is for restmcp with sub {login}",
            mine.get("sub") == login and mine.get("aud") == w.url, short({k: mine.get(k) for k in ("sub", "aud", "scope")}))

    # What httpbin received (its access log), and what the result shows of it.
    m = re.search(r'authorization="Bearer ([^"\s]+)"', hits[0]) if len(hits) == 1 else None
    if not R.check(f"{who}: httpbin received one whoami request, with a Bearer token", bool(m),
                   f"{len(hits)} request(s): " + short(" | ".join(re.sub(r'(authorization="[^"]{0,12})[^"]*', r"\1...", h) for h in hits))):
        return
    upstream = m.group(1)
    R.check(f"{who}: the upstream token is not in the tool result (restmcp redacts it)",
            upstream not in json.dumps(result.model_dump(mode="json")),
            f"httpbin's echo in the result: Authorization {short(header_of(echo), 30)}")
    R.check(f"{who}: not the MCP token (no passthrough)", upstream != mcp_token)
    claims = jwt_payload(upstream) if upstream.count(".") == 2 else {}
    R.check(f"{who}: the upstream token is an exchanged one: sub {login}, aud httpbin, scope echo:read, client exchanger",
            claims.get("sub") == login and str(claims.get("aud", "")).rstrip("/") == w.httpbin
            and claims.get("scope") == "echo:read" and claims.get("client_id") == "exchanger",
            short({k: claims.get(k) for k in ("sub", "aud", "scope", "client_id", "act")}))
    got = after.get("bySubject", {}).get(login, 0) - before.get("bySubject", {}).get(login, 0)
    R.check(f"{who}: exactly one exchange for {login}", got == 1, f"{before} -> {after}")
    seen_upstream[login] = upstream
    if login == "alice":
        await console_as(w, who, mcp_token, token_scope(storage))


async def console_as(w: World, who: str, token: str, granted: list[str]) -> None:
    """The console's API (/console, on by default on loopback) behind the same OAuth
    resource server: refused without the access token, open with it, and a call tried from
    it runs as the token's user (token exchange, scopes) with no token in what it shows."""
    base = w.url.removesuffix("/mcp")
    bearer = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(timeout=STEP) as http:
        bare = await http.get(f"{base}/console/api/overview")
        R.check(f"{who}: the console's API refuses a request without an access token (401, a Bearer challenge)",
                bare.status_code == 401 and "Bearer" in bare.headers.get("www-authenticate", ""),
                f"{bare.status_code} {short(bare.text, 120)}")
        seen = await http.get(f"{base}/console/api/overview", headers=bearer)
        overview = seen.json() if seen.status_code == 200 else {}
        R.check(f"{who}: with the access token the console's overview answers, auth oauth",
                overview.get("auth") == "oauth", f"{seen.status_code} {short(seen.text, 160)}")
        hits_before = len(upstream_lines(w))
        tried = await http.post(f"{base}/console/api/call", headers=bearer, json={"name": "whoami", "arguments": {}})
        answer = tried.json() if tried.status_code == 200 else {}
        result = answer.get("result") or {}
        await anyio.sleep(0.3)  # the access-log line arrives just after the response
        hits = upstream_lines(w)[hits_before:]
        if "echo:read" in granted:
            shown = json.dumps(answer)
            headers = {k.lower(): v for k, v in (answer.get("request") or {}).get("headers") or []}
            R.check(f"{who}: whoami tried from the console reaches httpbin once, as {who.split()[0]}, with an exchanged token",
                    result.get("isError") is False and len(hits) == 1 and token not in hits[0],
                    f"{tried.status_code} {short(answer, 300)} | {len(hits)} hit(s)")
            R.check(f"{who}: the console shows the request sent with its credential by name only, and no token",
                    headers.get("authorization") == "[redacted]" and token not in shown
                    and not re.search(r"Bearer [A-Za-z0-9_-]{20,}", shown), short(headers, 200))
        else:
            R.check(f"{who}: whoami tried from the console without echo:read is refused for its scope, nothing sent",
                    result.get("isError") is True and "scope" in json.dumps(result) and not hits,
                    f"{tried.status_code} {short(answer, 300)}")


async def step_up(w: World, seen_upstream: dict[str, str]) -> None:
    """Scope-aware tools (part 3) through the SDK: dave's first token lacks echo:admin, so
    adminReport is not listed and calling it gets restmcp's 403 insufficient_scope; the SDK
    (SEP-2350 step-up) authorizes again, asking for the challenge's scope together with the
    scope it had, through login and consent again, and retries the call, which then works."""
    login = "dave"
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    browser = Browser(login, redirect_uri)
    storage = MemoryStorage()
    wire = Wire()
    oauth = OAuthClientProvider(
        server_url=w.url,
        client_metadata=OAuthClientMetadata.model_validate({
            "client_name": f"restmcp oauth test ({login})",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }),
        storage=storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )
    with anyio.fail_after(USER_TIMEOUT):
        async with httpx2.AsyncClient(auth=oauth, timeout=STEP, event_hooks={"response": [wire.hook]}) as http:
            async with Client(streamable_http_client(w.url, http_client=http)) as client:
                first = token_scope(storage)
                listing = await client.list_tools()
                tools = [t.name for t in listing.tools]
                R.check(f"{login}: first token without echo:admin, tools/list without adminReport",
                        bool(first) and "echo:admin" not in first and "adminReport" not in tools and "openInfo" in tools,
                        f"token scope {' '.join(first)!r}, tools {short(tools)}")
                version = client.protocol_version
                R.check(f"{login}: the SDK's tools/list ({version}) says cacheScope private",
                        version != "2026-07-28" or getattr(listing, "cache_scope", None) == "private",
                        f"cache_scope {getattr(listing, 'cache_scope', None)!r}")
                authorizations, forms, mark = len(browser.authorization_urls), len(browser.forms), len(wire.seen)
                hits = len(upstream_lines(w, "/anything/admin"))
                result = await client.call_tool("adminReport", {})
                stepped = token_scope(storage)
                after = [t.name for t in (await client.list_tools()).tools]
    await anyio.sleep(0.3)  # the access-log line arrives just after the response
    responses = wire.seen[mark:]
    print("# " + login + ": responses during the call: "
          + short(" | ".join(f"{m} {urlparse(u).path} {st}" + (f" [{h}]" if h else "") for m, u, st, h in responses), 1200), flush=True)
    forbidden = [h for _m, u, st, h in responses if st == 403 and u == w.url]
    params = challenge_params(forbidden[0]) if forbidden else {}
    R.check(f"{login}: calling adminReport, the SDK got restmcp's 403 insufficient_scope naming echo:admin",
            len(forbidden) == 1 and forbidden[0].startswith("Bearer ") and params.get("error") == "insufficient_scope"
            and "echo:admin" in params.get("scope", "").split() and bool(params.get("resource_metadata")),
            f"{len(forbidden)} 403(s): {short(forbidden, 400)}")
    new_auth = browser.authorization_urls[authorizations:]
    asked = parse_qs(urlparse(new_auth[0]).query).get("scope", [""])[0].split() if new_auth else []
    R.check(f"{login}: the SDK authorized again, once, asking for echo:admin and keeping its first scopes",
            len(new_auth) == 1 and "echo:admin" in asked and set(first) <= set(asked),
            f"{len(new_auth)} new authorization(s), scope asked {' '.join(asked)!r}")
    R.check(f"{login}: the browser answered login and consent again", browser.forms[forms:] == ["login", "consent"],
            short(browser.forms))
    R.check(f"{login}: the new token has echo:admin", "echo:admin" in stepped, f"token scope {' '.join(stepped)!r}")
    ok = result.is_error is not True
    R.check(f"{login}: the retried adminReport is no error", ok, "" if ok else short(result.model_dump(mode="json"), 600))
    lines = upstream_lines(w, "/anything/admin")[hits:]
    m = re.search(r'authorization="Bearer ([^"\s]+)"', lines[0]) if len(lines) == 1 else None
    claims = jwt_payload(m.group(1)) if m and m.group(1).count(".") == 2 else {}
    R.check(f"{login}: httpbin got one adminReport request, with an exchanged token for {login}",
            claims.get("sub") == login and claims.get("client_id") == "exchanger",
            f"{len(lines)} request(s), token claims {short({k: claims.get(k) for k in ('sub', 'aud', 'scope', 'client_id')})}")
    if m:
        seen_upstream[login] = m.group(1)
    R.check(f"{login}: after the step-up tools/list shows adminReport", "adminReport" in after, short(after))


async def run(w: World) -> None:
    seen: dict[str, str] = {}
    for login, method in (("alice", None), ("bob", "none"), ("dave", "step-up")):
        try:
            if method == "step-up":
                await step_up(w, seen)
            else:
                await one_user(w, login, method, seen)
        except Exception as e:  # noqa: BLE001 - every failure is a FAIL line, then on to the next user
            R.check(f"{login}: the whole flow", False, error_text(e))
    if "alice" in seen and "bob" in seen:
        R.check("alice and bob reached httpbin with different tokens", seen["alice"] != seen["bob"])
    # No secret or token of this run in restmcp's stderr.
    log = w.restmcp.text("stderr")
    leaks = [name for name, value in (("exchanger secret", EXCHANGER_SECRET), ("static token", STATIC_TOKEN)) if value in log]
    leaks += [f"{who}'s upstream token" for who, tok in seen.items() if tok in log or tok.split(".")[-1] in log]
    R.check("no secret or exchanged token in restmcp's stderr", not leaks, ", ".join(leaks))


def start(args: argparse.Namespace, work: Path) -> World:
    w = World()
    w.provider = Child("provider.mjs", [args.node, str(HERE / "provider.mjs"), "--port", "0"],
                       child_env({"OAUTH_TEST_EXCHANGER_SECRET": EXCHANGER_SECRET}), HERE,
                       stdin=subprocess.PIPE)  # provider.mjs exits when its stdin closes
    CHILDREN.append(w.provider)
    w.issuer = w.provider.wait_for(r"^READY (http://127\.0\.0\.1:\d+)$", "stdout").group(1)

    port = free_port()
    httpbin = Child("httpbin", [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}", "--workers", "1",
                                "--threads", "4", "--log-level", "info", "--access-logfile", "-",
                                "--access-logformat", ACCESS_FORMAT, "httpbin:app"],
                    child_env({"PYTHONDONTWRITEBYTECODE": "1"}), work)
    CHILDREN.append(httpbin)
    httpbin.wait_for(r"Listening at: http://", "stderr")
    w.httpbin = f"http://127.0.0.1:{port}"
    w.httpbin_log = httpbin

    shutil.copy(HERE / "echo-api.yaml", work / "echo-api.yaml")
    port = free_port()
    w.url = f"http://127.0.0.1:{port}/mcp"
    (work / "config.toml").write_text(f"""[server]
listen = "127.0.0.1:{port}"
[server.auth]
tokens_env = ["RESTMCP_TEST_STATIC_TOKEN"]
[server.oauth]
resource = "{w.url}"
issuers = ["{w.issuer}"]
scopes = ["mcp:tools"]
[apis.echo]
spec = "echo-api.yaml"
base_url = "{w.httpbin}"
[apis.echo.auth.user_oauth]
client_id_env = "RESTMCP_TEST_EXCHANGER_ID"
client_secret_env = "RESTMCP_TEST_EXCHANGER_SECRET"
[apis.echo.auth.user_oauth.token_exchange]
token_url = "{w.issuer}/token"
resource = "{w.httpbin}"
scopes = ["echo:read"]
""")
    w.restmcp = Child("restmcp serve", [args.bin, "--config", str(work / "config.toml"), "serve"],
                      child_env({"RESTMCP_TEST_EXCHANGER_ID": "exchanger", "RESTMCP_TEST_EXCHANGER_SECRET": EXCHANGER_SECRET,
                                 "RESTMCP_TEST_STATIC_TOKEN": STATIC_TOKEN}), work)
    CHILDREN.append(w.restmcp)
    w.restmcp.wait_for(r"MCP over Streamable HTTP at http://", "stderr")
    return w


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, help="the restmcp binary")
    parser.add_argument("--node", default="node", help="node, to run provider.mjs")
    args = parser.parse_args()
    args.bin = str(Path(args.bin).resolve())

    install_signals("oauth-python", HARD_LIMIT)

    work = Path(tempfile.mkdtemp(prefix="restmcp-oauth-py-"))
    w: World | None = None
    try:
        try:
            w = start(args, work)
        except Exception as e:  # noqa: BLE001
            R.check("start provider.mjs, httpbin and restmcp serve", False, short(str(e), 2000))
        else:
            print(f"provider {w.issuer}, httpbin {w.httpbin}, restmcp {w.url}", flush=True)
            anyio.run(run, w)
    finally:
        kill_all()
        for child, name in ((w and w.restmcp, "restmcp.stderr"), (w and w.provider, "provider.stderr")):
            if child:
                (work / name).write_text(child.text("stderr") + "\n")
        for child in CHILDREN:
            if child.name == "httpbin":
                (work / "httpbin.log").write_text(child.text("stdout") + "\n" + child.text("stderr") + "\n")
        finish(work, "OAUTH_TEST_KEEP")
    return summary("oauth-python")


if __name__ == "__main__":
    sys.exit(main())
