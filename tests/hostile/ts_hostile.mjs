// Hostile clients against the official MCP TypeScript SDKs:
// @modelcontextprotocol/sdk 1.32.2 (v1) at 2025-11-25 and @modelcontextprotocol/client 2.4.0
// (v2) at 2025-11-25 and 2026-07-28, from tests/interop/ts/node_modules. What a hostile
// client does is raw HTTP (fetch); what must keep working, or be refused, is seen through
// the SDKs. The upstream is httpbin (given by run.sh), whose access log (with each request's
// Idempotency-Key and X-Mode headers) is the witness of what reached it, and
// tests/fixtures/tasks-conformance/upstream.py (started here with --python) for an
// operation answering 202 + Operation-Location.
//
// Usage (from tests/hostile/, as run.sh calls it):
//   node ts_hostile.mjs --bin BIN --python VENV_PYTHON --httpbin URL --access-log FILE
//
// restmcp serves tests/hostile/hostile-api.yaml (API "hostile") on httpbin with static tokens
// A, B and C (random per run; every client is on 127.0.0.1, so tokens tell them apart):
//   T1  max_streams_per_client = 2, max_sse_streams = 3;  T2  max_sessions = 5;
//   T3  the API as "shop" (idempotency_header, confirm = "destructive") and "jobs"
//       (upstream.py, timeout_seconds = 1).
// Checked:
//   1  v1 and v2 at 2025-11-25 (sessions): a tools/call whose answer streams (onprogress) is
//      in flight; a raw POST in that session (transport.sessionId) reusing its request id
//      (seen on the wire) gets 400 / -32600 "already in flight" at once; the SDK still gets
//      its result; httpbin saw that call once. Streams: v2 at 2026-07-28 (no session, no GET
//      stream), three concurrent streaming calls of token A with max_streams_per_client = 2:
//      two results and one rejection raised by the SDK at once (its text printed), while
//      token B's call is served, token C's, with every stream of the server held
//      (max_sse_streams = 3), is rejected at once (503), and /healthz answers; v1 at
//      2025-11-25, whose GET stream is
//      one of the client's streams: of two concurrent streaming calls one is refused (printed).
//   2  v1 and v2 clients of token A open sessions, a raw client of token A fills T2's five
//      with sessions holding their GET streams; a v2 client of token B connects and calls a
//      tool (served); the v1 client, whose session was given up, calls again: what it sees is
//      printed and must be an error raised at once; A's next raw initialize gives up A's next
//      (the v2 client's), which then sees the same; B goes on.
//   3  v1 client A's createCharge with an idempotency key, repeated: a replay (one POST);
//      v2 client B (2026-07-28) with the same key and arguments: sent (two POSTs); A's
//      slow_compute handle: v2 client B's operation_status is "Unknown operation handle",
//      A's own is running; v2 manual mode (allowInputRequired): B redeeming A's requestState
//      is -32602 and nothing is sent, A's own accept sends the DELETE once.
//   4  the elicitation handler of v1 (2025-11-25, elicitation/create) and of v2 (2026-07-28,
//      input_required driven by the SDK) gets a message showing "X-Mode: dry-run"; accepted,
//      httpbin receives X-Mode: dry-run; v2 manual mode: the dry-run state redeemed with
//      purge-everything is -32602 and nothing is sent, with dry-run it is sent, once.
// Output: `ok N - name (detail)` / `not ok N - name: why`, then `ts-hostile: P passed, F
// failed`; exit status 1 when anything failed (the work directory is then kept and named).
// Only 127.0.0.1 is contacted; every step has a timeout; every child is killed at exit.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const TS_DIR = path.resolve(HERE, '../interop/ts');
const STEP_MS = 20_000; // one request, one process start
const WATCHDOG_MS = 240_000; // the whole run
const OLD = '2025-11-25';
const NEW = '2026-07-28';

function argValue(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const BIN = path.resolve(argValue('--bin') ?? process.env.RESTMCP_BIN ?? path.join(ROOT, 'target/debug/restmcp'));
const PYTHON = argValue('--python')?.includes('/') ? path.resolve(argValue('--python')) : argValue('--python');
const HTTPBIN = (argValue('--httpbin') ?? '').replace(/\/+$/, '');
const ACCESS_LOG = argValue('--access-log');

// ---------------------------------------------------------------- the SDKs, from tests/interop/ts

function packageDir(pkg) {
  const dir = path.join(TS_DIR, 'node_modules', pkg);
  if (!existsSync(path.join(dir, 'package.json'))) throw new Error(`${pkg} not found under ${TS_DIR}/node_modules: run \`npm ci\` there`);
  return dir;
}
const packageJson = (pkg) => JSON.parse(readFileSync(path.join(packageDir(pkg), 'package.json'), 'utf8'));
function esmEntry(pkg, sub) {
  const { exports } = packageJson(pkg);
  const pick = (target) => (typeof target === 'string' ? target : pick(target.import?.default ?? target.import ?? target.default));
  let rel;
  if (exports[sub]) rel = pick(exports[sub]);
  else if (exports['./*'] && sub.startsWith('./')) rel = pick(exports['./*']).replace('*', sub.slice(2));
  if (!rel) throw new Error(`${pkg} exports no ${sub}`);
  return pathToFileURL(path.join(packageDir(pkg), rel)).href;
}
const v1Client = await import(esmEntry('@modelcontextprotocol/sdk', './client/index.js'));
const v1Http = await import(esmEntry('@modelcontextprotocol/sdk', './client/streamableHttp.js'));
const v1Types = await import(esmEntry('@modelcontextprotocol/sdk', './types.js'));
const v2 = await import(esmEntry('@modelcontextprotocol/client', '.'));
const VERSIONS = { v1: packageJson('@modelcontextprotocol/sdk').version, v2: packageJson('@modelcontextprotocol/client').version };

// ---------------------------------------------------------------- bookkeeping

let passed = 0;
let failed = 0;
let checkNo = 0;
const children = new Set();
const workDir = mkdtempSync(path.join(os.tmpdir(), 'restmcp-ts-hostile-'));
let keepWorkDir = false;

const oneLine = (s) => String(s).replace(/\s*\n\s*/g, ' ⏎ ');
function check(name, ok, detail = '') {
  if (ok) {
    passed++;
    console.log(`ok ${++checkNo} - ${name}${detail ? ` (${oneLine(detail)})` : ''}`);
  } else {
    failed++;
    console.log(`not ok ${++checkNo} - ${name}: ${oneLine(detail)}`);
  }
}
const info = (line) => console.log(`# ${oneLine(line)}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function withTimeout(promise, ms, label) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${label}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
function short(value, max = 400) {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return s === undefined ? 'undefined' : s.length > max ? `${s.slice(0, max)}…` : s;
}
function errText(e) {
  if (!(e instanceof Error)) return String(e);
  const code = e.code !== undefined ? ` [code ${e.code}]` : '';
  return `${e.constructor?.name ?? e.name}: ${e.message}${code}`;
}

function killAll() {
  for (const pid of children) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
process.on('exit', () => {
  killAll();
  if (!keepWorkDir) rmSync(workDir, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => process.exit(1));
const watchdog = setTimeout(() => {
  console.log(`not ok ${++checkNo} - run: watchdog fired after ${WATCHDOG_MS} ms`);
  console.log(`ts-hostile: ${passed} passed, ${failed + 1} failed`);
  keepWorkDir = true;
  console.log(`# work directory kept: ${workDir}`);
  process.exit(1);
}, WATCHDOG_MS);

function childEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RESTMCP_') && !k.startsWith('HOSTILE_')) env[k] = v;
  return { ...env, ...extra };
}
async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// Spawns `cmd` in its own process group; resolves with the first match of `ready` in its
// `stream` (its lines also go to `lines`).
async function startChild(name, cmd, args, env, stream, ready, lines) {
  const child = spawn(cmd, args, { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.add(child.pid);
  return withTimeout(
    new Promise((resolve, reject) => {
      for (const s of ['stdout', 'stderr']) {
        let buf = '';
        child[s].setEncoding('utf8');
        child[s].on('data', (chunk) => {
          buf += chunk;
          let nl;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            lines.push(`${s}: ${line}`);
            const m = s === stream ? ready.exec(line) : null;
            if (m) resolve({ child, match: m });
          }
        });
      }
      child.once('exit', (code, signal) => reject(new Error(`${name} exited early (${code ?? signal}): ${short(lines.join(' | '), 1500)}`)));
      child.once('error', reject);
    }),
    STEP_MS,
    `${name} to start`,
  );
}

// ---------------------------------------------------------------- httpbin's access log

const LINE = /"([A-Z]+) (\S+) HTTP\/[0-9.]+" (\d+) idem="([^"]*)" mode="([^"]*)"/;
class AccessLog {
  constructor(file, url) {
    this.file = file;
    this.url = url;
    this.markers = 0;
  }
  // {method, target, status, idem, mode} of every request line, the markers left out.
  requests() {
    let text = '';
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    const out = [];
    for (const line of text.split('\n')) {
      const m = LINE.exec(line);
      if (m && !m[2].startsWith('/status/204?ts-hostile-marker')) out.push({ method: m[1], target: m[2], status: m[3], idem: m[4], mode: m[5] });
    }
    return out;
  }
  // Everything logged, once a marker request of ours is (gunicorn logs after answering).
  async settled() {
    const target = `/status/204?ts-hostile-marker=${process.pid}-${++this.markers}`;
    await (await fetch(`${this.url}${target}`)).arrayBuffer();
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (readFileSync(this.file, 'utf8').includes(target)) {
        await sleep(100);
        return this.requests();
      }
      await sleep(25);
    }
    throw new Error(`httpbin's access log ${this.file} never showed the marker ${target}`);
  }
  async mark() {
    return (await this.settled()).length;
  }
  async since(mark) {
    return (await this.settled()).slice(mark);
  }
}
const fmt = (reqs) => short(reqs.map((r) => `${r.method} ${r.target} idem=${r.idem} mode=${r.mode}`).join(', ') || 'none', 600);

// ---------------------------------------------------------------- restmcp

const TOKENS = Object.fromEntries(['A', 'B', 'C'].map((n) => [n, `hostile-ts-${n.toLowerCase()}-${randomBytes(18).toString('base64url')}`]));
const serverStderr = [];

async function startServe(name, server, apis) {
  const port = await freePort();
  const file = path.join(workDir, `${name}.toml`);
  writeFileSync(
    file,
    `[server]
listen = "127.0.0.1:${port}"
${server}
[server.auth]
tokens_env = ["HOSTILE_TOKEN_A", "HOSTILE_TOKEN_B", "HOSTILE_TOKEN_C"]

${apis}
[reload]
enabled = false
`,
  );
  const lines = [];
  serverStderr.push([name, lines]);
  const env = childEnv({
    HOSTILE_TOKEN_A: TOKENS.A,
    HOSTILE_TOKEN_B: TOKENS.B,
    HOSTILE_TOKEN_C: TOKENS.C,
    HOSTILE_IDENTITY_KEY: randomBytes(32).toString('hex'),
    HOSTILE_CONFIRM_KEY: randomBytes(32).toString('hex'),
  });
  const { match } = await startChild(`restmcp serve (${name})`, BIN, ['serve', '--config', file], env, 'stderr',
    /MCP over Streamable HTTP at (http:\/\/\S+)/, lines);
  return match[1].replace(/[,.;]$/, '');
}

// ---------------------------------------------------------------- SDK clients and raw HTTP

const INFO = { name: 'restmcp-ts-hostile', version: '1.0.0' };
const reqOpts = { timeout: STEP_MS };
const ELICIT_CAPS = { elicitation: { form: {} } };
// The transport's options: the token, and a fetch that notes, for the HTTP side of the wire,
// when each POSTed request's answer has its headers (the request is then in flight at the
// server: `answered` maps its JSON-RPC id to a promise) and the status of every GET (the
// session's SSE stream).
function transportOptions(token, http) {
  const tracked = async (url, init) => {
    let id;
    let settle;
    if ((init?.method ?? 'GET') === 'POST') {
      try {
        id = JSON.parse(init.body)?.id;
      } catch {
        id = undefined;
      }
      if (id !== undefined) http.answered.set(id, new Promise((resolve) => (settle = resolve)));
    }
    const res = await fetch(url, init);
    if ((init?.method ?? 'GET') === 'GET') http.gets.push(res.status);
    settle?.(res.status);
    return res;
  };
  return { requestInit: { headers: { Authorization: `Bearer ${token}` } }, fetch: tracked };
}

// Records every JSON-RPC message the SDK sends ('out') and receives ('in').
function tap(transport, wire) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    wire.push({ dir: 'out', message, at: Date.now() });
    return send(message, options);
  };
  transport.onmessage = (message) => wire.push({ dir: 'in', message, at: Date.now() });
  return transport;
}

// A connected client: { client, transport, wire, callTool(params, opts), close() }.
// sdk 'v1' speaks 2025-11-25; 'v2' speaks `revision` (2025-11-25, or 2026-07-28 by auto negotiation).
async function connect(sdk, url, token, { revision = OLD, onElicit } = {}) {
  const wire = [];
  const http = { answered: new Map(), gets: [] };
  const caps = onElicit ? ELICIT_CAPS : {};
  let client;
  let transport;
  if (sdk === 'v1') {
    client = new v1Client.Client(INFO, { capabilities: caps });
    if (onElicit) client.setRequestHandler(v1Types.ElicitRequestSchema, (request) => onElicit(request.params));
    transport = tap(new v1Http.StreamableHTTPClientTransport(new URL(url), transportOptions(token, http)), wire);
  } else {
    client = new v2.Client(INFO, { capabilities: caps, ...(revision === NEW ? { versionNegotiation: { mode: 'auto' } } : {}) });
    if (onElicit) client.setRequestHandler('elicitation/create', (request) => onElicit(request.params));
    transport = tap(new v2.StreamableHTTPClientTransport(new URL(url), transportOptions(token, http)), wire);
  }
  client.onerror = () => {};
  await withTimeout(sdk === 'v1' ? client.connect(transport, reqOpts) : client.connect(transport), STEP_MS, `${sdk} connect`);
  const callTool = (params, opts = {}) =>
    sdk === 'v1' ? client.callTool(params, undefined, { ...reqOpts, ...opts }) : client.callTool(params, { ...reqOpts, ...opts });
  const close = () => withTimeout(client.close(), STEP_MS, 'close').catch(() => {});
  // Resolves once the session's GET stream is open (status 200), within a step.
  const streamOpen = async () => {
    for (let i = 0; i < STEP_MS / 50 && !http.gets.includes(200); i++) await sleep(50);
    return http.gets.includes(200);
  };
  return { client, transport, wire, http, callTool, close, streamOpen };
}

// What a promise came to: { kind: 'result' | 'error' | 'hang', value, ms }.
async function outcome(promise, ms = STEP_MS) {
  const began = Date.now();
  try {
    const value = await withTimeout(promise, ms, 'the SDK to answer');
    return { kind: 'result', value, ms: Date.now() - began };
  } catch (e) {
    if (/^timed out after/.test(e?.message ?? '')) return { kind: 'hang', value: errText(e), ms };
    return { kind: 'error', value: errText(e), ms: Date.now() - began };
  }
}
const textOf = (r) => (r?.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
function echoOf(r) {
  if (r?.structuredContent && typeof r.structuredContent === 'object' && 'method' in r.structuredContent) return r.structuredContent;
  try {
    return JSON.parse(textOf(r));
  } catch {
    return undefined;
  }
}
const headerOf = (echo, name) => Object.entries(echo?.headers ?? {}).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
const isOk = (o) => o.kind === 'result' && o.value?.isError !== true;

// One POST as a hostile client: { status, message, ms }.
async function rawPost(url, token, body, { session, version = OLD, extra = {} } = {}) {
  const headers = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    authorization: `Bearer ${token}`,
    'mcp-protocol-version': version,
    ...extra,
  };
  if (session) headers['mcp-session-id'] = session;
  const began = Date.now();
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(STEP_MS) });
  const ms = Date.now() - began;
  const text = await res.text();
  let message = {};
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    for (const line of text.split(/\r?\n/)) {
      if (!line.startsWith('data:')) continue;
      try {
        const m = JSON.parse(line.slice(5));
        if (m?.id === body.id) message = m;
      } catch {
        // not JSON
      }
    }
  } else {
    try {
      message = JSON.parse(text);
    } catch {
      message = { raw: short(text, 300) };
    }
  }
  return { status: res.status, message, ms, headers: res.headers };
}

// A raw session with its GET stream held open: { session, close() } or null.
async function rawSessionWithStream(url, token) {
  const init = await rawPost(url, token, {
    jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: OLD, capabilities: {}, clientInfo: { name: 'hostile-raw', version: '0' } },
  });
  const session = init.headers.get('mcp-session-id');
  if (init.status !== 200 || !session) return null;
  const note = await rawPost(url, token, { jsonrpc: '2.0', method: 'notifications/initialized' }, { session });
  if (note.status !== 202) return null;
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', authorization: `Bearer ${token}`, 'mcp-session-id': session, 'mcp-protocol-version': OLD },
    signal: controller.signal,
  });
  if (res.status !== 200) return null;
  return { session, close: () => controller.abort() };
}

async function healthz(url) {
  try {
    return (await fetch(url.replace(/\/mcp$/, '/healthz'), { signal: AbortSignal.timeout(5_000) })).status;
  } catch {
    return 0;
  }
}

// The v2 SDK's manual mode: the input_required result handed back as it is.
const manualCall = (client, params) => client.request({ method: 'tools/call', params }, { ...reqOpts, allowInputRequired: true });
async function manualOutcome(client, params) {
  try {
    return { result: await manualCall(client, params) };
  } catch (e) {
    return { code: e?.code, error: errText(e) };
  }
}

// ---------------------------------------------------------------- item 1

async function repeatedId(t1, log) {
  for (const sdk of ['v1', 'v2']) {
    const label = `1 repeated id, ${sdk} ${OLD}`;
    const c = await connect(sdk, t1, TOKENS.A);
    try {
      const session = c.transport.sessionId;
      const tag = `ts-dup-${sdk}`;
      const mark = await log.mark();
      const from = c.wire.length;
      const pending = outcome(c.callTool({ name: 'slowEcho', arguments: { seconds: 3, tag } }, { onprogress: () => {} }));
      let id;
      for (let i = 0; i < 100 && id === undefined; i++) {
        id = c.wire.slice(from).find((w) => w.dir === 'out' && w.message.method === 'tools/call')?.message.id;
        if (id === undefined) await sleep(20);
      }
      for (let i = 0; i < 100 && !c.http.answered.has(id); i++) await sleep(20);
      await withTimeout(c.http.answered.get(id), STEP_MS, 'the call\'s answer to start'); // in flight at restmcp
      const dups = [
        await rawPost(t1, TOKENS.A, { jsonrpc: '2.0', id, method: 'tools/list' }, { session }),
        await rawPost(t1, TOKENS.A, { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slowEcho', arguments: { seconds: 1, tag: `${tag}-raw` } } }, { session }),
      ];
      for (const [what, d] of [['tools/list', dups[0]], ['tools/call', dups[1]]]) {
        check(`${label}: a raw ${what} in the SDK's session (${short(session, 12)}) reusing its in-flight id ${id} gets 400, -32600 "already in flight", at once`,
          d.status === 400 && d.message?.error?.code === -32600 && /already in flight/.test(d.message?.error?.message ?? '') && d.ms < 1_000,
          `HTTP ${d.status} in ${d.ms} ms: ${short(d.message, 300)}`);
      }
      const o = await pending;
      check(`${label}: the SDK still gets its own result (httpbin's echo of /delay/3)`,
        isOk(o) && String(echoOf(o.value)?.url ?? '').includes('/delay/3'), `${o.kind} after ${o.ms} ms: ${short(o.value, 300)}`);
      const sent = await log.since(mark);
      check(`${label}: httpbin got that call once, nothing of the refused ones`,
        sent.length === 1 && sent[0].target === `/delay/3?tag=${tag}`, fmt(sent));
    } finally {
      await c.close();
    }
  }
}

async function streamCaps(t1, log) {
  // v2 at 2026-07-28: no session and no GET stream; three concurrent streaming calls of A.
  const a = await connect('v2', t1, TOKENS.A, { revision: NEW });
  const b = await connect('v2', t1, TOKENS.B, { revision: NEW });
  const c3 = await connect('v2', t1, TOKENS.C, { revision: NEW });
  try {
    const mark = await log.mark();
    const calls = [0, 1, 2].map((n) => outcome(a.callTool({ name: 'slowEcho', arguments: { seconds: 3, tag: `ts-cap-a${n}` } }, { onprogress: () => {} })));
    await sleep(400);
    const bCall = outcome(b.callTool({ name: 'slowEcho', arguments: { seconds: 2, tag: 'ts-cap-b' } }, { onprogress: () => {} }));
    await sleep(400); // A's two and B's one hold every stream of the server (max_sse_streams = 3)
    const full = await outcome(c3.callTool({ name: 'slowEcho', arguments: { seconds: 1, tag: 'ts-cap-c' } }, { onprogress: () => {} }));
    info(`1 streams, v2 ${NEW}: a streaming call at the server's cap rejected after ${full.ms} ms: ${full.kind === 'result' ? 'a result' : full.value}`);
    check(`1 streams, v2 ${NEW}: token C's streaming call while every stream of the server is held is refused (503) by an SDK rejection at once`,
      full.kind === 'error' && full.ms < 2_000, `${full.kind} after ${full.ms} ms: ${short(full.value, 300)}`);
    const probes = [];
    for (let i = 0; i < 3; i++) {
      await sleep(400);
      probes.push(await healthz(t1));
    }
    const got = await Promise.all(calls);
    const bGot = await bCall;
    const errors = got.filter((o) => o.kind === 'error');
    for (const e of errors) info(`1 streams, v2 ${NEW}: the refused streaming call rejected after ${e.ms} ms: ${e.value}`);
    check(`1 streams, v2 ${NEW}: three concurrent streaming calls of token A (max_streams_per_client = 2): two results, one rejected by the SDK at once, none hangs`,
      got.filter(isOk).length === 2 && errors.length === 1 && errors[0].ms < 2_000 && !got.some((o) => o.kind === 'hang'),
      short(got.map((o) => [o.kind, o.ms, o.kind === 'result' ? 'result' : o.value]), 600));
    check(`1 streams, v2 ${NEW}: token B's streaming call meanwhile is served`, isOk(bGot), `${bGot.kind}: ${short(bGot.value, 300)}`);
    check('1 streams: /healthz answered 200 while the streams were held', probes.every((p) => p === 200), String(probes));
    const sent = (await log.since(mark)).filter((r) => r.target.startsWith('/delay/'));
    check('1 streams: httpbin got A\'s two served calls and B\'s, not the refused one',
      sent.length === 3 && sent.filter((r) => r.target.includes('ts-cap-a')).length === 2 && sent.some((r) => r.target.includes('ts-cap-b')), fmt(sent));
  } finally {
    await a.close();
    await b.close();
    await c3.close();
  }
  // v1 at 2025-11-25: its session's GET stream is one of the client's two.
  const c = await connect('v1', t1, TOKENS.C);
  try {
    const open = await c.streamOpen();
    check(`1 streams, v1 ${OLD}: the SDK opened its session's GET stream`, open, `GETs answered ${c.http.gets}`);
    const got = await Promise.all([0, 1].map((n) => outcome(c.callTool({ name: 'slowEcho', arguments: { seconds: 2, tag: `ts-cap-c${n}` } }, { onprogress: () => {} }))));
    const errors = got.filter((o) => o.kind === 'error');
    for (const e of errors) info(`1 streams, v1 ${OLD} with its GET stream open: a streaming call rejected after ${e.ms} ms: ${e.value}`);
    check(`1 streams, v1 ${OLD}: with the SDK's GET stream open, of two concurrent streaming calls one is served, one rejected at once (no hang)`,
      got.filter(isOk).length === 1 && errors.length === 1 && errors[0].ms < 2_000,
      short(got.map((o) => [o.kind, o.ms, o.kind === 'result' ? 'result' : o.value]), 600));
  } finally {
    await c.close();
  }
}

// ---------------------------------------------------------------- item 2

async function sessions(t2) {
  const victims = [];
  const hostile = [];
  let b;
  try {
    for (const sdk of ['v1', 'v2']) {
      const v = await connect(sdk, t2, TOKENS.A);
      const first = await outcome(v.callTool({ name: 'listPets', arguments: { tag: `ts-victim-${sdk}` } }));
      check(`2 sessions: ${sdk} client of token A has a session and is served`, isOk(first) && Boolean(v.transport.sessionId), short(first.value, 200));
      victims.push([sdk, v]);
      await sleep(300);
    }
    for (let i = 0; i < 3; i++) {
      const s = await rawSessionWithStream(t2, TOKENS.A);
      if (!s) break;
      hostile.push(s);
      await sleep(50);
    }
    check('2 sessions: a raw client of token A fills the table (max_sessions = 5) with sessions holding their GET streams',
      hostile.length === 3, `${hostile.length} raw sessions beside the two SDK ones`);
    try {
      b = await connect('v2', t2, TOKENS.B);
      const o = await outcome(b.callTool({ name: 'listPets', arguments: { tag: 'ts-b' } }));
      check('2 sessions: v2 client of token B connects and calls listPets: served', isOk(o), `${o.kind}: ${short(o.value, 300)}`);
    } catch (e) {
      check('2 sessions: v2 client of token B connects and calls listPets: served', false, errText(e));
    }
    // The v1 client's session was A's longest unused: given up for B.
    const [, v1c] = victims[0];
    const seen1 = await outcome(v1c.callTool({ name: 'listPets', arguments: { tag: 'ts-victim-v1-2' } }), 10_000);
    info(`2 sessions: v1 ${VERSIONS.v1}, whose session was given up, calling again saw (${seen1.ms} ms): ${seen1.kind}: ${short(seen1.value, 400)}`);
    check('2 sessions: the v1 client whose session was given up gets an error at once (404), no hang',
      seen1.kind === 'error' && seen1.ms < 3_000, `${seen1.kind}: ${short(seen1.value, 300)}`);
    // A's next initialize gives up A's next longest unused: the v2 client's.
    const more = await rawSessionWithStream(t2, TOKENS.A);
    if (more) hostile.push(more);
    check('2 sessions: A\'s next raw initialize is served from A\'s own sessions', Boolean(more));
    const [, v2c] = victims[1];
    const seen2 = await outcome(v2c.callTool({ name: 'listPets', arguments: { tag: 'ts-victim-v2-2' } }), 10_000);
    info(`2 sessions: v2 ${VERSIONS.v2}, whose session was given up, calling again saw (${seen2.ms} ms): ${seen2.kind}: ${short(seen2.value, 400)}`);
    check('2 sessions: the v2 client whose session was given up gets an error at once (404), no hang',
      seen2.kind === 'error' && seen2.ms < 3_000, `${seen2.kind}: ${short(seen2.value, 300)}`);
    if (b) {
      const again = await outcome(b.callTool({ name: 'listPets', arguments: { tag: 'ts-b-2' } }));
      check('2 sessions: B\'s session goes on', isOk(again), `${again.kind}: ${short(again.value, 300)}`);
    }
    check('2 sessions: /healthz answers 200', (await healthz(t2)) === 200);
  } finally {
    for (const s of hostile) s.close();
    for (const [, v] of victims) await v.close();
    await b?.close();
  }
}

// ---------------------------------------------------------------- item 3

async function boundToToken(t3, log) {
  const a = await connect('v1', t3, TOKENS.A);
  const b = await connect('v2', t3, TOKENS.B, { revision: NEW });
  try {
    const key = `ts-order-${randomBytes(6).toString('hex')}`;
    const args = { amount: 7, note: 'hostile', idempotency_key: key };
    let mark = await log.mark();
    const first = await a.callTool({ name: 'createCharge', arguments: args });
    const repeat = await a.callTool({ name: 'createCharge', arguments: args });
    let sent = await log.since(mark);
    check('3 idempotency, v1: A\'s repeat is answered from A\'s record (replay marked), one POST at httpbin',
      first.isError !== true && repeat._meta?.['io.restmcp/idempotentReplay'] === true
        && sent.length === 1 && sent[0].method === 'POST' && sent[0].idem === key, `${short(repeat._meta)}; httpbin: ${fmt(sent)}`);
    mark = await log.mark();
    const other = await b.callTool({ name: 'createCharge', arguments: args });
    sent = await log.since(mark);
    check(`3 idempotency, v2 ${NEW}: B's same call with A's key is sent to httpbin, not answered with A's result`,
      other.isError !== true && other._meta?.['io.restmcp/idempotentReplay'] !== true
        && sent.length === 1 && sent[0].idem === key && headerOf(echoOf(other), 'Idempotency-Key') === key, `${short(other._meta)}; httpbin: ${fmt(sent)}`);

    const started = await a.callTool({ name: 'slow_compute', arguments: { seconds: 30, label: 'ts-hostile' } });
    const handle = /handle "([^"]+)"/.exec(textOf(started))?.[1];
    check('3 handles, v1: A\'s slow_compute outlives its 1 s limit and gives a handle', Boolean(handle), short(textOf(started), 300));
    if (handle) {
      const theirs = await b.callTool({ name: 'operation_status', arguments: { handle } });
      check(`3 handles, v2 ${NEW}: B's operation_status with A's handle is "Unknown operation handle"`,
        theirs.isError === true && textOf(theirs).includes('Unknown operation handle'), short(textOf(theirs), 300));
      const own = await a.callTool({ name: 'operation_status', arguments: { handle } });
      check('3 handles, v1: A\'s own operation_status says running', own.isError !== true && own.structuredContent?.running === true,
        short(own.structuredContent ?? textOf(own), 300));
    }
  } finally {
    await a.close();
    await b.close();
  }
  // A confirmation A was asked is A's: v2 manual mode for both.
  const ma = await connect('v2', t3, TOKENS.A, { revision: NEW, onElicit: async () => ({ action: 'decline' }) });
  const mb = await connect('v2', t3, TOKENS.B, { revision: NEW, onElicit: async () => ({ action: 'decline' }) });
  try {
    const args = { thingId: 'ts-foreign', 'X-Mode': 'dry-run' };
    let mark = await log.mark();
    const asked = await manualOutcome(ma.client, { name: 'deleteThing', arguments: args });
    const state = asked.result?.requestState;
    check(`3 confirmation, v2 ${NEW} manual: A's deleteThing is input_required with a requestState`,
      asked.result?.resultType === 'input_required' && typeof state === 'string', short(asked, 300));
    const stolen = await manualOutcome(mb.client, { name: 'deleteThing', arguments: args, inputResponses: { confirm: { action: 'accept' } }, requestState: state });
    let sent = await log.since(mark);
    check(`3 confirmation, v2 ${NEW} manual: B redeeming A's requestState is -32602, nothing sent`,
      stolen.code === -32602 && sent.length === 0, `${short(stolen, 300)}; httpbin: ${fmt(sent)}`);
    mark = await log.mark();
    const done = await manualOutcome(ma.client, { name: 'deleteThing', arguments: args, inputResponses: { confirm: { action: 'accept' } }, requestState: state });
    sent = await log.since(mark);
    check(`3 confirmation, v2 ${NEW} manual: A's own accept sends the DELETE once`,
      done.result?.isError !== true && sent.length === 1 && sent[0].method === 'DELETE' && sent[0].target === '/anything/things/ts-foreign',
      `${short(done, 300)}; httpbin: ${fmt(sent)}`);
  } finally {
    await ma.close();
    await mb.close();
  }
}

// ---------------------------------------------------------------- item 4

async function headerConfirm(t3, log) {
  for (const [sdk, revision] of [['v1', OLD], ['v2', NEW]]) {
    const asked = [];
    const c = await connect(sdk, t3, TOKENS.A, {
      revision,
      onElicit: async (params) => {
        asked.push(params?.message ?? '');
        return { action: 'accept', content: {} };
      },
    });
    try {
      const id = `ts-hdr-${sdk}`;
      const mark = await log.mark();
      const r = await outcome(c.callTool({ name: 'deleteThing', arguments: { thingId: id, 'X-Mode': 'dry-run' } }));
      const sent = await log.since(mark);
      check(`4 header in the question, ${sdk} ${revision}: the elicitation handler's message shows "X-Mode: dry-run"`,
        asked.length === 1 && asked[0].includes('X-Mode: dry-run'), short(asked, 500));
      check(`4 header in the question, ${sdk} ${revision}: accepted, httpbin received X-Mode: dry-run, once`,
        isOk(r) && headerOf(echoOf(r.value), 'X-Mode') === 'dry-run'
          && sent.length === 1 && sent[0].method === 'DELETE' && sent[0].target === `/anything/things/${id}` && sent[0].mode === 'dry-run',
        `${r.kind}: ${short(r.value, 200)}; httpbin: ${fmt(sent)}`);
    } finally {
      await c.close();
    }
  }
  const m = await connect('v2', t3, TOKENS.A, { revision: NEW, onElicit: async () => ({ action: 'decline' }) });
  try {
    const dry = { thingId: 'ts-hdr-manual', 'X-Mode': 'dry-run' };
    const purge = { thingId: 'ts-hdr-manual', 'X-Mode': 'purge-everything' };
    const accept = { confirm: { action: 'accept' } };
    let mark = await log.mark();
    const first = await manualOutcome(m.client, { name: 'deleteThing', arguments: dry });
    const state = first.result?.requestState;
    check(`4 v2 ${NEW} manual: the question for dry-run shows "X-Mode: dry-run"`,
      typeof state === 'string' && String(first.result?.inputRequests?.confirm?.params?.message ?? '').includes('X-Mode: dry-run'), short(first, 400));
    const swapped = await manualOutcome(m.client, { name: 'deleteThing', arguments: purge, inputResponses: accept, requestState: state });
    let sent = await log.since(mark);
    check(`4 v2 ${NEW} manual: the dry-run requestState redeemed with X-Mode purge-everything is -32602, nothing sent`,
      swapped.code === -32602 && sent.length === 0, `${short(swapped, 300)}; httpbin: ${fmt(sent)}`);
    mark = await log.mark();
    const done = await manualOutcome(m.client, { name: 'deleteThing', arguments: dry, inputResponses: accept, requestState: state });
    sent = await log.since(mark);
    check(`4 v2 ${NEW} manual: redeemed with dry-run, httpbin receives X-Mode: dry-run, once`,
      done.result?.isError !== true && sent.length === 1 && sent[0].mode === 'dry-run' && sent[0].target === '/anything/things/ts-hdr-manual',
      `${short(done, 300)}; httpbin: ${fmt(sent)}`);
  } finally {
    await m.close();
  }
}

// ---------------------------------------------------------------- main

async function step(name, fn) {
  try {
    await withTimeout(fn(), 90_000, name);
  } catch (e) {
    check(`${name}: ran to its end`, false, `${errText(e)} ${short(e?.stack ?? '', 600)}`);
  }
}

async function main() {
  const began = Date.now();
  console.log(`# SDKs: @modelcontextprotocol/sdk ${VERSIONS.v1}, @modelcontextprotocol/client ${VERSIONS.v2}`);
  if (!existsSync(BIN)) throw new Error(`restmcp binary not found: ${BIN}`);
  if (!HTTPBIN || !ACCESS_LOG || !PYTHON) throw new Error('--httpbin URL, --access-log FILE and --python PATH are needed');
  const log = new AccessLog(path.resolve(ACCESS_LOG), HTTPBIN);
  await log.settled();
  copyFileSync(path.join(HERE, 'hostile-api.yaml'), path.join(workDir, 'hostile-api.yaml'));
  copyFileSync(path.join(ROOT, 'tests/fixtures/tasks-conformance/tasks-api.yaml'), path.join(workDir, 'tasks-api.yaml'));
  const jobsLines = [];
  const { match } = await startChild('jobs upstream', PYTHON, [path.join(ROOT, 'tests/fixtures/tasks-conformance/upstream.py'), '0'],
    childEnv({ PYTHONDONTWRITEBYTECODE: '1' }), 'stdout', /listening on (http:\/\/\S+)/, jobsLines);
  const jobs = match[1];
  const hostile = `[apis.hostile]\nspec = "hostile-api.yaml"\nbase_url = "${HTTPBIN}"\n`;
  const [t1, t2, t3] = await Promise.all([
    startServe('t1', 'max_streams_per_client = 2\nmax_sse_streams = 3', hostile),
    startServe('t2', 'max_sessions = 5', hostile),
    startServe('t3', 'identity_key_env = "HOSTILE_IDENTITY_KEY"\n[server.confirm]\nstate_key_env = "HOSTILE_CONFIRM_KEY"',
      `[apis.shop]\nspec = "hostile-api.yaml"\nbase_url = "${HTTPBIN}"\nidempotency_header = "Idempotency-Key"\nconfirm = "destructive"\n\n`
      + `[apis.jobs]\nspec = "tasks-api.yaml"\nbase_url = "${jobs}"\ntimeout_seconds = 1\n`),
  ]);
  info(`httpbin ${HTTPBIN}; jobs ${jobs}; restmcp T1 ${t1}, T2 ${t2}, T3 ${t3}`);

  await step('1 repeated id', () => repeatedId(t1, log));
  await step('1 streams', () => streamCaps(t1, log));
  await step('2 sessions', () => sessions(t2));
  await step('3 bound to the token', () => boundToToken(t3, log));
  await step('4 header confirmation', () => headerConfirm(t3, log));

  if (failed > 0) {
    keepWorkDir = true;
    for (const [name, lines] of serverStderr) writeFileSync(path.join(workDir, `restmcp-${name}.log`), `${lines.join('\n')}\n`);
    writeFileSync(path.join(workDir, 'jobs.log'), `${jobsLines.join('\n')}\n`);
    console.log(`# work directory kept: ${workDir}`);
  }
  console.log(`# time: ${((Date.now() - began) / 1000).toFixed(1)} s`);
}

let exitCode = 1;
try {
  await main();
  exitCode = failed === 0 && passed > 0 ? 0 : 1;
} catch (e) {
  check('run', false, `${errText(e)} ${short(e?.stack ?? '', 800)}`);
  keepWorkDir = true;
  console.log(`# work directory kept: ${workDir}`);
}
clearTimeout(watchdog);
console.log(`ts-hostile: ${passed} passed, ${failed} failed`);
process.exit(exitCode);
