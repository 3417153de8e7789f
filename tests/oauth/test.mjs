// restmcp as an OAuth 2.1 resource server acting for its users (resource
// server, token exchange, scope-aware tools), proven against a real OpenID provider: oidc-provider (provider.mjs;
// its configuration, plus the RFC 8693 grant it lacks, the only handler of ours
// on the provider side). Plain HTTP with the global fetch, so
// every status code and WWW-Authenticate header is checked as a client sees it.
//
//   node test.mjs --bin PATH/TO/restmcp [--spec PATH/TO/petstore.yaml] [--python PATH]
//   (or RESTMCP_BIN / RESTMCP_SPEC in the environment)
//
// Starts provider.mjs and `restmcp serve` (config in a temp dir, the shipped
// specs/petstore.yaml in mock mode, [server.oauth] with this provider as issuer,
// a static token beside it) on free loopback ports, then checks:
//   provider  tokens, JWKS and introspection are what the tests below assume
//   a  protected-resource metadata (RFC 9728), plain and path-suffixed
//   b  401 challenge without a token, and the discovery chain it starts
//   c  a valid JWT: initialize, then tools/call getPetById
//   d  wrong audience -> 401 invalid_token
//   e  expired token -> 401 invalid_token
//   g  scope missing -> 403 insufficient_scope, scope="mcp:tools"
//   h  opaque tokens through introspection (and a garbage one -> 401)
//   i  the static token still works
//   j  a tampered JWT, an alg:none JWT and an HS256 JWT keyed with the
//      provider's public key -> 401
//   f  key rotation: provider restarted with a new key (run last: it drops the
//      provider's in-memory state)
//   k  no token or secret in restmcp's stderr
// Then, with a second `restmcp serve` whose upstream is httpbin (PyPI, under
// gunicorn, tests/oauth/echo-api.yaml) and whose user_oauth scheme is a
// [token_exchange] with this provider (part 2, RFC 8693):
//   provider  authorization code + PKCE for a dynamically registered client
//      through the dev login/consent pages (sub = login name); the provider's
//      token exchange and its RFC 8693 errors
//   x1 alice's call reaches httpbin with an exchanged token (sub alice, aud the
//      httpbin resource, scope echo:read, client exchanger), not her MCP token;
//      httpbin's access log is the witness (the result shows no token)
//   x2 the exchange cache: a second call exchanges nothing
//   x3 bob gets his own exchange and his own subject upstream
//   x4 the static token (no user): isError, and nothing reaches httpbin
//   x5 an upstream 401: exchanged anew exactly once, retried once, then isError
//   x6 a refused exchange (scope not allowed) and x7 an unreachable token
//      endpoint: isError saying why, naming no secret, nothing reaches httpbin
//   x8 no exchanged token, MCP token or secret in that restmcp's stderr
// And with that same restmcp, scope-aware tools (part 3: a tool's scopes come
// from its operation's security; echo-api.yaml's adminReport needs echo:admin,
// openInfo nothing), for users alice (mcp:tools echo:read), bob (mcp:tools
// echo:read echo:admin) and carol (mcp:tools):
//   s1 the static token lists every tool
//   s2 alice's tools/list lacks the adminReport tools, bob's has them all
//   s3 carol's lists only the open tools (no whoami either)
//   s4 alice calling adminReport, and carol calling whoami: HTTP 403, Bearer
//      error="insufficient_scope", scope = mcp:tools plus the tool's missing
//      scope, resource_metadata, error_description, no JSON-RPC result; no
//      exchange, nothing reaches httpbin
//   s5 bob's adminReport reaches httpbin with an exchanged token for bob
//   s6 openInfo (security: []) works for carol and the static token, and
//      httpbin receives no Authorization
//   s7 on 2026-07-28 (stateless, no initialize) alice's tools/list is hers and
//      says cacheScope "private"; s8 her adminReport call there: the same 403
//   s9 no token of these checks in that restmcp's stderr
// And, against two more restmcp servers with introspection_rate_limit = { per_second =
// 0.2, burst = 3 } and introspection_cache_seconds = 2 (the provider
// counts the introspection requests it gets, GET /__test/introspections):
//   r1 twelve made-up opaque tokens from one address: the first three are introspected
//      (401), the rest get 429 with Retry-After, and the provider was asked three times
//   r2 a valid opaque token from the same address right after: 429 (the address's ration
//      is spent: every test client is 127.0.0.1); after waiting the Retry-After it gave,
//      served, and then served from its verdict (no introspection) while the flood goes on
//      being refused
//   r3 once its verdict is older than 2 s, with the flood going on: checked again outside the
//      address's ration, and served
//   r4 a valid opaque token accepted, revoked at the provider's revocation endpoint,
//      accepted at most 2 s after its introspection, then 401 invalid_token, and stays so
// Why: these are the resource-server and token-exchange cases restmcp
// promises (and, for scope-aware tools, "two users with different scopes see different
// tools/list results"), seen the way a remote MCP client sees them, with tokens from a
// certified provider rather than tokens we mint (only j forges tokens, on
// purpose), and an upstream nobody here wrote as the witness of what restmcp
// sent. The x and s checks need --python PATH (a python with httpbin==0.10.4 and
// gunicorn; run.sh passes its venv's) or OAUTH_TEST_PYTHON.
// Only 127.0.0.1 is contacted. Every step has a timeout. Secrets and static
// tokens are random per run. On failure (or with OAUTH_TEST_KEEP=1) the work
// directory (config.toml, restmcp.stderr, provider.stderr) is kept and named.
import { spawn } from 'node:child_process';
import { createHash, createHmac, createPublicKey, randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
function argValue(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const BIN = path.resolve(ROOT, argValue('--bin') ?? process.env.RESTMCP_BIN ?? 'target/debug/restmcp');
const SPEC = path.resolve(ROOT, argValue('--spec') ?? process.env.RESTMCP_SPEC ?? 'specs/petstore.yaml');
const PYTHON = argValue('--python') ?? process.env.OAUTH_TEST_PYTHON; // with httpbin and gunicorn
const ECHO_SPEC = path.join(HERE, 'echo-api.yaml');

const STEP_MS = 15_000; // one HTTP request, one process start
const TEST_MS = 60_000; // one test
const PROTOCOL = '2025-11-25';
const REQUIRED_SCOPE = 'mcp:tools';

// Random per run; restmcp's stderr is searched for every one of them (k).
const rnd = (prefix) => `${prefix}-${randomBytes(18).toString('base64url')}`;
const SECRETS = {
  OAUTH_TEST_SVC_SECRET: rnd('svc'),
  OAUTH_TEST_SVC_SHORT_SECRET: rnd('svcshort'),
  OAUTH_TEST_SVC_OPAQUE_SECRET: rnd('svcopaque'),
  OAUTH_TEST_INTROSPECTION_SECRET: rnd('introspect'),
  OAUTH_TEST_EXCHANGER_SECRET: rnd('exchanger'),
};
const STATIC_TOKEN = rnd('static');
const CLIENT_SECRET = {
  svc: SECRETS.OAUTH_TEST_SVC_SECRET,
  'svc-short': SECRETS.OAUTH_TEST_SVC_SHORT_SECRET,
  'svc-opaque': SECRETS.OAUTH_TEST_SVC_OPAQUE_SECRET,
  restmcp: SECRETS.OAUTH_TEST_INTROSPECTION_SECRET,
  exchanger: SECRETS.OAUTH_TEST_EXCHANGER_SECRET,
};
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
const issuedTokens = []; // every access token handed out, for (k)

// ---------------------------------------------------------------- processes

const workDir = mkdtempSync(path.join(os.tmpdir(), 'restmcp-oauth-'));
let failures = 0;
const restmcpStderr = [];
const providerStderr = [];
let provider; // { child, issuer, port }
let restmcp; // { child, base, resource }: the one the checks talk to
const restmcps = []; // every restmcp started, killed as a group on exit
let httpbin; // { child, base }
const httpbinAccess = []; // gunicorn's access log: one line per request httpbin got

// Nothing outlives this process, however it ends: restmcp's process group and
// the provider are killed on exit (the provider also exits when its stdin closes).
process.on('exit', () => {
  const children = [...restmcps.map((r) => [r.child, true]), [httpbin?.child, true], [provider?.child, false]];
  for (const [child, group] of children) {
    if (!child || child.exitCode !== null || child.signalCode !== null) continue;
    try {
      process.kill(group ? -child.pid : child.pid, 'SIGKILL');
    } catch {}
  }
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => process.exit(130));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Environment without the caller's RESTMCP_* / OAUTH_TEST_* settings.
function childEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('RESTMCP_') && !k.startsWith('OAUTH_TEST_')) env[k] = v;
  }
  return { ...env, ...extra };
}

// Spawns a process and resolves with the first match of `banner` in the lines of
// `stream` (stdout or stderr); rejects if it exits first.
function startAndWait(cmd, args, opts, stream, banner, log, what) {
  const child = spawn(cmd, args, { ...opts, stdio: ['pipe', 'pipe', 'pipe'] });
  const ready = new Promise((resolve, reject) => {
    const bufs = { stdout: '', stderr: '' };
    for (const name of ['stdout', 'stderr']) {
      child[name].setEncoding('utf8');
      child[name].on('data', (chunk) => {
        bufs[name] += chunk;
        let nl;
        while ((nl = bufs[name].indexOf('\n')) >= 0) {
          const line = bufs[name].slice(0, nl);
          bufs[name] = bufs[name].slice(nl + 1);
          if (name === 'stderr') log.push(line);
          const m = name === stream ? banner.exec(line) : null;
          if (m) resolve(m);
        }
      });
    }
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(new Error(`${what} exited early (code ${code}, signal ${signal}); stderr:\n${log.slice(-20).join('\n')}`)),
    );
  });
  return withTimeout(ready, STEP_MS, `${what} to start`).then(
    (m) => ({ child, match: m }),
    async (e) => {
      await stop(child);
      throw e;
    },
  );
}

async function stop(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  try {
    await withTimeout(exited, 5_000, 'a child to stop');
  } catch {
    child.kill('SIGKILL');
    await withTimeout(exited, 5_000, 'a child to die').catch(() => {});
  }
}

async function startProvider(port, kid) {
  let lastError;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const { child, match } = await startAndWait(
        process.execPath,
        [path.join(HERE, 'provider.mjs'), '--port', String(port), '--kid', kid],
        { cwd: HERE, env: childEnv(SECRETS) },
        'stdout',
        /^READY (http:\/\/127\.0\.0\.1:\d+)$/,
        providerStderr,
        'provider.mjs',
      );
      return { child, issuer: match[1], port, kid };
    } catch (e) {
      lastError = e;
      if (!/cannot listen/.test(e.message)) break; // only a port race is retried
      await sleep(300);
    }
  }
  throw lastError;
}

const petstoreConfig = (issuer) => (port, resource) => `[server]
listen = "127.0.0.1:${port}"
[server.auth]
tokens_env = ["RESTMCP_TEST_STATIC_TOKEN"]
[server.oauth]
resource = "${resource}"
issuers = ["${issuer}"]
scopes = ["${REQUIRED_SCOPE}"]
clock_skew_seconds = 0
jwks_refresh_seconds = 1
[server.oauth.introspection]
client_id = "restmcp"
client_secret_env = "RESTMCP_TEST_INTROSPECTION_SECRET"
[apis.petstore]
spec = "petstore.yaml"
mock = true
`;

// `restmcp serve` with the config configFor(port, resource) gives, written to
// workDir/file; its stderr lines go to log.
async function startRestmcp(configFor, { file = 'config.toml', log = restmcpStderr } = {}) {
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const resource = `${base}/mcp`;
    writeFileSync(path.join(workDir, file), configFor(port, resource));
    try {
      const { child } = await startAndWait(
        BIN,
        ['--config', path.join(workDir, file), 'serve'],
        {
          cwd: workDir,
          env: childEnv({
            RESTMCP_TEST_STATIC_TOKEN: STATIC_TOKEN,
            RESTMCP_TEST_INTROSPECTION_SECRET: SECRETS.OAUTH_TEST_INTROSPECTION_SECRET,
            RESTMCP_TEST_EXCHANGER_ID: 'exchanger',
            RESTMCP_TEST_EXCHANGER_SECRET: SECRETS.OAUTH_TEST_EXCHANGER_SECRET,
          }),
          detached: true, // own process group: killed as a whole in after()
        },
        'stderr',
        /MCP over Streamable HTTP at (http:\/\/\S+)/,
        log,
        'restmcp serve',
      );
      const started = { child, base, resource };
      restmcps.push(started);
      return started;
    } catch (e) {
      lastError = e;
      if (!/exited early/.test(e.message) || !/address|in use/i.test(e.message)) break;
    }
  }
  throw lastError;
}

// ---------------------------------------------------------------- HTTP helpers

const b64json = (s) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
const jsonb64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
function decodeJwt(token) {
  const [h, p, s] = token.split('.');
  return { header: b64json(h), payload: b64json(p), parts: [h, p, s] };
}

async function getToken(clientId, { resource, scope }) {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (resource) form.set('resource', resource);
  if (scope) form.set('scope', scope);
  const res = await fetch(`${provider.issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${CLIENT_SECRET[clientId]}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: form,
    signal: AbortSignal.timeout(STEP_MS),
  });
  const body = await res.json();
  assert.equal(res.status, 200, `token request for ${clientId}: ${res.status} ${JSON.stringify(body)}`);
  issuedTokens.push(body.access_token);
  return body;
}

async function introspect(token) {
  const res = await fetch(`${provider.issuer}/token/introspection`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`restmcp:${CLIENT_SECRET.restmcp}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token }),
    signal: AbortSignal.timeout(STEP_MS),
  });
  assert.equal(res.status, 200);
  return res.json();
}

async function getJson(url) {
  const res = await fetch(url, { signal: AbortSignal.timeout(STEP_MS) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

// One JSON-RPC POST to /mcp; the answer may be JSON or an SSE stream.
async function mcp(message, { token, session, server = restmcp, protocol = PROTOCOL, extraHeaders = {} } = {}) {
  const headers = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': protocol,
    ...extraHeaders,
  };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (session) headers['mcp-session-id'] = session;
  const res = await fetch(server.resource, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    signal: AbortSignal.timeout(STEP_MS),
  });
  const text = await res.text();
  let json;
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    for (const event of text.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (!data) continue;
      const msg = JSON.parse(data);
      if (message.id !== undefined && msg.id === message.id) json = msg;
    }
  } else if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { status: res.status, headers: res.headers, json, text };
}

const initialize = (token, server = restmcp) =>
  mcp(
    {
      id: 1,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'restmcp-oauth-test', version: '0' } },
    },
    { token, server },
  );

// What a failed response looked like, for assertion messages.
const seen = (r) => `status ${r.status}, WWW-Authenticate: ${r.headers.get('www-authenticate')}, body: ${r.text.slice(0, 300)}`;

// The full client path with a token: initialize, initialized, tools/call.
async function callPet(token) {
  const init = await initialize(token);
  assert.equal(init.status, 200, `initialize: ${seen(init)}`);
  assert.ok(init.json?.result, `initialize result: ${init.text.slice(0, 300)}`);
  const session = init.headers.get('mcp-session-id');
  assert.ok(session, 'initialize answered without Mcp-Session-Id');
  const note = await mcp({ method: 'notifications/initialized' }, { token, session });
  assert.equal(note.status, 202, `notifications/initialized: ${seen(note)}`);
  const call = await mcp(
    { id: 2, method: 'tools/call', params: { name: 'getPetById', arguments: { petId: 1 } } },
    { token, session },
  );
  assert.equal(call.status, 200, `tools/call: ${seen(call)}`);
  const result = call.json?.result;
  assert.ok(result, `tools/call result: ${call.text.slice(0, 300)}`);
  assert.notEqual(result.isError, true, `tools/call isError: ${JSON.stringify(result).slice(0, 300)}`);
  assert.equal(typeof result.structuredContent?.name, 'string', `no pet in ${JSON.stringify(result).slice(0, 300)}`);
  return result;
}

// WWW-Authenticate: Bearer k="v", k2=v2 -> { scheme, params }
function parseChallenge(header) {
  assert.ok(header, 'no WWW-Authenticate header');
  const m = /^(\S+)\s*(.*)$/s.exec(header);
  const params = {};
  for (const p of m[2].matchAll(/([A-Za-z0-9_-]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))/g)) {
    params[p[1].toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3];
  }
  return { scheme: m[1], params };
}

// A 401/403 challenge: Bearer, the given error= (if any), and always the
// resource_metadata URL (on a missing, invalid or insufficient token).
function assertChallenge(r, status, error) {
  assert.equal(r.status, status, seen(r));
  const header = r.headers.get('www-authenticate');
  assert.ok(header?.startsWith('Bearer '), `WWW-Authenticate should start with "Bearer ": ${header}`);
  const { params } = parseChallenge(header);
  if (error) assert.equal(params.error, error, `error= in WWW-Authenticate: ${header}`);
  assert.equal(
    params.resource_metadata,
    `${restmcp.base}/.well-known/oauth-protected-resource/mcp`,
    `resource_metadata= in WWW-Authenticate: ${header}`,
  );
  return params;
}

// Tracks failures (to keep the work directory) and gives every test a timeout.
function check(name, fn) {
  test(name, { timeout: TEST_MS }, async (t) => {
    try {
      await fn(t);
    } catch (e) {
      failures++;
      throw e;
    }
  });
}

// ---------------------------------------------------------------- part 2 helpers

const echoStderr = []; // the second restmcp's (token exchange towards httpbin)

// httpbin under gunicorn, its own process group; the access log (stdout) is
// kept line by line: the record of every request restmcp sent upstream, with
// the Authorization header httpbin received. That log, not httpbin's echo in
// the tool result, is the witness: restmcp redacts the tokens it obtained from
// tool results (the echo shows "Bearer [REDACTED]").
const ACCESS_FORMAT = '%(h)s %(t)s "%(r)s" %(s)s authorization="%({authorization}i)s"';
async function startHttpbin() {
  assert.ok(PYTHON, 'no python with httpbin: pass --python PATH or set OAUTH_TEST_PYTHON (run.sh does)');
  const httpbinStderr = [];
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      const { child } = await startAndWait(
        PYTHON,
        ['-m', 'gunicorn', '--bind', `127.0.0.1:${port}`, '--workers', '1', '--threads', '4',
          '--log-level', 'info', '--access-logfile', '-', '--access-logformat', ACCESS_FORMAT, 'httpbin:app'],
        { cwd: workDir, env: childEnv({ PYTHONDONTWRITEBYTECODE: '1' }), detached: true },
        'stderr',
        /Listening at: (http:\/\/\S+)/,
        httpbinStderr,
        'httpbin (gunicorn)',
      );
      let buf = '';
      child.stdout.on('data', (chunk) => {
        buf += chunk;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          httpbinAccess.push(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
        }
      });
      return { child, base: `http://127.0.0.1:${port}` };
    } catch (e) {
      lastError = e;
      if (!/in use|exited early/i.test(e.message)) break;
    }
  }
  throw lastError;
}

// How many requests for `path` httpbin's access log shows (lines arrive a
// little after the response).
async function upstreamHits(pathPrefix) {
  await sleep(300);
  return httpbinAccess.filter((l) => l.includes(`"GET ${pathPrefix}`)).length;
}

// A user's MCP token the way a remote client gets one: dynamic registration
// (a public client), then authorization code + PKCE with a resource indicator
// through oidc-provider's own login and consent pages, answered like a browser
// (cookies kept, redirects followed by hand until the redirect URI).
async function userToken(login, { resource, scope }) {
  const redirectUri = 'http://127.0.0.1:9/callback';
  const reg = await fetch(`${provider.issuer}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
      scope,
    }),
    signal: AbortSignal.timeout(STEP_MS),
  });
  const client = await reg.json();
  assert.equal(reg.status, 201, `registration: ${reg.status} ${JSON.stringify(client)}`);
  const verifier = randomBytes(48).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const query = new URLSearchParams({
    client_id: client.client_id,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope,
    state,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource,
  });
  const cookies = new Map();
  let url = `${provider.issuer}/auth?${query}`;
  let body;
  const forms = [];
  for (let step = 0; step < 12 && !url.startsWith(redirectUri); step++) {
    const res = await fetch(url, {
      method: body ? 'POST' : 'GET',
      body,
      redirect: 'manual',
      headers: {
        cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      signal: AbortSignal.timeout(STEP_MS),
    });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    body = undefined;
    const location = res.headers.get('location');
    if (location) {
      url = new URL(location, url).href;
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    assert.ok(action && prompt, `no login or consent form at ${url} (status ${res.status}): ${html.slice(0, 300)}`);
    forms.push(prompt);
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    body = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any' } : { prompt }).toString();
  }
  assert.ok(url.startsWith(redirectUri), `never redirected back; last URL ${url}`);
  assert.deepEqual(forms, ['login', 'consent'], 'the provider asked for login, then consent');
  const back = new URL(url).searchParams;
  assert.equal(back.get('state'), state);
  assert.equal(back.get('iss'), provider.issuer, 'RFC 9207 iss in the authorization response');
  const res = await fetch(`${provider.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.get('code'),
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: client.client_id,
      resource,
    }),
    signal: AbortSignal.timeout(STEP_MS),
  });
  const token = await res.json();
  assert.equal(res.status, 200, `authorization_code token request: ${JSON.stringify(token)}`);
  issuedTokens.push(token.access_token);
  return token.access_token;
}

// Token exchange asked of the provider directly (what restmcp is meant to do).
async function exchangeDirect(params, secret = CLIENT_SECRET.exchanger) {
  const res = await fetch(`${provider.issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`exchanger:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: TOKEN_EXCHANGE,
      subject_token_type: ACCESS_TOKEN_TYPE,
      ...params,
    }),
    signal: AbortSignal.timeout(STEP_MS),
  });
  const body = await res.json();
  if (body.access_token) issuedTokens.push(body.access_token);
  return { status: res.status, body };
}

async function exchangeCounts() {
  const r = await getJson(`${provider.issuer}/__test/exchanges`);
  assert.equal(r.status, 200);
  return r.json;
}

// initialize, initialized, tools/call NAME on `server`: the call's result.
async function callTool(server, token, name, args = {}) {
  const init = await initialize(token, server);
  assert.equal(init.status, 200, `initialize: ${seen(init)}`);
  const session = init.headers.get('mcp-session-id');
  assert.ok(session, 'initialize answered without Mcp-Session-Id');
  const note = await mcp({ method: 'notifications/initialized' }, { token, session, server });
  assert.equal(note.status, 202, `notifications/initialized: ${seen(note)}`);
  const call = await mcp({ id: 2, method: 'tools/call', params: { name, arguments: args } }, { token, session, server });
  assert.equal(call.status, 200, `tools/call ${name}: ${seen(call)}`);
  assert.ok(call.json?.result, `tools/call ${name} result: ${call.text.slice(0, 300)}`);
  return call.json.result;
}

// ---------------------------------------------------------------- part 3 helpers

// initialize and initialized on `server` with `token`: the session id.
async function openSession(server, token) {
  const init = await initialize(token, server);
  assert.equal(init.status, 200, `initialize: ${seen(init)}`);
  const session = init.headers.get('mcp-session-id');
  assert.ok(session, 'initialize answered without Mcp-Session-Id');
  const note = await mcp({ method: 'notifications/initialized' }, { token, session, server });
  assert.equal(note.status, 202, `notifications/initialized: ${seen(note)}`);
  return session;
}

// Every tool name tools/list shows `token` on `server` (all pages), sorted.
async function listTools(server, token) {
  const session = await openSession(server, token);
  const names = [];
  let cursor;
  for (let page = 0; page < 20; page++) {
    const r = await mcp(
      { id: 10 + page, method: 'tools/list', params: cursor ? { cursor } : {} },
      { token, session, server },
    );
    assert.equal(r.status, 200, `tools/list: ${seen(r)}`);
    const result = r.json?.result;
    assert.ok(Array.isArray(result?.tools), `tools/list result: ${r.text.slice(0, 300)}`);
    names.push(...result.tools.map((t) => t.name));
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return names.sort();
}

// A tools/call in a session, the raw HTTP answer (status, headers, body) kept.
async function callRaw(server, token, name, args = {}) {
  const session = await openSession(server, token);
  return mcp({ id: 2, method: 'tools/call', params: { name, arguments: args } }, { token, session, server });
}

// A request the 2026-07-28 way: no initialize, no session; MCP-Protocol-Version,
// Mcp-Method (and Mcp-Name for a call) headers agreeing with the body, whose _meta
// carries the protocol version, clientInfo and clientCapabilities (as restmcp's
// direct path and the SDKs of tests/interop expect).
const NEWEST = '2026-07-28';
async function stateless(server, token, method, params = {}) {
  const extraHeaders = { 'mcp-method': method };
  if (method === 'tools/call') extraHeaders['mcp-name'] = params.name;
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': NEWEST,
    'io.modelcontextprotocol/clientInfo': { name: 'restmcp-oauth-test', version: '0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return mcp({ id: 7, method, params: { ...params, _meta } }, { token, server, protocol: NEWEST, extraHeaders });
}

// The 403 insufficient_scope challenge of a call the token cannot make
// (scope-aware tools): Bearer, resource_metadata, error, error_description and scope = the
// server's scopes plus the scopes of the tool's missing alternative (any order);
// no JSON-RPC result. Returns the challenge's parameters.
function assertScopeChallenge(r, server, wantScopes) {
  const header = r.headers.get('www-authenticate');
  assert.equal(r.status, 403, `want 403 insufficient_scope: ${seen(r)}`);
  assert.ok(header?.startsWith('Bearer '), `WWW-Authenticate should start with "Bearer ": ${header}`);
  const { params } = parseChallenge(header);
  assert.equal(params.error, 'insufficient_scope', `error= in WWW-Authenticate: ${header}`);
  assert.ok(params.error_description, `no error_description= in WWW-Authenticate: ${header}`);
  assert.equal(params.resource_metadata, `${server.base}/.well-known/oauth-protected-resource/mcp`, header);
  assert.deepEqual((params.scope ?? '').split(' ').filter(Boolean).sort(), [...wantScopes].sort(), `scope= in ${header}`);
  assert.equal(r.json?.result, undefined, `a JSON-RPC result came with the 403: ${r.text.slice(0, 300)}`);
  return params;
}

const resultText = (result) => (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

// The bearer token httpbin received for the one call of `pathPrefix` (whoami's by
// default) made after it had `hitsBefore` of them; the call succeeded and its result shows no token.
async function upstreamToken(result, hitsBefore, pathPrefix = '/anything/profile') {
  assert.notEqual(result.isError, true, `the call isError: ${JSON.stringify(result).slice(0, 400)}`);
  await sleep(300);
  const lines = httpbinAccess.filter((l) => l.includes(`"GET ${pathPrefix}`)).slice(hitsBefore);
  assert.equal(lines.length, 1, `httpbin got ${lines.length} requests for the call: ${lines.join(' | ').slice(0, 300)}`);
  const m = /authorization="Bearer ([^"\s]+)"/.exec(lines[0]);
  assert.ok(m, `httpbin received no Bearer token: ${lines[0].replace(/authorization="(.{0,12})[^"]*"/, 'authorization="$1..."')}`);
  const token = m[1];
  assert.ok(!JSON.stringify(result).includes(token), 'the exchanged token appears in the tool result');
  return token;
}

// The same URL, with or without the trailing slash a URL library adds to an empty path.
const sameResource = (a, b) => a.replace(/\/$/, '') === b.replace(/\/$/, '');

// No secret or token of this run in text (a tool result).
function leaksIn(text, tokens = []) {
  const found = [];
  for (const [name, value] of Object.entries({ ...SECRETS, STATIC_TOKEN })) if (text.includes(value)) found.push(name);
  for (const [i, token] of [...issuedTokens, ...tokens].entries()) {
    if (text.includes(token)) found.push(`token #${i}`);
    const sig = token.split('.')[2];
    if (sig && sig.length >= 40 && text.includes(sig)) found.push(`signature of token #${i}`);
  }
  return found;
}

// ---------------------------------------------------------------- the tests

before(async () => {
  try {
    provider = await startProvider(await freePort(), 'key-one');
  } catch (e) {
    failures++;
    throw e;
  }
});

after(async () => {
  for (const child of [...restmcps.map((r) => r.child), httpbin?.child]) {
    if (!child) continue;
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {}
    await stop(child);
  }
  await stop(provider?.child);
  writeFileSync(path.join(workDir, 'restmcp.stderr'), restmcpStderr.join('\n') + '\n');
  writeFileSync(path.join(workDir, 'restmcp-echo.stderr'), echoStderr.join('\n') + '\n');
  writeFileSync(path.join(workDir, 'provider.stderr'), providerStderr.join('\n') + '\n');
  writeFileSync(path.join(workDir, 'httpbin.access'), httpbinAccess.join('\n') + '\n');
  if (failures > 0 || process.env.OAUTH_TEST_KEEP) {
    console.log(
      `# work directory kept: ${workDir} (config.toml, config-echo.toml, restmcp.stderr, restmcp-echo.stderr, provider.stderr, httpbin.access)`,
    );
  } else {
    rmSync(workDir, { recursive: true, force: true });
  }
});

describe('provider (oidc-provider as configured in provider.mjs)', () => {
  const resource = 'http://127.0.0.1:9/mcp';

  check('client_credentials with a resource indicator gives an RS256 JWT for that audience', async () => {
    const body = await getToken('svc', { resource, scope: REQUIRED_SCOPE });
    assert.equal(body.token_type, 'Bearer');
    const { header, payload } = decodeJwt(body.access_token);
    assert.equal(header.alg, 'RS256');
    assert.equal(header.kid, 'key-one');
    assert.equal(payload.iss, provider.issuer);
    assert.equal(payload.aud, resource);
    assert.equal(payload.scope, REQUIRED_SCOPE);
    assert.equal(payload.sub, 'svc');
    assert.ok(payload.exp > Date.now() / 1000);
    const jwks = await getJson(`${provider.issuer}/jwks`);
    assert.equal(jwks.status, 200);
    assert.ok(jwks.json.keys.some((k) => k.kid === header.kid && k.kty === 'RSA'), JSON.stringify(jwks.json));
    assert.ok(jwks.json.keys.every((k) => !('d' in k)), 'private key material published');
  });

  check('discovery documents name jwks_uri and introspection_endpoint', async () => {
    for (const wk of ['oauth-authorization-server', 'openid-configuration']) {
      const d = await getJson(`${provider.issuer}/.well-known/${wk}`);
      assert.equal(d.status, 200, wk);
      assert.equal(d.json.issuer, provider.issuer, wk);
      assert.equal(d.json.jwks_uri, `${provider.issuer}/jwks`, wk);
      assert.equal(d.json.introspection_endpoint, `${provider.issuer}/token/introspection`, wk);
    }
  });

  check('opaque token (svc-opaque) introspected by client restmcp', async () => {
    const body = await getToken('svc-opaque', { resource, scope: `${REQUIRED_SCOPE} pets:read` });
    assert.equal(body.access_token.split('.').length, 1, 'svc-opaque should get an opaque token');
    const info = await introspect(body.access_token);
    assert.equal(info.active, true, JSON.stringify(info));
    assert.equal(info.aud, resource);
    assert.equal(info.scope, `${REQUIRED_SCOPE} pets:read`);
    assert.equal(info.sub, 'svc-opaque');
    assert.equal(typeof info.exp, 'number');
    assert.deepEqual(await introspect('not-a-token'), { active: false });
  });

  check('svc-short tokens live 2 s; any resource URL is accepted', async () => {
    const body = await getToken('svc-short', { resource: 'http://127.0.0.1:1/elsewhere', scope: 'other' });
    assert.equal(body.expires_in, 2);
    const { payload } = decodeJwt(body.access_token);
    assert.equal(payload.exp - payload.iat, 2);
    assert.equal(payload.aud, 'http://127.0.0.1:1/elsewhere');
    assert.equal(payload.scope, 'other');
  });
});

describe('restmcp serve with [server.oauth]', () => {
  before(async () => {
    try {
      copyFileSync(SPEC, path.join(workDir, 'petstore.yaml'));
      restmcp = await startRestmcp(petstoreConfig(provider.issuer));
    } catch (e) {
      failures++;
      throw e;
    }
  });

  const validToken = async (scope = `${REQUIRED_SCOPE} pets:read`, client = 'svc') =>
    (await getToken(client, { resource: restmcp.resource, scope })).access_token;

  check('a. protected-resource metadata at both well-known URLs', async () => {
    for (const suffix of ['/mcp', '']) {
      const r = await getJson(`${restmcp.base}/.well-known/oauth-protected-resource${suffix}`);
      assert.equal(r.status, 200, `/.well-known/oauth-protected-resource${suffix}: ${r.status} ${r.text.slice(0, 200)}`);
      assert.ok((r.headers.get('content-type') ?? '').startsWith('application/json'), r.headers.get('content-type'));
      assert.equal(r.json.resource, restmcp.resource);
      assert.deepEqual(r.json.authorization_servers, [provider.issuer]);
      assert.ok(r.json.scopes_supported?.includes(REQUIRED_SCOPE), JSON.stringify(r.json.scopes_supported));
      assert.deepEqual(r.json.bearer_methods_supported, ['header']);
    }
  });

  check('b. no token: 401 challenge that leads to the provider', async () => {
    const r = await initialize(undefined);
    const params = assertChallenge(r, 401);
    assert.equal(params.scope, REQUIRED_SCOPE, `scope= in WWW-Authenticate: ${r.headers.get('www-authenticate')}`);
    // Follow it as an MCP client does: resource metadata -> AS metadata -> token endpoint.
    const prm = await getJson(params.resource_metadata);
    assert.equal(prm.status, 200);
    const as = prm.json.authorization_servers[0];
    const meta = await getJson(`${as}/.well-known/oauth-authorization-server`);
    assert.equal(meta.status, 200);
    assert.equal(meta.json.issuer, provider.issuer);
    assert.ok(meta.json.grant_types_supported.includes('client_credentials'));
    assert.equal(meta.json.token_endpoint, `${provider.issuer}/token`);
  });

  check('c. a valid JWT (scope mcp:tools pets:read): initialize and tools/call getPetById', async () => {
    await callPet(await validToken());
  });

  check('d. a JWT for another resource: 401 invalid_token', async () => {
    const token = (await getToken('svc', { resource: 'http://127.0.0.1:1/elsewhere', scope: REQUIRED_SCOPE }))
      .access_token;
    assertChallenge(await initialize(token), 401, 'invalid_token');
  });

  check('e. an expired JWT (svc-short, 2 s): accepted, then 401 invalid_token', async () => {
    const token = await validToken(REQUIRED_SCOPE, 'svc-short');
    const { exp } = decodeJwt(token).payload;
    const fresh = await initialize(token);
    assert.equal(fresh.status, 200, `while still valid: ${seen(fresh)}`);
    await sleep(Math.max(0, exp * 1000 - Date.now()) + 1_000);
    assertChallenge(await initialize(token), 401, 'invalid_token');
  });

  check('g. a JWT without mcp:tools (scope other): 403 insufficient_scope', async () => {
    const r = await initialize(await validToken('other'));
    const params = assertChallenge(r, 403, 'insufficient_scope');
    assert.equal(params.scope, REQUIRED_SCOPE, `scope= in WWW-Authenticate: ${r.headers.get('www-authenticate')}`);
  });

  check('h. an opaque token (svc-opaque) through introspection: tools/call works', async () => {
    await callPet(await validToken(`${REQUIRED_SCOPE} pets:read`, 'svc-opaque'));
  });

  check('h. a garbage opaque token: 401', async () => {
    assertChallenge(await initialize(rnd('garbage')), 401);
  });

  check('h. an opaque token for another resource: 401', async () => {
    const token = (await getToken('svc-opaque', { resource: 'http://127.0.0.1:1/elsewhere', scope: REQUIRED_SCOPE }))
      .access_token;
    assertChallenge(await initialize(token), 401);
  });

  check('i. the static token works beside OAuth', async () => {
    await callPet(STATIC_TOKEN);
  });

  check('j. a tampered JWT (payload changed, signature kept): 401', async () => {
    const { parts, payload } = decodeJwt(await validToken(REQUIRED_SCOPE));
    const forged = jsonb64({ ...payload, sub: 'admin', scope: `${REQUIRED_SCOPE} pets:read pets:write` });
    assertChallenge(await initialize(`${parts[0]}.${forged}.${parts[2]}`), 401);
  });

  check('j. an alg:none JWT with valid claims: 401', async () => {
    const { header, payload } = decodeJwt(await validToken(REQUIRED_SCOPE));
    const none = `${jsonb64({ ...header, alg: 'none' })}.${jsonb64(payload)}.`;
    assertChallenge(await initialize(none), 401);
    const noneNoKid = `${jsonb64({ alg: 'none', typ: 'at+jwt' })}.${jsonb64(payload)}.`;
    assertChallenge(await initialize(noneNoKid), 401);
  });

  check('j. an HS256 JWT keyed with the provider\'s public key (algorithm confusion): 401', async () => {
    const { header, payload } = decodeJwt(await validToken(REQUIRED_SCOPE));
    const jwks = await getJson(`${provider.issuer}/jwks`);
    const jwk = jwks.json.keys.find((k) => k.kid === header.kid);
    const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const signingInput = `${jsonb64({ ...header, alg: 'HS256' })}.${jsonb64(payload)}`;
    for (const secret of [pem, JSON.stringify(jwk), Buffer.from(jwk.n, 'base64url')]) {
      const sig = createHmac('sha256', secret).update(signingInput).digest('base64url');
      assertChallenge(await initialize(`${signingInput}.${sig}`), 401);
    }
  });

  check('f. key rotation: a new key is fetched, the old one dropped', async () => {
    const oldToken = await validToken(REQUIRED_SCOPE);
    const before = await initialize(oldToken);
    assert.equal(before.status, 200, `old key before rotation: ${seen(before)}`);
    // Same port and issuer, a different key.
    await stop(provider.child);
    provider = await startProvider(provider.port, 'key-two');
    await sleep(1_500); // past jwks_refresh_seconds = 1
    const newToken = await validToken(REQUIRED_SCOPE);
    assert.equal(decodeJwt(newToken).header.kid, 'key-two');
    const fresh = await initialize(newToken);
    assert.equal(fresh.status, 200, `token signed with the new key: ${seen(fresh)}`);
    await sleep(1_500);
    assertChallenge(await initialize(oldToken), 401, 'invalid_token');
  });

  check('k. no token or secret in restmcp stderr', async () => {
    await sleep(200); // let the last lines arrive
    const log = restmcpStderr.join('\n');
    assert.ok(log.length > 0, 'restmcp wrote nothing to stderr (no banner?)');
    const leaks = [];
    for (const [name, value] of Object.entries({ ...SECRETS, STATIC_TOKEN })) {
      if (log.includes(value)) leaks.push(name);
    }
    for (const [i, token] of issuedTokens.entries()) {
      if (log.includes(token)) leaks.push(`issued token #${i}`);
      const sig = token.split('.')[2];
      if (sig && sig.length >= 40 && log.includes(sig)) leaks.push(`signature of issued token #${i}`);
    }
    assert.deepEqual(leaks, [], `found in restmcp stderr: ${leaks.join(', ')}`);
  });
});

describe('provider: users (authorization code + PKCE) and RFC 8693 token exchange', () => {
  const resource = 'http://127.0.0.1:9/mcp';

  check('a registered public client gets a user token through login and consent: sub = login name', async () => {
    const token = await userToken('carol', { resource, scope: `${REQUIRED_SCOPE} echo:read` });
    const { header, payload } = decodeJwt(token);
    assert.equal(header.typ, 'at+jwt');
    assert.equal(payload.sub, 'carol');
    assert.equal(payload.aud, resource);
    assert.equal(payload.iss, provider.issuer);
    assert.equal(payload.scope, `${REQUIRED_SCOPE} echo:read`);
  });

  check('token exchange: same sub, the target as aud, the scope asked for, client exchanger', async () => {
    const subject = await userToken('carol', { resource, scope: REQUIRED_SCOPE });
    const target = 'http://127.0.0.1:8';
    const before = await exchangeCounts();
    const { status, body } = await exchangeDirect({ subject_token: subject, resource: target, scope: 'echo:read' });
    assert.equal(status, 200, JSON.stringify(body));
    assert.equal(body.issued_token_type, ACCESS_TOKEN_TYPE);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.scope, 'echo:read');
    assert.ok(body.expires_in > 0);
    const { payload } = decodeJwt(body.access_token);
    assert.equal(payload.sub, 'carol');
    assert.equal(payload.aud, target);
    assert.equal(payload.scope, 'echo:read');
    assert.equal(payload.client_id, 'exchanger');
    assert.deepEqual(payload.act, { sub: 'exchanger' });
    const audience = await exchangeDirect({ subject_token: subject, audience: 'echo-api', scope: 'echo:read' });
    assert.equal(audience.status, 200, JSON.stringify(audience.body));
    assert.equal(decodeJwt(audience.body.access_token).payload.aud, 'echo-api');
    const after = await exchangeCounts();
    assert.equal(after.ok - before.ok, 2);
    assert.equal(after.bySubject.carol - (before.bySubject.carol ?? 0), 2);
  });

  check('token exchange errors (RFC 8693 2.2.2): scope, subject token, target, client', async () => {
    const subject = await userToken('carol', { resource, scope: REQUIRED_SCOPE });
    const target = { resource: 'http://127.0.0.1:8' };
    const cases = [
      [{ subject_token: subject, ...target, scope: 'not:known' }, 'invalid_scope'],
      [{ subject_token: `${subject}x`, ...target }, 'invalid_grant'],
      [{ subject_token: (await getToken('svc-opaque', { resource, scope: REQUIRED_SCOPE })).access_token, ...target }, 'invalid_grant'],
      [{ subject_token: subject, ...target, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' }, 'invalid_request'],
      [{ subject_token: subject }, 'invalid_target'],
      [{ ...target }, 'invalid_request'],
    ];
    for (const [params, error] of cases) {
      const { status, body } = await exchangeDirect(params);
      assert.equal(status, 400, `${JSON.stringify(params).slice(0, 80)}: ${JSON.stringify(body)}`);
      assert.equal(body.error, error, JSON.stringify(body));
      assert.ok(body.error_description, JSON.stringify(body));
    }
    const wrong = await exchangeDirect({ subject_token: subject, ...target }, 'not-the-secret');
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error, 'invalid_client');
  });
});

let echo; // the restmcp whose upstream is httpbin (parts 2 and 3)

describe('restmcp serve: token exchange towards httpbin', () => {
  let alice; // MCP tokens of two users
  let bob;
  const mcpScope = `${REQUIRED_SCOPE} echo:read`; // echo:read too: the tools' own scope (part 3)

  before(async () => {
    try {
      httpbin = await startHttpbin();
      const deadPort = await freePort(); // nothing listens there: "provider down"
      const userOauth = (name, { tokenUrl = `${provider.issuer}/token`, scopes = '["echo:read"]', prefix } = {}) => `
[apis.${name}]
spec = "echo-api.yaml"
base_url = "${httpbin.base}"
${prefix ? `prefix = "${prefix}"` : ''}
[apis.${name}.auth.user_oauth]
client_id_env = "RESTMCP_TEST_EXCHANGER_ID"
client_secret_env = "RESTMCP_TEST_EXCHANGER_SECRET"
[apis.${name}.auth.user_oauth.token_exchange]
token_url = "${tokenUrl}"
resource = "${httpbin.base}"
scopes = ${scopes}
`;
      copyFileSync(ECHO_SPEC, path.join(workDir, 'echo-api.yaml'));
      echo = await startRestmcp(
        (port, resource) => `[server]
listen = "127.0.0.1:${port}"
[server.auth]
tokens_env = ["RESTMCP_TEST_STATIC_TOKEN"]
[server.oauth]
resource = "${resource}"
issuers = ["${provider.issuer}"]
scopes = ["${REQUIRED_SCOPE}"]
${userOauth('echo')}
${userOauth('badscope', { scopes: '["not:known"]', prefix: 'badscope_' })}
${userOauth('down', { tokenUrl: `http://127.0.0.1:${deadPort}/token`, prefix: 'down_' })}`,
        { file: 'config-echo.toml', log: echoStderr },
      );
      alice = await userToken('alice', { resource: echo.resource, scope: mcpScope });
      bob = await userToken('bob', { resource: echo.resource, scope: mcpScope });
    } catch (e) {
      failures++;
      throw e;
    }
  });

  let aliceUpstream; // the token httpbin saw for alice's first call

  check('x1. alice: whoami reaches httpbin with an exchanged token for her (sub alice, aud httpbin, echo:read)', async () => {
    const before = await exchangeCounts();
    const hits = await upstreamHits('/anything/profile');
    const result = await callTool(echo, alice, 'whoami');
    aliceUpstream = await upstreamToken(result, hits);
    issuedTokens.push(aliceUpstream);
    assert.notEqual(aliceUpstream, alice, 'restmcp passed the MCP token through (forbidden by the MCP spec)');
    const { payload } = decodeJwt(aliceUpstream);
    assert.equal(payload.sub, 'alice');
    assert.ok(sameResource(String(payload.aud), httpbin.base), `aud ${payload.aud}, want ${httpbin.base}`);
    assert.equal(payload.scope, 'echo:read');
    assert.equal(payload.client_id, 'exchanger');
    assert.equal(payload.iss, provider.issuer);
    const after = await exchangeCounts();
    assert.equal(after.ok - before.ok, 1, `exchanges: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
    assert.equal(after.bySubject.alice - (before.bySubject.alice ?? 0), 1);
  });

  check('x2. the exchange cache: alice again (new session), no new exchange, the same upstream token', async () => {
    const before = await exchangeCounts();
    const hits = await upstreamHits('/anything/profile');
    const token = await upstreamToken(await callTool(echo, alice, 'whoami'), hits);
    const after = await exchangeCounts();
    assert.equal(after.ok - before.ok, 0, `exchanges: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
    assert.equal(token, aliceUpstream, 'a cached exchanged token should be reused');
  });

  check('x3. bob: his own exchange, his own subject upstream', async () => {
    const before = await exchangeCounts();
    const hits = await upstreamHits('/anything/profile');
    const token = await upstreamToken(await callTool(echo, bob, 'whoami'), hits);
    issuedTokens.push(token);
    assert.notEqual(token, bob);
    assert.notEqual(token, aliceUpstream);
    assert.equal(decodeJwt(token).payload.sub, 'bob');
    const after = await exchangeCounts();
    assert.equal(after.bySubject.bob - (before.bySubject.bob ?? 0), 1);
    assert.equal(after.ok - before.ok, 1);
  });

  check("x4. the static token (no user): isError, needs a user's OAuth token; nothing reaches httpbin", async (t) => {
    const hits = await upstreamHits('/anything/profile');
    const before = await exchangeCounts();
    const result = await callTool(echo, STATIC_TOKEN, 'whoami');
    assert.equal(result.isError, true, JSON.stringify(result).slice(0, 400));
    assert.match(resultText(result), /oauth/i, resultText(result));
    assert.equal(await upstreamHits('/anything/profile'), hits, 'httpbin was called');
    const after = await exchangeCounts();
    assert.equal(after.ok + after.failed, before.ok + before.failed, 'an exchange was attempted');
    assert.deepEqual(leaksIn(resultText(result)), []);
    t.diagnostic(`result: ${resultText(result).slice(0, 300)}`);
  });

  check('x5. upstream 401: exchanged anew exactly once, retried once, then isError', async (t) => {
    const hits = await upstreamHits('/status/401');
    const before = await exchangeCounts(); // alice's token is cached (x1, x2)
    const result = await callTool(echo, alice, 'alwaysUnauthorized');
    const after = await exchangeCounts();
    assert.equal(result.isError, true, JSON.stringify(result).slice(0, 400));
    assert.equal(after.ok - before.ok, 1, `exchanges: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
    assert.equal(after.bySubject.alice - before.bySubject.alice, 1);
    assert.equal((await upstreamHits('/status/401')) - hits, 2, 'httpbin should see the call and one retry');
    assert.deepEqual(leaksIn(resultText(result)), []);
    t.diagnostic(`result: ${resultText(result).slice(0, 300)}`);
  });

  check('x6. a refused exchange (scope not allowed): isError naming invalid_scope, no secret, nothing upstream', async (t) => {
    const hits = await upstreamHits('/anything/profile');
    const before = await exchangeCounts();
    const result = await callTool(echo, alice, 'badscope_whoami');
    assert.equal(result.isError, true, JSON.stringify(result).slice(0, 400));
    assert.match(resultText(result), /invalid_scope/, resultText(result));
    const after = await exchangeCounts();
    assert.ok(after.failed > before.failed, 'the provider saw no exchange');
    assert.equal(after.ok, before.ok);
    assert.equal(await upstreamHits('/anything/profile'), hits, 'httpbin was called');
    assert.deepEqual(leaksIn(resultText(result)), []);
    t.diagnostic(`result: ${resultText(result).slice(0, 300)}`);
  });

  check('x7. the token endpoint unreachable: isError saying the exchange failed, no secret, nothing upstream', async (t) => {
    const hits = await upstreamHits('/anything/profile');
    const result = await callTool(echo, alice, 'down_whoami');
    assert.equal(result.isError, true, JSON.stringify(result).slice(0, 400));
    assert.match(resultText(result), /exchange/i, resultText(result));
    assert.equal(await upstreamHits('/anything/profile'), hits, 'httpbin was called');
    assert.deepEqual(leaksIn(resultText(result)), []);
    t.diagnostic(`result: ${resultText(result).slice(0, 300)}`);
  });

  check('x8. no MCP token, exchanged token or secret in this restmcp\'s stderr', async () => {
    await sleep(200);
    const log = echoStderr.join('\n');
    assert.ok(log.length > 0, 'restmcp wrote nothing to stderr (no banner?)');
    assert.deepEqual(leaksIn(log, [alice, bob].filter(Boolean)), [], 'found in restmcp stderr');
  });
});

describe('restmcp serve: scope-aware tools', () => {
  // Tokens of three users of the same server (the part 2 one, upstream httpbin):
  // alice as a normal user, bob with echo:admin too, carol with only mcp:tools.
  let alice;
  let bob;
  let carol;
  let all; // what the static token sees: every tool
  const ADMIN = /(^|_)adminReport$/; // echo:admin
  const READ = /(^|_)(whoami|alwaysUnauthorized)$/; // echo:read
  const ours = []; // tokens of these checks, for s9

  before(async () => {
    try {
      assert.ok(echo, 'the restmcp of part 2 did not start');
      alice = await userToken('alice', { resource: echo.resource, scope: `${REQUIRED_SCOPE} echo:read` });
      bob = await userToken('bob', { resource: echo.resource, scope: `${REQUIRED_SCOPE} echo:read echo:admin` });
      carol = await userToken('carol', { resource: echo.resource, scope: REQUIRED_SCOPE });
      ours.push(alice, bob, carol);
    } catch (e) {
      failures++;
      throw e;
    }
  });

  check('s1. the static token sees every tool, adminReport and openInfo included', async (t) => {
    all = await listTools(echo, STATIC_TOKEN);
    for (const name of ['whoami', 'alwaysUnauthorized', 'adminReport', 'openInfo', 'badscope_adminReport', 'down_openInfo']) {
      assert.ok(all.includes(name), `${name} missing from ${JSON.stringify(all)}`);
    }
    t.diagnostic(`static: ${all.join(' ')}`);
  });

  check('s2. same server, two users: alice (echo:read) lacks adminReport, bob (echo:read echo:admin) sees it', async (t) => {
    assert.ok(all, 's1 did not list the tools');
    const a = await listTools(echo, alice);
    const b = await listTools(echo, bob);
    t.diagnostic(`alice: ${a.join(' ')}`);
    t.diagnostic(`bob: ${b.join(' ')}`);
    assert.deepEqual(a, all.filter((n) => !ADMIN.test(n)), 'alice sees every tool but the echo:admin ones');
    assert.deepEqual(b, all, 'bob sees every tool');
    assert.ok(a.includes('whoami') && a.includes('openInfo') && !a.includes('adminReport'));
    assert.ok(b.includes('whoami') && b.includes('openInfo') && b.includes('adminReport'));
  });

  check('s3. a token with only mcp:tools (carol) sees only the open tools: no whoami, no adminReport', async (t) => {
    assert.ok(all, 's1 did not list the tools');
    const c = await listTools(echo, carol);
    t.diagnostic(`carol: ${c.join(' ')}`);
    assert.deepEqual(c, all.filter((n) => !ADMIN.test(n) && !READ.test(n)));
    assert.ok(c.includes('openInfo') && !c.includes('whoami'));
  });

  check('s4. alice calls adminReport: 403 insufficient_scope, scope="mcp:tools echo:admin", nothing reaches httpbin', async (t) => {
    const hits = await upstreamHits('/anything/admin');
    const before = await exchangeCounts();
    const r = await callRaw(echo, alice, 'adminReport');
    t.diagnostic(`status ${r.status}, WWW-Authenticate: ${r.headers.get('www-authenticate')}, body: ${r.text.slice(0, 200)}`);
    assertScopeChallenge(r, echo, [REQUIRED_SCOPE, 'echo:admin']);
    assert.equal(await upstreamHits('/anything/admin'), hits, 'httpbin was called');
    const after = await exchangeCounts();
    assert.equal(after.ok + after.failed, before.ok + before.failed, 'an exchange was attempted');
  });

  check('s4. carol (only mcp:tools) calls whoami: 403 insufficient_scope, scope="mcp:tools echo:read"', async (t) => {
    const hits = await upstreamHits('/anything/profile');
    const r = await callRaw(echo, carol, 'whoami');
    t.diagnostic(`status ${r.status}, WWW-Authenticate: ${r.headers.get('www-authenticate')}`);
    assertScopeChallenge(r, echo, [REQUIRED_SCOPE, 'echo:read']);
    assert.equal(await upstreamHits('/anything/profile'), hits, 'httpbin was called');
  });

  check('s5. bob calls adminReport: it works, httpbin gets an exchanged token for bob', async () => {
    const hits = await upstreamHits('/anything/admin');
    const result = await callTool(echo, bob, 'adminReport');
    const token = await upstreamToken(result, hits, '/anything/admin');
    ours.push(token);
    issuedTokens.push(token);
    assert.notEqual(token, bob, 'restmcp passed the MCP token through');
    assert.equal(decodeJwt(token).payload.sub, 'bob');
  });

  check('s6. openInfo (security: []) works for carol and the static token, with no token sent upstream', async () => {
    for (const [who, token] of [['carol', carol], ['static', STATIC_TOKEN]]) {
      const hits = await upstreamHits('/anything/open');
      const result = await callTool(echo, token, 'openInfo');
      assert.notEqual(result.isError, true, `${who}: ${JSON.stringify(result).slice(0, 400)}`);
      await sleep(300);
      const lines = httpbinAccess.filter((l) => l.includes('"GET /anything/open')).slice(hits);
      assert.equal(lines.length, 1, `${who}: httpbin got ${lines.length} requests: ${lines.join(' | ').slice(0, 300)}`);
      assert.match(lines[0], /authorization="-?"/, `${who}: httpbin received an Authorization header`);
    }
  });

  check('s7. 2026-07-28 (stateless): alice\'s tools/list is hers, with cacheScope "private"', async (t) => {
    const r = await stateless(echo, alice, 'tools/list');
    assert.equal(r.status, 200, `tools/list: ${seen(r)}`);
    const result = r.json?.result;
    assert.ok(Array.isArray(result?.tools), `tools/list result: ${r.text.slice(0, 300)}`);
    const names = result.tools.map((x) => x.name);
    const { tools: _tools, ...rest } = result;
    t.diagnostic(`result without tools: ${JSON.stringify(rest)}`);
    assert.equal(result.cacheScope, 'private', `cacheScope in ${JSON.stringify(rest)}`);
    assert.ok(names.includes('whoami') && !names.includes('adminReport'), JSON.stringify(names));
  });

  check('s8. 2026-07-28 (stateless): alice calls adminReport: the same 403 challenge', async (t) => {
    const hits = await upstreamHits('/anything/admin');
    const r = await stateless(echo, alice, 'tools/call', { name: 'adminReport', arguments: {} });
    t.diagnostic(`status ${r.status}, WWW-Authenticate: ${r.headers.get('www-authenticate')}`);
    assertScopeChallenge(r, echo, [REQUIRED_SCOPE, 'echo:admin']);
    assert.equal(await upstreamHits('/anything/admin'), hits, 'httpbin was called');
  });

  check('s9. no token of these checks in this restmcp\'s stderr', async () => {
    await sleep(200);
    assert.deepEqual(leaksIn(echoStderr.join('\n'), ours.filter(Boolean)), [], 'found in restmcp stderr');
  });
});

describe('restmcp serve: introspections rationed, verdicts trusted for a bounded time', () => {
  // Two restmcp servers like the first one (petstore in mock mode, this provider, opaque
  // tokens introspected by client restmcp), with a small ration and a short trust:
  // `rated` for the flood, `revoking` for revocation (each process has its own ration).
  const RATE = { perSecond: 0.2, burst: 3 };
  const TRUST_S = 2; // introspection_cache_seconds
  const ratedConfig = (port, resource) =>
    petstoreConfig(provider.issuer)(port, resource).replace(
      '[server.oauth.introspection]',
      `introspection_rate_limit = { per_second = ${RATE.perSecond}, burst = ${RATE.burst} }\n`
        + `introspection_cache_seconds = ${TRUST_S}\n[server.oauth.introspection]`,
    );
  const ratedStderr = [];
  let rated;
  let revoking;
  let legit; // an opaque token of svc-opaque for `rated`, first seen after the flood

  before(async () => {
    try {
      rated = await startRestmcp(ratedConfig, { file: 'config-rated.toml', log: ratedStderr });
      revoking = await startRestmcp(ratedConfig, { file: 'config-revoking.toml', log: ratedStderr });
    } catch (e) {
      failures++;
      throw e;
    }
  });
  after(() => writeFileSync(path.join(workDir, 'restmcp-rated.stderr'), ratedStderr.join('\n') + '\n'));

  // The provider's count of POSTs to its introspection endpoint so far.
  const introspections = async () => {
    const r = await getJson(`${provider.issuer}/__test/introspections`);
    assert.equal(r.status, 200, `/__test/introspections: ${r.text.slice(0, 200)}`);
    return r.json.count;
  };
  const opaqueFor = async (server) =>
    (await getToken('svc-opaque', { resource: server.resource, scope: `${REQUIRED_SCOPE} pets:read` })).access_token;
  const retryAfter = (r) => Number(r.headers.get('retry-after'));
  const statusLine = (r) => `${r.status}${r.headers.get('retry-after') ? ` (Retry-After ${r.headers.get('retry-after')})` : ''}`;

  check('r1. a flood of made-up opaque tokens from one address: after the burst, 429 with Retry-After; the provider is asked only `burst` times', async (t) => {
    const before = await introspections();
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await initialize(rnd('made-up'), rated));
    await sleep(200);
    const asked = (await introspections()) - before;
    t.diagnostic(`statuses: ${answers.map(statusLine).join(', ')}; the provider was asked ${asked} times`);
    assert.deepEqual(answers.slice(0, RATE.burst).map((r) => r.status), Array(RATE.burst).fill(401), 'the burst is introspected (and refused: 401)');
    for (const r of answers.slice(RATE.burst)) {
      assert.equal(r.status, 429, `past the burst: ${seen(r)}`);
      assert.ok(Number.isInteger(retryAfter(r)) && retryAfter(r) >= 1, `Retry-After: ${r.headers.get('retry-after')}`);
    }
    assert.equal(asked, RATE.burst, `the provider saw ${asked} introspections for 12 made-up tokens`);
  });

  check('r2. a valid opaque token from the same address, right after the flood: 429 (the address\'s ration is spent), served once Retry-After has passed, then from its verdict', async (t) => {
    legit = await opaqueFor(rated);
    // The attacker goes on until it is refused (the ration may have refilled since r1).
    for (let i = 0; i <= RATE.burst && (await initialize(rnd('made-up'), rated)).status !== 429; i++);
    const refused = await initialize(legit, rated);
    t.diagnostic(`the legit client right after the flood: ${statusLine(refused)}`);
    assert.equal(refused.status, 429, `a token never seen, on the flooded address: ${seen(refused)}`);
    const wait = retryAfter(refused);
    assert.ok(wait >= 1, `Retry-After ${refused.headers.get('retry-after')}`);
    // A client that waits exactly as long as Retry-After says.
    await sleep(wait * 1000);
    const before = await introspections();
    const served = await initialize(legit, rated);
    t.diagnostic(`after waiting Retry-After (${wait} s): ${statusLine(served)}`);
    assert.equal(served.status, 200, `after waiting the Retry-After the 429 gave (${wait} s): ${seen(served)}`);
    // Its verdict is cached: more requests (the attacker still flooding) cost nothing.
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      assert.equal((await initialize(rnd('made-up'), rated)).status, 429, 'the flood goes on being refused');
      statuses.push((await initialize(legit, rated)).status);
    }
    await sleep(200);
    assert.deepEqual(statuses, [200, 200, 200], 'the legit token within its verdict');
    assert.equal((await introspections()) - before, 1, 'one introspection for the legit token, none for the flood');
  });

  check('r3. once that verdict is older than introspection_cache_seconds, the token once found active is checked again without its address\'s ration: served while the flood goes on', async (t) => {
    assert.ok(legit, 'r2 did not get a token');
    await sleep(TRUST_S * 1000 + 300);
    for (let i = 0; i < 3; i++) await initialize(rnd('made-up'), rated);
    const before = await introspections();
    const r = await initialize(legit, rated);
    t.diagnostic(`the legit token ${TRUST_S} s later, the attacker still flooding: ${statusLine(r)}`);
    assert.equal(r.status, 200, `a re-check of a token once found active is not a stranger's: ${seen(r)}`);
    assert.equal(await introspections(), before + 1, 'it was asked about again (a revocation would show)');
  });

  check('r4. revocation: a valid opaque token is accepted, revoked at the provider, accepted at most introspection_cache_seconds more, then 401 invalid_token', async (t) => {
    const token = await opaqueFor(revoking);
    const first = await initialize(token, revoking);
    assert.equal(first.status, 200, `before revocation: ${seen(first)}`);
    const verdictAt = Date.now(); // the introspection was just made
    const meta = await getJson(`${provider.issuer}/.well-known/openid-configuration`);
    const res = await fetch(meta.json.revocation_endpoint, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`svc-opaque:${CLIENT_SECRET['svc-opaque']}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
      signal: AbortSignal.timeout(STEP_MS),
    });
    assert.equal(res.status, 200, `revocation: ${res.status} ${await res.text()}`);
    const revokedAt = Date.now();
    assert.deepEqual(await introspect(token), { active: false }, 'the provider says the token is revoked');
    const polls = [];
    let firstRefusal;
    while (Date.now() - revokedAt < (TRUST_S + 3) * 1000) {
      const r = await initialize(token, revoking);
      polls.push([Date.now() - revokedAt, r.status]);
      if (r.status !== 200) {
        firstRefusal ??= r;
        if (polls.filter(([, s]) => s !== 200).length >= 3) break;
      }
      await sleep(200);
    }
    const accepted = polls.filter(([, s]) => s === 200).map(([ms]) => ms);
    const refusedAt = polls.find(([, s]) => s !== 200)?.[0];
    t.diagnostic(`after revocation (ms, status): ${polls.map(([ms, s]) => `${ms}:${s}`).join(' ')}`);
    assert.ok(firstRefusal, `still accepted ${(TRUST_S + 3)} s after revocation`);
    assert.equal(firstRefusal.status, 401, `the revoked token: ${seen(firstRefusal)}`);
    assert.match(firstRefusal.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    assert.ok(accepted.length > 0, 'the cached verdict was not used at all after revocation');
    assert.ok(
      accepted.every((ms) => ms + (revokedAt - verdictAt) <= TRUST_S * 1000 + 500),
      `accepted ${Math.max(...accepted)} ms after revocation, past the ${TRUST_S} s the verdict is trusted`,
    );
    assert.ok(refusedAt <= TRUST_S * 1000 + 1000, `first refused ${refusedAt} ms after revocation`);
    assert.ok(polls.slice(polls.findIndex(([, s]) => s !== 200)).every(([, s]) => s === 401), 'once refused, refused');
  });
});
