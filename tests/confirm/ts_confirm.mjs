// Confirmation by a human, through the protocol, proved against the
// official MCP TypeScript SDK, with httpbin (PyPI httpbin 0.10.4 under gunicorn) as the
// upstream and gunicorn's access log as the witness of what did or did not reach it.
//
// Usage (from tests/confirm/, as run.sh calls it):
//   node ts_confirm.mjs --bin BIN --python VENV_PYTHON [--httpbin URL --access-log FILE] [--spec FILE]
// Without --httpbin, httpbin is started here: VENV_PYTHON -m gunicorn ... httpbin:app, with
// --access-logfile in the work directory. --spec defaults to ts-api.yaml beside this file
// (GET /anything/pets listPets, POST /anything/pets createPet, DELETE
// /anything/pets/{petId} deletePet). The SDKs are imported from
// tests/interop/ts/node_modules (run `npm ci` there first).
//
// restmcp serves the spec twice: API "shelter" with confirm = "destructive" (only deletePet
// needs confirmation) and API "kennel" (prefix w_) with confirm = "writes" (w_createPet and
// w_deletePet need it), over stdio and Streamable HTTP, to
//   @modelcontextprotocol/sdk 1.32.2 (v1), protocol 2025-11-25, and
//   @modelcontextprotocol/client 2.4.0 (v2), protocol 2025-11-25, 2025-06-18 and 2026-07-28.
// Each suite uses a client that declares the elicitation capability (form mode) and registers
// its handler the SDK's way, and a second client that declares none. Checked:
//   - deletePet, confirmed: the handler gets one elicitation/create (form, empty
//     requestedSchema) whose message names DELETE, the resolved URL with the petId and the
//     API's name; accept gives httpbin's echo (method DELETE) and the log shows one DELETE;
//   - deletePet declined, and cancelled: isError saying so and that nothing was sent; httpbin
//     gets nothing;
//   - createPet and listPets run without elicitation;
//   - w_createPet (confirm = "writes") asks, showing POST and the body, shortened;
//   - the client without elicitation: a fail-closed isError, nothing sent, nothing asked;
//   - 2026-07-28 only: the wire shows the input_required result and the retry carrying
//     inputResponses.confirm and the echoed requestState (the v2 SDK drives that flow by
//     itself through the same elicitation handler); then, by hand (client.request() with
//     allowInputRequired),
//     a retry without an answer gets a new input_required, and a tampered requestState,
//     one for other arguments, one for another tool and a replayed one (after accept and
//     after decline) are refused with -32602 and nothing is sent;
//   - v2 at 2025-06-18 too (elicitation exists there, form only);
//   - on a second server (state_ttl_seconds = 2, without_elicitation = "proceed"): the opt-out
//     sends deletePet for a client without elicitation, and an expired requestState is refused.
// With --httpbin, FILE is that gunicorn's --access-logfile; its format must keep the request
// line in quotes ("%(r)s", as gunicorn's default does).
// Output: `ok N - name (detail)` / `not ok N - name: why`, then `ts-confirm: P passed, F
// failed`; exit status 1 when anything failed (the work directory is then kept and named).
// Only 127.0.0.1 is contacted; every step has a timeout; every child is killed at exit.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TS_DIR = path.resolve(HERE, '../interop/ts');
const STEP_TIMEOUT_MS = 20_000; // any single MCP request, start-up or shutdown
const WATCHDOG_MS = 300_000; // the whole run

// ---------------------------------------------------------------- arguments

function argValue(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const BIN = path.resolve(argValue('--bin') ?? process.env.RESTMCP_BIN ?? '../../target/debug/restmcp');
const PYTHON = argValue('--python') ?? process.env.CONFIRM_TEST_PYTHON;
const GIVEN_HTTPBIN = argValue('--httpbin');
const GIVEN_ACCESS_LOG = argValue('--access-log');
const SPEC = path.resolve(argValue('--spec') ?? path.join(HERE, 'ts-api.yaml'));

// ---------------------------------------------------------------- the SDKs, from tests/interop/ts

// This file is not under tests/interop/ts, so bare specifiers would not find its
// node_modules: resolve each package's ESM entry through its own `exports`.
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
const v1Stdio = await import(esmEntry('@modelcontextprotocol/sdk', './client/stdio.js'));
const v1Http = await import(esmEntry('@modelcontextprotocol/sdk', './client/streamableHttp.js'));
const v1Types = await import(esmEntry('@modelcontextprotocol/sdk', './types.js'));
const v2 = await import(esmEntry('@modelcontextprotocol/client', '.'));
const v2Stdio = await import(esmEntry('@modelcontextprotocol/client', './stdio'));
const SDK_VERSIONS = {
  v1: packageJson('@modelcontextprotocol/sdk').version,
  v2: packageJson('@modelcontextprotocol/client').version,
};

// ---------------------------------------------------------------- bookkeeping

let passed = 0;
let failed = 0;
let checkNo = 0;
const children = new Set(); // pids we spawned (or the SDK spawned for us)
const groups = new Set(); // of those, the ones leading their own process group
const workDir = mkdtempSync(path.join(os.tmpdir(), 'restmcp-ts-confirm-'));
let keepWorkDir = false;

// One line per check: line breaks in a detail (restmcp's question has some) become " ⏎ ".
const oneLine = (s) => String(s).replace(/\s*\n\s*/g, ' ⏎ ');
function pass(name, detail = '') {
  passed++;
  console.log(`ok ${++checkNo} - ${name}${detail ? ` (${oneLine(detail)})` : ''}`);
}
function fail(name, why) {
  failed++;
  console.log(`not ok ${++checkNo} - ${name}: ${oneLine(why)}`);
}
function check(name, ok, detail) {
  if (ok) pass(name, detail);
  else fail(name, detail);
}
function info(line) {
  console.log(`# ${line}`);
}

function withTimeout(promise, ms, label) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${label}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function short(value, max = 400) {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return s === undefined ? 'undefined' : s.length > max ? `${s.slice(0, max)}…` : s;
}
function errText(e) {
  if (!(e instanceof Error)) return String(e);
  const code = e.code !== undefined ? ` [code ${e.code}]` : '';
  return `${e.name}: ${e.message}${code}`;
}
function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function killAll() {
  for (const pid of children) {
    try {
      process.kill(groups.has(pid) ? -pid : pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
process.on('exit', () => {
  killAll();
  if (!keepWorkDir) {
    try {
      rmSync(workDir, { recursive: true, force: true });
    } catch {
      // ignore
    }
  }
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    console.log(`not ok ${++checkNo} - run: interrupted by ${sig}`);
    process.exit(1); // the 'exit' handler kills the children
  });
}
const watchdog = setTimeout(() => {
  failed++;
  console.log(`not ok ${++checkNo} - run: watchdog fired after ${WATCHDOG_MS} ms`);
  console.log(`ts-confirm: ${passed} passed, ${failed} failed`);
  keepWorkDir = true;
  console.log(`# work directory kept: ${workDir}`);
  process.exit(1);
}, WATCHDOG_MS);

// restmcp gets no RESTMCP_* setting of the caller's: only the config written here counts.
function childEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('RESTMCP_') && v !== undefined) env[k] = v;
  }
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

// Spawns `cmd` in its own process group and resolves once a stderr line matches `ready`
// (with the match), rejecting with the stderr so far when it exits first.
async function startChild(name, cmd, args, env, ready, stderrLines) {
  const child = spawn(cmd, args, { cwd: workDir, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  children.add(child.pid);
  groups.add(child.pid);
  const match = await withTimeout(
    new Promise((resolve, reject) => {
      let buf = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk) => {
        buf += chunk;
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          stderrLines.push(line);
          const m = ready.exec(line);
          if (m) resolve(m);
        }
      });
      child.once('exit', (code, signal) =>
        reject(new Error(`${name} exited early (code ${code}, signal ${signal}); stderr: ${short(stderrLines.join(' | '), 1500)}`)),
      );
      child.once('error', reject);
    }),
    STEP_TIMEOUT_MS,
    `${name} to start`,
  ).catch(async (e) => {
    await stopChild(child);
    throw e;
  });
  return { child, match };
}

async function stopChild(child) {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      // gone
    }
    await withTimeout(exited, 5_000, 'child to stop').catch(() => {});
  }
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // empty group
  }
  children.delete(child.pid);
  groups.delete(child.pid);
}

// ---------------------------------------------------------------- httpbin and its access log

const httpbinStderr = [];

async function startHttpbin(accessLog) {
  if (!PYTHON) throw new Error('no python with httpbin and gunicorn: pass --python PATH (or --httpbin URL --access-log FILE)');
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      const { child } = await startChild(
        'httpbin (gunicorn)',
        PYTHON,
        ['-m', 'gunicorn', '--bind', `127.0.0.1:${port}`, '--workers', '1', '--threads', '4',
          '--access-logfile', accessLog, 'httpbin:app'],
        { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
        /Listening at: http:\/\//,
        httpbinStderr,
      );
      return { child, url: `http://127.0.0.1:${port}` };
    } catch (e) {
      lastError = e;
      if (!/exited early/.test(e.message)) break;
    }
  }
  throw lastError;
}

// gunicorn writes a line per request after it answered, so a check first sends a marker
// request of its own and waits for that line: what restmcp sent before is in the log by then.
class AccessLog {
  constructor(file, httpbinUrl) {
    this.file = file;
    this.url = httpbinUrl;
    this.markers = 0;
  }

  // [method, request-target] of every request line so far.
  requests() {
    let text = '';
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return [];
    }
    const out = [];
    for (const line of text.split('\n')) {
      const m = /"([A-Z]+) (\S+) HTTP\/[0-9.]+"/.exec(line);
      if (m) out.push([m[1], m[2]]);
    }
    return out;
  }

  count(method, target) {
    return this.requests().filter(([m, t]) => (method === undefined || m === method) && t === target).length;
  }

  // Every request whose target starts with `prefix`, as "METHOD target".
  matching(prefix) {
    return this.requests()
      .filter(([, t]) => t.startsWith(prefix))
      .map(([m, t]) => `${m} ${t}`);
  }

  async settle() {
    const target = `/anything/ts-confirm-marker/${process.pid}-${++this.markers}`;
    const res = await fetch(`${this.url}${target}`);
    await res.arrayBuffer();
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      if (this.count('GET', target) > 0) return;
      await sleep(25);
    }
    throw new Error(`httpbin's access log ${this.file} never showed the marker ${target}`);
  }

  tail(n = 20) {
    return this.requests()
      .slice(-n)
      .map(([m, t]) => `${m} ${t}`)
      .join(', ');
  }
}

// ---------------------------------------------------------------- restmcp

const STATE_KEY_ENV = 'TS_CONFIRM_STATE_KEY';
const STATE_KEY = randomBytes(32).toString('hex');
const API = 'shelter'; // confirm = "destructive"
const WRITES_API = 'kennel'; // prefix w_, confirm = "writes"

// The config for restmcp: `ttl` is [server.confirm] state_ttl_seconds, `extra` more lines
// for that table (without_elicitation), `name` the file's name in the work directory.
function writeConfig(httpbinUrl, port, { name = 'confirm.toml', ttl = 300, extra = '' } = {}) {
  const file = path.join(workDir, name);
  const spec = JSON.stringify(SPEC);
  const base = JSON.stringify(httpbinUrl);
  writeFileSync(
    file,
    `[server]
listen = "127.0.0.1:${port}"

[server.confirm]
state_key_env = "${STATE_KEY_ENV}"
state_ttl_seconds = ${ttl}
${extra}
[apis.${API}]
spec = ${spec}
base_url = ${base}
confirm = "destructive"

[apis.${WRITES_API}]
spec = ${spec}
base_url = ${base}
prefix = "w_"
confirm = "writes"
`,
  );
  return file;
}

const restmcpEnv = () => childEnv({ [STATE_KEY_ENV]: STATE_KEY });

async function startServe(httpbinUrl, stderrLines, options) {
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const config = writeConfig(httpbinUrl, await freePort(), options);
    try {
      const { child, match } = await startChild(
        'restmcp serve',
        BIN,
        ['serve', '--config', config],
        restmcpEnv(),
        /MCP over Streamable HTTP at (http:\/\/\S+)/,
        stderrLines,
      );
      return { child, url: match[1].replace(/[,.;]$/, ''), config };
    } catch (e) {
      lastError = e;
      if (!/exited early/.test(e.message)) break;
    }
  }
  throw lastError;
}

// ---------------------------------------------------------------- SDK adapters

const INFO = { name: 'restmcp-ts-confirm', version: '1.0.0' };
const reqOpts = { timeout: STEP_TIMEOUT_MS };
const ELICIT_CAPS = { elicitation: { form: {} } };

const SDKS = {
  v1: {
    tag: `v1 (@modelcontextprotocol/sdk ${SDK_VERSIONS.v1})`,
    client: (caps) => new v1Client.Client(INFO, { capabilities: caps }),
    onElicit: (client, fn) => client.setRequestHandler(v1Types.ElicitRequestSchema, (request) => fn(request.params)),
    stdio: (params) => new v1Stdio.StdioClientTransport(params),
    http: (url) => new v1Http.StreamableHTTPClientTransport(new URL(url)),
    connect: (client, transport) => client.connect(transport, reqOpts),
    negotiated: (_client, wire) => {
      const init = wire.find((w) => w.dir === 'out' && w.message.method === 'initialize');
      const resp = init && wire.find((w) => w.dir === 'in' && w.message.id === init.message.id);
      return resp?.message.result?.protocolVersion;
    },
    callTool: (client, params, opts = reqOpts) => client.callTool(params, undefined, opts),
  },
  v2: {
    tag: `v2 (@modelcontextprotocol/client ${SDK_VERSIONS.v2})`,
    client: (caps, revision) =>
      new v2.Client(INFO, {
        capabilities: caps,
        ...(revision === '2026-07-28' ? { versionNegotiation: { mode: 'auto' } } : {}),
        ...(revision === '2025-06-18' ? { supportedProtocolVersions: ['2025-06-18'] } : {}),
      }),
    onElicit: (client, fn) => client.setRequestHandler('elicitation/create', (request) => fn(request.params)),
    stdio: (params) => new v2Stdio.StdioClientTransport(params),
    http: (url) => new v2.StreamableHTTPClientTransport(new URL(url)),
    connect: (client, transport) => client.connect(transport),
    negotiated: (client) => client.getNegotiatedProtocolVersion(),
    callTool: (client, params, opts = reqOpts) => client.callTool(params, opts),
  },
};

// Records every JSON-RPC message the SDK sends ('out') and receives ('in'). Protocol.connect()
// keeps an onmessage handler that is already set and calls it first.
function tapTransport(transport, wire) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    wire.push({ dir: 'out', message });
    return send(message, options);
  };
  transport.onmessage = (message) => {
    wire.push({ dir: 'in', message });
  };
  return transport;
}

// The tools/call requests sent from wire index `from` on, each with its response.
function callsOnWire(wire, from) {
  const out = [];
  for (let i = from; i < wire.length; i++) {
    const { dir, message } = wire[i];
    if (dir === 'out' && message.method === 'tools/call' && message.id !== undefined) {
      const resp = wire.find((w) => w.dir === 'in' && w.message.id === message.id && !('method' in w.message));
      out.push({ request: message, response: resp?.message });
    }
  }
  return out;
}
function elicitationsOnWire(wire, from) {
  return wire.slice(from).filter((w) => w.dir === 'in' && w.message.method === 'elicitation/create');
}

// ---------------------------------------------------------------- judging results

function textOf(r) {
  return (r?.content ?? [])
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n');
}
function echoOf(r) {
  if (isObject(r?.structuredContent)) return r.structuredContent;
  try {
    const v = JSON.parse(textOf(r));
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
const DECLINED = /declin/i;
const CANCELLED = /declin|cancel/i;
const NOTHING_SENT = /nothing (was |has been )?sent|not (been )?sent|was not called|no request/i;

// The elicitation a confirmation asked: form mode (explicit or implied), an empty form, and a
// message naming the method, the resolved URL and the API.
function judgeQuestion(params, { method, url, api, extra = [] }) {
  const problems = [];
  if (!isObject(params)) return [false, `no elicitation params: ${short(params)}`];
  if (params.mode !== undefined && params.mode !== 'form') problems.push(`mode ${params.mode}`);
  const schema = params.requestedSchema;
  if (!isObject(schema) || schema.type !== 'object' || !isObject(schema.properties) || Object.keys(schema.properties).length)
    problems.push(`requestedSchema ${short(schema)} is not an empty form`);
  const message = typeof params.message === 'string' ? params.message : '';
  for (const [what, needle] of [['method', method], ['URL', url], ['API name', api], ...extra]) {
    if (!message.includes(needle)) problems.push(`message lacks the ${what} ${JSON.stringify(needle)}`);
  }
  return [problems.length === 0, `${problems.length ? `${problems.join('; ')}; ` : ''}message ${short(message, 300)}`];
}

// ---------------------------------------------------------------- one suite

let idCounter = 0;
const freshId = (label) => `ts-${label.replace(/[^a-z0-9]+/gi, '-')}-${process.pid}-${++idCounter}`.toLowerCase();

// One SDK × revision × transport: a client with the elicitation capability, then one without.
async function suite({ label, sdk, revision, log, httpbinUrl, makeTransport, accept }) {
  const c = (name) => `${label}: ${name}`;
  const wire = [];
  const transportErrors = [];
  const asked = []; // elicitation params the handler got, in order
  const answers = []; // what it answers next (shifted per elicitation)

  let transport;
  try {
    transport = tapTransport(await makeTransport(), wire);
  } catch (e) {
    fail(c('start'), errText(e));
    return;
  }
  transport.onerror = (e) => transportErrors.push(errText(e));
  const client = sdk.client(ELICIT_CAPS, revision);
  client.onerror = () => {}; // recorded via transport.onerror
  sdk.onElicit(client, async (params) => {
    asked.push(params);
    // An unplanned question is declined: nothing should then be sent.
    return answers.shift() ?? { action: 'decline' };
  });

  // One step: a call whose `body` returns [ok, detail]; a throw is a failure with the wire.
  const step = async (name, body) => {
    const from = wire.length;
    try {
      const [ok, detail] = await withTimeout(body(), STEP_TIMEOUT_MS * 2, name);
      check(c(name), ok, detail);
    } catch (e) {
      const calls = callsOnWire(wire, from).map(({ request, response }) => `sent ${short(request, 300)}; got ${short(response, 300)}`);
      fail(c(name), `${errText(e)}; ${calls.join(' | ') || '(no tools/call on the wire)'}`);
    }
  };

  // Calls `name` with `args` answering `answer` (or nothing) and returns what happened.
  const callAsking = async (name, args, answer) => {
    const askedBefore = asked.length;
    answers.length = 0;
    if (answer) answers.push(answer);
    const from = wire.length;
    const r = await sdk.callTool(client, { name, arguments: args });
    await log.settle();
    return { r, questions: asked.slice(askedBefore), from };
  };

  try {
    try {
      await withTimeout(sdk.connect(client, transport), STEP_TIMEOUT_MS, 'connect');
      if (transport.pid) children.add(transport.pid);
    } catch (e) {
      if (transport.pid) children.add(transport.pid);
      fail(c('connect'), errText(e));
      return;
    }
    const negotiated = sdk.negotiated(client, wire);
    check(c('connect with the elicitation capability'), negotiated === revision, `protocol ${negotiated}, expected ${revision}`);

    await step('tools/list: deletePet destructive, createPet and w_createPet there', async () => {
      const { tools } = await client.listTools(undefined, reqOpts);
      const by = (n) => tools.find((t) => t.name === n);
      const problems = ['listPets', 'createPet', 'deletePet', 'w_createPet', 'w_deletePet'].filter((n) => !by(n)).map((n) => `no ${n}`);
      if (by('deletePet') && by('deletePet').annotations?.destructiveHint !== true)
        problems.push(`deletePet annotations ${short(by('deletePet').annotations)}`);
      return [problems.length === 0, problems.join('; ') || `${tools.length} tools`];
    });

    // -- a confirmed deletePet
    {
      const id = freshId(`${label}-accept`);
      const target = `/anything/pets/${id}`;
      await step('deletePet confirmed (accept): asked once, then sent once', async () => {
        const { r, questions, from } = await callAsking('deletePet', { petId: id }, accept);
        const problems = [];
        let qDetail = '';
        if (questions.length !== 1) problems.push(`${questions.length} elicitations (expected 1)`);
        else {
          const [ok, d] = judgeQuestion(questions[0], { method: 'DELETE', url: `${httpbinUrl}${target}`, api: API });
          qDetail = d;
          if (!ok) problems.push(`question: ${d}`);
        }
        const echo = echoOf(r);
        if (r.isError === true) problems.push(`isError: ${short(textOf(r), 300)}`);
        else if (echo?.method !== 'DELETE' || !String(echo?.url ?? '').endsWith(target))
          problems.push(`result is not httpbin's echo of DELETE ${target}: ${short(r, 300)}`);
        const sent = log.count('DELETE', target);
        if (sent !== 1) problems.push(`httpbin's log shows ${sent} DELETE ${target} (expected 1): ${log.matching(target).join(', ')}`);
        if (revision === '2026-07-28') problems.push(...judgeMrtrWire(wire, from, 'accept'));
        return [problems.length === 0, problems.join('; ') || `echo method ${echo.method}, 1 DELETE in the log; ${qDetail}`];
      });
    }

    // -- declined and cancelled
    for (const [action, done, pattern] of [
      ['decline', 'declined', DECLINED],
      ['cancel', 'cancelled', CANCELLED],
    ]) {
      const id = freshId(`${label}-${action}`);
      const target = `/anything/pets/${id}`;
      await step(`deletePet ${done}: isError, nothing sent`, async () => {
        const { r, questions, from } = await callAsking('deletePet', { petId: id }, { action });
        const problems = [];
        if (questions.length !== 1) problems.push(`${questions.length} elicitations (expected 1)`);
        const text = textOf(r);
        if (r.isError !== true) problems.push(`isError is ${r.isError}`);
        if (!pattern.test(text)) problems.push(`text does not say ${action === 'decline' ? 'declined' : 'declined or cancelled'}`);
        if (!NOTHING_SENT.test(text)) problems.push('text does not say nothing was sent');
        const seen = log.matching(target);
        if (seen.length) problems.push(`httpbin received ${seen.join(', ')}`);
        if (revision === '2026-07-28') problems.push(...judgeMrtrWire(wire, from, action));
        return [problems.length === 0, `${problems.length ? `${problems.join('; ')}; ` : ''}text ${short(text, 200)}`];
      });
    }

    // -- calls that need no confirmation
    await step('createPet (POST) runs without elicitation', async () => {
      const name = freshId(`${label}-create`);
      const before = log.count('POST', '/anything/pets');
      const { r, questions } = await callAsking('createPet', { name, tag: 'dog' });
      const echo = echoOf(r);
      const sent = log.count('POST', '/anything/pets') - before;
      const problems = [];
      if (questions.length) problems.push(`asked ${questions.length}×: ${short(questions[0]?.message, 200)}`);
      if (r.isError === true) problems.push(`isError: ${short(textOf(r), 300)}`);
      else if (echo?.method !== 'POST' || echo?.json?.name !== name) problems.push(`not the echo of the POST: ${short(r, 300)}`);
      if (sent !== 1) problems.push(`httpbin's log shows ${sent} new POST /anything/pets (expected 1)`);
      return [problems.length === 0, problems.join('; ') || `echo method POST, json.name ${name}`];
    });
    await step('listPets (GET) runs without elicitation', async () => {
      const before = log.count('GET', '/anything/pets');
      const { r, questions } = await callAsking('listPets', {});
      const sent = log.count('GET', '/anything/pets') - before;
      const ok = !questions.length && r.isError !== true && echoOf(r)?.method === 'GET' && sent === 1;
      return [ok, `asked ${questions.length}×, isError ${r.isError}, echo method ${echoOf(r)?.method}, ${sent} new GET`];
    });

    // -- confirm = "writes": the POST asks, and the question shows the body, shortened
    await step('w_createPet (confirm = "writes") asks with POST and the body, shortened; accept sends it', async () => {
      const name = freshId(`${label}-writes`);
      const longTag = 'x'.repeat(6000);
      const before = log.count('POST', '/anything/pets');
      const { r, questions } = await callAsking('w_createPet', { name, tag: longTag }, accept);
      const problems = [];
      if (questions.length !== 1) problems.push(`${questions.length} elicitations (expected 1)`);
      else {
        const [ok, d] = judgeQuestion(questions[0], {
          method: 'POST',
          url: `${httpbinUrl}/anything/pets`,
          api: WRITES_API,
          extra: [['body\'s name', name]],
        });
        if (!ok) problems.push(`question: ${d}`);
        const len = questions[0].message?.length ?? 0;
        if (questions[0].message?.includes(longTag)) problems.push(`the message carries the whole 6000-byte body (${len} chars)`);
      }
      const echo = echoOf(r);
      if (r.isError === true) problems.push(`isError: ${short(textOf(r), 300)}`);
      else if (echo?.method !== 'POST' || echo?.json?.name !== name || echo?.json?.tag !== longTag)
        problems.push(`not the echo of the whole POST: ${short(r, 300)}`);
      const sent = log.count('POST', '/anything/pets') - before;
      if (sent !== 1) problems.push(`httpbin's log shows ${sent} new POST /anything/pets (expected 1)`);
      return [problems.length === 0, problems.join('; ') || `message of ${questions[0].message.length} chars: ${short(questions[0].message, 200)}`];
    });

    // -- 2026-07-28 by hand: the requestState is bound, signed and single-use
    if (revision === '2026-07-28') await manualStateChecks({ c, client, log, asked });

    check(c('no transport errors'), transportErrors.length === 0, short(transportErrors.join(' | ')));
  } finally {
    await closeClient(client, transport, c);
  }

  await failClosedSuite({ label, sdk, revision, log, makeTransport });
}

// What the wire shows of one 2026-07-28 call driven by the SDK: an input_required result
// asking `confirm` by elicitation/create with a requestState, then the retry with the answer
// and that requestState echoed; no elicitation/create request on the wire.
function judgeMrtrWire(wire, from, action) {
  const problems = [];
  const calls = callsOnWire(wire, from);
  if (calls.length !== 2) return [`${calls.length} tools/call on the wire (expected 2: the call and its retry)`];
  const first = calls[0].response?.result;
  const state = first?.requestState;
  if (first?.resultType !== 'input_required') problems.push(`first answer is not input_required: ${short(calls[0].response, 300)}`);
  else {
    const q = first.inputRequests?.confirm;
    if (q?.method !== 'elicitation/create' || q?.params?.mode !== 'form')
      problems.push(`inputRequests.confirm is not a form elicitation: ${short(first.inputRequests, 300)}`);
    if (typeof state !== 'string' || !state) problems.push(`requestState ${short(state)}`);
  }
  const retry = calls[1].request.params ?? {};
  if (retry.inputResponses?.confirm?.action !== action || retry.requestState !== state)
    problems.push(`the retry carried ${short({ inputResponses: retry.inputResponses, requestState: retry.requestState }, 300)}`);
  if (elicitationsOnWire(wire, from).length) problems.push('an elicitation/create request came over the wire on 2026-07-28');
  return problems;
}

function tamper(state) {
  const i = Math.floor(state.length / 2);
  const swap = state[i] === 'A' ? 'B' : 'A';
  return state.slice(0, i) + swap + state.slice(i + 1);
}

// The v2 SDK's manual mode hands back the input_required result itself, so the test can
// answer with states the SDK would never send. That is client.request() with
// allowInputRequired: true (callTool() would hold the input_required value against the
// tool's outputSchema and throw "did not return structured content").
const manualCall = (client, params) => client.request({ method: 'tools/call', params }, { ...reqOpts, allowInputRequired: true });

async function manualStateChecks({ c, client, log, asked }) {
  const call = (params) => manualCall(client, params);
  const ask = async (name, args) => {
    const r = await call({ name, arguments: args });
    if (r?.resultType !== 'input_required' || typeof r.requestState !== 'string')
      throw new Error(`not an input_required result with a requestState: ${short(r, 300)}`);
    return r.requestState;
  };
  // Refused with JSON-RPC -32602 and nothing sent for any of `targets`.
  const refused = async (params, targets) => {
    const problems = [];
    let outcome;
    try {
      outcome = `answered ${short(await call(params), 300)}`;
    } catch (e) {
      outcome = errText(e);
      if (e?.code === -32602) outcome = null;
    }
    if (outcome) problems.push(`not refused with -32602: ${outcome}`);
    await log.settle();
    for (const t of targets) {
      const seen = log.matching(t);
      if (seen.length) problems.push(`httpbin received ${seen.join(', ')}`);
    }
    return problems;
  };
  const acceptAnswer = { confirm: { action: 'accept' } };
  const step = async (name, body) => {
    try {
      const problems = await withTimeout(body(), STEP_TIMEOUT_MS * 2, name);
      check(c(`manual: ${name}`), problems.length === 0, problems.join('; '));
    } catch (e) {
      fail(c(`manual: ${name}`), errText(e));
    }
  };
  const askedBefore = asked.length;

  const id = freshId(`${c('m')}`);
  const target = `/anything/pets/${id}`;
  let state;
  await step('first call: input_required with a form elicitation and a requestState', async () => {
    const r = await call({ name: 'deletePet', arguments: { petId: id } });
    const q = r?.inputRequests?.confirm;
    const problems = [];
    if (r?.resultType !== 'input_required') problems.push(`got ${short(r, 300)}`);
    else {
      if (q?.method !== 'elicitation/create' || q?.params?.mode !== 'form') problems.push(`inputRequests ${short(r.inputRequests, 300)}`);
      if (typeof r.requestState !== 'string' || !r.requestState) problems.push(`requestState ${short(r.requestState)}`);
      state = r.requestState;
    }
    return problems;
  });
  if (!state) return;

  await step('retry without inputResponses: a new input_required, nothing sent', async () => {
    const r = await call({ name: 'deletePet', arguments: { petId: id }, requestState: state });
    await log.settle();
    const problems = [];
    if (r?.resultType !== 'input_required') problems.push(`got ${short(r, 300)}`);
    if (log.matching(target).length) problems.push(`httpbin received ${log.matching(target).join(', ')}`);
    return problems;
  });
  await step('tampered requestState: -32602, nothing sent', () =>
    refused({ name: 'deletePet', arguments: { petId: id }, inputResponses: acceptAnswer, requestState: tamper(state) }, [target]));
  await step('requestState for other arguments: -32602, nothing sent', () =>
    refused({ name: 'deletePet', arguments: { petId: `${id}-other` }, inputResponses: acceptAnswer, requestState: state }, [target, `${target}-other`]));
  await step('requestState for another tool (w_deletePet): -32602, nothing sent', () =>
    refused({ name: 'w_deletePet', arguments: { petId: id }, inputResponses: acceptAnswer, requestState: state }, [target]));
  await step('accepted with its requestState: sent once', async () => {
    const r = await call({ name: 'deletePet', arguments: { petId: id }, inputResponses: acceptAnswer, requestState: state });
    await log.settle();
    const problems = [];
    if (r?.resultType === 'input_required' || r?.isError === true || echoOf(r)?.method !== 'DELETE') problems.push(`got ${short(r, 300)}`);
    const sent = log.count('DELETE', target);
    if (sent !== 1) problems.push(`httpbin's log shows ${sent} DELETE ${target} (expected 1)`);
    return problems;
  });
  await step('the accepted requestState replayed: -32602, still one DELETE', async () => {
    const problems = await refused(
      { name: 'deletePet', arguments: { petId: id }, inputResponses: acceptAnswer, requestState: state },
      [],
    );
    const sent = log.count('DELETE', target);
    if (sent !== 1) problems.push(`httpbin's log shows ${sent} DELETE ${target} (expected 1)`);
    return problems;
  });

  const id2 = freshId(`${c('m2')}`);
  const target2 = `/anything/pets/${id2}`;
  await step('declined, then that requestState replayed with accept: -32602, nothing sent', async () => {
    const s2 = await ask('deletePet', { petId: id2 });
    const problems = [];
    const r = await call({ name: 'deletePet', arguments: { petId: id2 }, inputResponses: { confirm: { action: 'decline' } }, requestState: s2 });
    if (r?.isError !== true || !DECLINED.test(textOf(r))) problems.push(`decline got ${short(r, 300)}`);
    problems.push(...(await refused({ name: 'deletePet', arguments: { petId: id2 }, inputResponses: acceptAnswer, requestState: s2 }, [target2])));
    return problems;
  });
  check(c('manual: the SDK\'s elicitation handler was not called in manual mode'), asked.length === askedBefore, `${asked.length - askedBefore} calls`);
}

// A client that declares no elicitation capability: the fail-closed error, nothing sent,
// nothing asked (no elicitation/create, no input_required).
async function failClosedSuite({ label, sdk, revision, log, makeTransport }) {
  const c = (name) => `${label}: ${name}`;
  const wire = [];
  let transport;
  try {
    transport = tapTransport(await makeTransport(), wire);
  } catch (e) {
    fail(c('start (no elicitation)'), errText(e));
    return;
  }
  const client = sdk.client({}, revision);
  client.onerror = () => {};
  try {
    try {
      await withTimeout(sdk.connect(client, transport), STEP_TIMEOUT_MS, 'connect');
      if (transport.pid) children.add(transport.pid);
    } catch (e) {
      if (transport.pid) children.add(transport.pid);
      fail(c('connect without elicitation'), errText(e));
      return;
    }
    const negotiated = sdk.negotiated(client, wire);
    check(c('connect without the elicitation capability'), negotiated === revision, `protocol ${negotiated}, expected ${revision}`);
    const id = freshId(`${label}-noelicit`);
    const target = `/anything/pets/${id}`;
    const from = wire.length;
    try {
      const r = await withTimeout(sdk.callTool(client, { name: 'deletePet', arguments: { petId: id } }), STEP_TIMEOUT_MS, 'deletePet');
      await log.settle();
      const text = textOf(r);
      const problems = [];
      if (r.isError !== true) problems.push(`isError is ${r.isError}`);
      if (!/confirm/i.test(text)) problems.push('text does not say the call needs confirmation');
      if (log.matching(target).length) problems.push(`httpbin received ${log.matching(target).join(', ')}`);
      if (elicitationsOnWire(wire, from).length) problems.push('restmcp sent elicitation/create to a client without the capability');
      if (callsOnWire(wire, from).some(({ response }) => response?.result?.resultType === 'input_required'))
        problems.push('restmcp answered input_required to a client without the capability');
      check(c('deletePet without elicitation: fail-closed isError, nothing sent'), problems.length === 0,
        `${problems.length ? `${problems.join('; ')}; ` : ''}text ${short(text, 200)}`);
    } catch (e) {
      await log.settle().catch(() => {});
      const calls = callsOnWire(wire, from).map(({ request, response }) => `sent ${short(request, 300)}; got ${short(response, 300)}`);
      fail(c('deletePet without elicitation: fail-closed isError, nothing sent'),
        `${errText(e)}; httpbin received ${log.matching(target).join(', ') || 'nothing'}; ${calls.join(' | ')}`);
    }
  } finally {
    await closeClient(client, transport, c);
  }
}

async function closeClient(client, transport, c) {
  const pid = transport?.pid; // stdio: the restmcp the SDK spawned
  let closed = true;
  await withTimeout(client.close(), STEP_TIMEOUT_MS, 'client.close').catch((e) => {
    closed = false;
    fail(c('close'), errText(e));
  });
  if (pid) {
    if (!closed) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    children.delete(pid);
  }
}

// The documented opt-out and the state's expiry, on a server of their own:
//   - without_elicitation = "proceed": a client without elicitation gets deletePet sent;
//   - state_ttl_seconds = 2: a 2026-07-28 requestState accepted after 3.5 s is refused with
//     -32602 and nothing is sent.
async function optOutChecks(httpbinUrl, log, stderrLines) {
  const c = (name) => `opt-out server: ${name}`;
  let server;
  try {
    server = await startServe(httpbinUrl, stderrLines, {
      name: 'confirm-proceed.toml',
      ttl: 2,
      extra: 'without_elicitation = "proceed"\n',
    });
  } catch (e) {
    fail(c('start (state_ttl_seconds = 2, without_elicitation = "proceed")'), errText(e));
    return;
  }
  try {
    for (const [tag, revision] of [
      ['v1', '2025-11-25'],
      ['v2', '2026-07-28'],
    ]) {
      const sdk = SDKS[tag];
      const client = sdk.client({}, revision);
      client.onerror = () => {};
      const transport = sdk.http(server.url);
      const name = `${tag} ${revision} without elicitation, "proceed": deletePet is sent unconfirmed`;
      try {
        await withTimeout(sdk.connect(client, transport), STEP_TIMEOUT_MS, 'connect');
        const id = freshId(`proceed-${tag}`);
        const target = `/anything/pets/${id}`;
        const r = await withTimeout(sdk.callTool(client, { name: 'deletePet', arguments: { petId: id } }), STEP_TIMEOUT_MS, 'deletePet');
        await log.settle();
        const sent = log.count('DELETE', target);
        check(c(name), r.isError !== true && echoOf(r)?.method === 'DELETE' && sent === 1,
          `isError ${r.isError}, echo method ${echoOf(r)?.method}, ${sent} DELETE in the log; ${short(textOf(r), 160)}`);
      } catch (e) {
        fail(c(name), errText(e));
      } finally {
        await withTimeout(client.close(), STEP_TIMEOUT_MS, 'close').catch(() => {});
      }
    }

    const client = SDKS.v2.client(ELICIT_CAPS, '2026-07-28');
    client.onerror = () => {};
    const name = 'v2 2026-07-28: a requestState accepted after its 2 s TTL: -32602, nothing sent';
    try {
      await withTimeout(SDKS.v2.connect(client, SDKS.v2.http(server.url)), STEP_TIMEOUT_MS, 'connect');
      const id = freshId('expired');
      const target = `/anything/pets/${id}`;
      const first = await manualCall(client, { name: 'deletePet', arguments: { petId: id } });
      if (first?.resultType !== 'input_required' || typeof first.requestState !== 'string') {
        fail(c(name), `first call: ${short(first, 300)}`);
      } else {
        await sleep(3_500);
        let outcome;
        try {
          outcome = `answered ${short(
            await manualCall(client, {
              name: 'deletePet',
              arguments: { petId: id },
              inputResponses: { confirm: { action: 'accept' } },
              requestState: first.requestState,
            }),
            300,
          )}`;
        } catch (e) {
          outcome = e?.code === -32602 ? null : errText(e);
        }
        await log.settle();
        const seen = log.matching(target);
        check(c(name), !outcome && !seen.length,
          [outcome && `not refused with -32602: ${outcome}`, seen.length && `httpbin received ${seen.join(', ')}`].filter(Boolean).join('; '));
      }
    } catch (e) {
      fail(c(name), errText(e));
    } finally {
      await withTimeout(client.close(), STEP_TIMEOUT_MS, 'close').catch(() => {});
    }
  } finally {
    await stopChild(server.child);
  }
}

function tail(lines, n = 15) {
  return lines.join('\n').split('\n').filter(Boolean).slice(-n).join('\n    ');
}

// ---------------------------------------------------------------- main

async function main() {
  const t0 = Date.now();
  console.log(`# restmcp: ${BIN}`);
  console.log(`# spec:    ${SPEC}`);
  console.log(`# SDKs:    ${SDKS.v1.tag}, ${SDKS.v2.tag}`);
  if (!existsSync(BIN)) throw new Error(`restmcp binary not found: ${BIN}`);
  if (!existsSync(SPEC)) throw new Error(`spec not found: ${SPEC}`);

  let httpbinUrl;
  let accessLog;
  if (GIVEN_HTTPBIN) {
    if (!GIVEN_ACCESS_LOG) throw new Error('--httpbin needs --access-log FILE (its gunicorn --access-logfile)');
    httpbinUrl = GIVEN_HTTPBIN.replace(/\/+$/, '');
    accessLog = path.resolve(GIVEN_ACCESS_LOG);
  } else {
    accessLog = path.join(workDir, 'httpbin.access.log');
    const hb = await startHttpbin(accessLog);
    httpbinUrl = hb.url;
  }
  const log = new AccessLog(accessLog, httpbinUrl);
  await log.settle(); // the log is where we think it is
  console.log(`# httpbin: ${httpbinUrl}, access log ${accessLog}`);

  // (1) stdio: every client spawns its own restmcp stdio
  const stdioStderr = [];
  const stdioConfig = writeConfig(httpbinUrl, await freePort());
  const stdioTransport = (sdk) => async () => {
    const t = sdk.stdio({
      command: BIN,
      args: ['stdio', '--config', stdioConfig],
      env: restmcpEnv(),
      cwd: workDir,
      stderr: 'pipe',
    });
    t.stderr?.setEncoding('utf8');
    t.stderr?.on('data', (d) => stdioStderr.push(d));
    return t;
  };
  // (2) Streamable HTTP: one restmcp serve, a session (or, on 2026-07-28, none) per client
  const serveStderr = [];
  let serve;
  const httpTransport = (sdk) => async () => {
    if (!serve) serve = await startServe(httpbinUrl, serveStderr);
    return sdk.http(serve.url);
  };

  const plan = [
    ['v1', '2025-11-25', 'stdio', { action: 'accept' }],
    ['v1', '2025-11-25', 'http', { action: 'accept' }],
    ['v2', '2025-11-25', 'stdio', { action: 'accept', content: {} }],
    ['v2', '2025-11-25', 'http', { action: 'accept', content: {} }],
    ['v2', '2025-06-18', 'stdio', { action: 'accept' }],
    ['v2', '2025-06-18', 'http', { action: 'accept' }],
    ['v2', '2026-07-28', 'stdio', { action: 'accept' }],
    ['v2', '2026-07-28', 'http', { action: 'accept' }],
  ];
  for (const [tag, revision, transport, accept] of plan) {
    const sdk = SDKS[tag];
    const label = `${tag} ${transport} ${revision}`;
    const failedBefore = failed;
    const stderrBefore = transport === 'stdio' ? stdioStderr.join('').length : serveStderr.length;
    await suite({
      label,
      sdk,
      revision,
      log,
      httpbinUrl,
      makeTransport: transport === 'stdio' ? stdioTransport(sdk) : httpTransport(sdk),
      accept,
    });
    if (failed > failedBefore) {
      const lines = transport === 'stdio' ? [stdioStderr.join('').slice(stderrBefore)] : serveStderr.slice(stderrBefore);
      console.log(`# --- restmcp ${transport} stderr during ${label} (tail):\n#     ${tail(lines).replace(/\n/g, '\n#')}`);
    }
  }
  if (serve) await stopChild(serve.child);

  // (3) a second restmcp serve: state_ttl_seconds = 2 and without_elicitation = "proceed"
  const optStderr = [];
  const failedBefore = failed;
  await optOutChecks(httpbinUrl, log, optStderr);
  if (failed > failedBefore)
    console.log(`# --- restmcp serve (ttl 2, proceed) stderr (tail):\n#     ${tail(optStderr).replace(/\n/g, '\n#')}`);

  if (failed > 0) {
    console.log(`# httpbin's access log (last 20): ${log.tail(20) || '(empty)'}`);
    keepWorkDir = true;
    writeFileSync(path.join(workDir, 'restmcp-stdio.stderr'), stdioStderr.join(''));
    writeFileSync(path.join(workDir, 'restmcp-serve.stderr'), serveStderr.join('\n'));
    writeFileSync(path.join(workDir, 'httpbin.stderr'), httpbinStderr.join('\n'));
    console.log(`# work directory kept: ${workDir} (confirm.toml, restmcp-*.stderr, httpbin.*)`);
  }
  console.log(`# time: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

let exitCode = 1;
try {
  await main();
  exitCode = failed === 0 && passed > 0 ? 0 : 1;
} catch (e) {
  fail('run', errText(e));
  keepWorkDir = true;
  console.log(`# work directory kept: ${workDir}`);
}
clearTimeout(watchdog);
console.log(`ts-confirm: ${passed} passed, ${failed} failed`);
process.exit(exitCode);
