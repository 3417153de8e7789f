// restmcp as an OAuth 2.1 resource server (issue 23, part 1), proven against a
// real OpenID provider: oidc-provider (provider.mjs; configuration only, no
// handler of ours on the provider side). Plain HTTP with the global fetch, so
// every status code and WWW-Authenticate header is checked as a client sees it.
//
//   node test.mjs --bin PATH/TO/restmcp [--spec PATH/TO/petstore.yaml]
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
// Why: these are the resource-server cases of issue 23's "Done when", seen the
// way a remote MCP client sees them, with tokens from a certified provider
// rather than tokens we mint (only j forges tokens, on purpose).
// Only 127.0.0.1 is contacted. Every step has a timeout. Secrets and static
// tokens are random per run. On failure (or with OAUTH_TEST_KEEP=1) the work
// directory (config.toml, restmcp.stderr, provider.stderr) is kept and named.
import { spawn } from 'node:child_process';
import { createHmac, createPublicKey, randomBytes } from 'node:crypto';
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
};
const STATIC_TOKEN = rnd('static');
const CLIENT_SECRET = {
  svc: SECRETS.OAUTH_TEST_SVC_SECRET,
  'svc-short': SECRETS.OAUTH_TEST_SVC_SHORT_SECRET,
  'svc-opaque': SECRETS.OAUTH_TEST_SVC_OPAQUE_SECRET,
  restmcp: SECRETS.OAUTH_TEST_INTROSPECTION_SECRET,
};
const issuedTokens = []; // every access token handed out, for (k)

// ---------------------------------------------------------------- processes

const workDir = mkdtempSync(path.join(os.tmpdir(), 'restmcp-oauth-'));
let failures = 0;
const restmcpStderr = [];
const providerStderr = [];
let provider; // { child, issuer, port }
let restmcp; // { child, base, resource }

// Nothing outlives this process, however it ends: restmcp's process group and
// the provider are killed on exit (the provider also exits when its stdin closes).
process.on('exit', () => {
  for (const [child, group] of [[restmcp?.child, true], [provider?.child, false]]) {
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

async function startRestmcp(issuer) {
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const resource = `${base}/mcp`;
    writeFileSync(
      path.join(workDir, 'config.toml'),
      `[server]
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
`,
    );
    try {
      const { child } = await startAndWait(
        BIN,
        ['--config', path.join(workDir, 'config.toml'), 'serve'],
        {
          cwd: workDir,
          env: childEnv({
            RESTMCP_TEST_STATIC_TOKEN: STATIC_TOKEN,
            RESTMCP_TEST_INTROSPECTION_SECRET: SECRETS.OAUTH_TEST_INTROSPECTION_SECRET,
          }),
          detached: true, // own process group: killed as a whole in after()
        },
        'stderr',
        /MCP over Streamable HTTP at (http:\/\/\S+)/,
        restmcpStderr,
        'restmcp serve',
      );
      return { child, base, resource };
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
async function mcp(message, { token, session } = {}) {
  const headers = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': PROTOCOL,
  };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (session) headers['mcp-session-id'] = session;
  const res = await fetch(restmcp.resource, {
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

const initialize = (token) =>
  mcp(
    {
      id: 1,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'restmcp-oauth-test', version: '0' } },
    },
    { token },
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
// resource_metadata URL (issue 23: on a missing, invalid or insufficient token).
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
  if (restmcp?.child) {
    try {
      process.kill(-restmcp.child.pid, 'SIGTERM');
    } catch {}
    await stop(restmcp.child);
  }
  await stop(provider?.child);
  writeFileSync(path.join(workDir, 'restmcp.stderr'), restmcpStderr.join('\n') + '\n');
  writeFileSync(path.join(workDir, 'provider.stderr'), providerStderr.join('\n') + '\n');
  if (failures > 0 || process.env.OAUTH_TEST_KEEP) {
    console.log(`# work directory kept: ${workDir} (config.toml, restmcp.stderr, provider.stderr)`);
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
      restmcp = await startRestmcp(provider.issuer);
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
