// Interoperability test: restmcp against the official MCP TypeScript SDK.
//
// Usage: node client.mjs --bin PATH/TO/restmcp --spec PATH/TO/interop-api.yaml
// (restmcp runs with --max-result-tokens 0: the transports' own size limits are under test
// here, not the result budget, which tests/results covers)
//        (or RESTMCP_BIN / RESTMCP_SPEC in the environment)
//
// Starts a tiny upstream on 127.0.0.1 (random port; the API of
// tests/fixtures/interop-api.yaml), then drives restmcp through the SDK's
// Client over (1) stdio and (2) Streamable HTTP. Prints one line per check and
// a final line `interop-typescript: N passed, M failed`; exits 0 only if every
// check passed. Nothing here talks to anything but 127.0.0.1, and every step
// has a timeout so the run can never hang.
//
// (3) The results matrix: tools whose results are a JSON array, string, number
// and boolean, a body that is XML or JSON by the request's Accept, and a 6.3 MiB
// body over the 4 MiB response cap, called over stdio, Streamable HTTP and the
// legacy SSE transport on every revision restmcp serves, by two official SDKs:
//
//   @modelcontextprotocol/sdk 1.32.2 (v1, what most TypeScript clients run):
//     2025-11-25 only. Its initialize always offers LATEST_PROTOCOL_VERSION
//     (2025-11-25) with no option to offer another, and it predates 2026-07-28,
//     so it cannot drive 2025-06-18 or 2026-07-28.
//   @modelcontextprotocol/client 2.4.0 (v2, the stable line for 2026-07-28):
//     2025-06-18 (supportedProtocolVersions: ['2025-06-18'], which its
//     initialize offers), 2025-11-25 (the default legacy handshake) and
//     2026-07-28 (versionNegotiation mode 'auto': server/discover first).
//
// What a user gets is checked after the SDK's own processing (both validate
// structuredContent against the outputSchema; an SDK that rejects a result is
// restmcp's bug): arrays and scalars as {"result": value} up to 2025-11-25 and
// the bare value on 2026-07-28, with the one text content that same structured
// value serialized; the XML-or-JSON tool as its JSON object; the large body as
// isError with no structuredContent, a prefix of the data and a truncation
// marker, after which another call still works; a 1.3 MiB body (under the cap)
// whole where answers are plain JSON and cut down the same way where they are
// SSE events (legacy SSE), as the Python SDK refuses an event over 1 MiB. Over
// Streamable HTTP both bodies again with a progress callback, so restmcp may
// answer with an SSE stream (initialize sessions do; 2026-07-28 answers plain
// JSON unless a notification had to go first): the 1.3 MiB body must then be
// whole or cut.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import {
  Client as ClientV2,
  SSEClientTransport as SSEClientTransportV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const STEP_TIMEOUT_MS = 20_000; // any single MCP request, start-up or shutdown
const WATCHDOG_MS = 300_000; // the whole run

// ---------------------------------------------------------------- arguments

function argValue(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const BIN = path.resolve(argValue('--bin') ?? process.env.RESTMCP_BIN ?? 'target/debug/restmcp');
const SPEC = path.resolve(argValue('--spec') ?? process.env.RESTMCP_SPEC ?? 'tests/fixtures/interop-api.yaml');

// ---------------------------------------------------------------- bookkeeping

let passed = 0;
let failed = 0;
const children = new Set(); // pids of every process we spawned (or the SDK spawned for us)
const groups = new Set(); // of those, the ones that lead their own process group (restmcp serve)
const closers = []; // async cleanups, run in reverse order
const workDir = mkdtempSync(path.join(os.tmpdir(), 'restmcp-interop-ts-'));

function pass(name, detail = '') {
  passed++;
  console.log(`ok   ${name}${detail ? ` (${detail})` : ''}`);
}
function fail(name, why) {
  failed++;
  console.log(`FAIL ${name}: ${why}`);
}

function withTimeout(promise, ms, label) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${label}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function short(value, max = 600) {
  const s = typeof value === 'string' ? value : JSON.stringify(value);
  return s === undefined ? 'undefined' : s.length > max ? `${s.slice(0, max)}…` : s;
}

function errText(e) {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

function killAll(signal = 'SIGKILL') {
  for (const pid of children) {
    try {
      process.kill(groups.has(pid) ? -pid : pid, signal);
    } catch {
      // already gone
    }
  }
}

process.on('exit', () => {
  killAll('SIGKILL');
  try {
    rmSync(workDir, { recursive: true, force: true });
  } catch {
    // ignore
  }
});
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    console.log(`FAIL run: interrupted by ${sig}`);
    process.exit(1); // 'exit' handler kills the children
  });
}
const watchdog = setTimeout(() => {
  failed++;
  console.log(`FAIL run: watchdog fired after ${WATCHDOG_MS} ms`);
  console.log(`interop-typescript: ${passed} passed, ${failed} failed`);
  process.exit(1);
}, WATCHDOG_MS);

// An environment for restmcp without any RESTMCP_* settings of the caller, so
// only what this test passes (spec, base URL, listen address) is in force.
function childEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('RESTMCP_') && v !== undefined) env[k] = v;
  }
  return { ...env, ...extra };
}

// ---------------------------------------------------------------- upstream

// What the /results operations return (tests/interop/python_client.py returns the same).
const PET = { id: 7, name: 'Rex', status: 'available', tags: ['dog', 'good'] };
const PET_XML =
  '<?xml version="1.0" encoding="UTF-8"?>' +
  '<Pet><id>7</id><name>Rex</name><status>available</status>' +
  '<tags><tag>dog</tag><tag>good</tag></tags></Pet>';
const PETS = [PET, { id: 8, name: 'Tom', status: 'sold', tags: [] }];
const GREETING = 'Hello, "world" \u2014 gr\u00fc\u00dfe \u2603';
const TEMPERATURE = -12.5;
const FLAG = false;
const RECORD_COUNT = 60_000; // listRecords' default, 6.3 MiB: over restmcp's default 4 MiB max_response_bytes
const MEDIUM_COUNT = 12_000; // 1.3 MiB: under that cap, over the 1 MiB the Python SDK takes in one SSE event
function records(count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    out.push({ id: i, name: `record-${String(i).padStart(6, '0')}`, note: 'n'.repeat(64) });
  }
  return out;
}
const recordsTextCache = new Map();
// The listRecords body for `count`, built once: a compact JSON array.
function recordsText(count = RECORD_COUNT) {
  if (!recordsTextCache.has(count)) recordsTextCache.set(count, JSON.stringify(records(count)));
  return recordsTextCache.get(count);
}

// Petstore's choice between its two media types: JSON only when Accept gives
// application/json a higher q than application/xml (the most specific range
// wins, RFC 9110 12.5.1); XML when Accept is missing, */*, or a tie.
function acceptPrefersJson(accept) {
  if (!accept) return false;
  const ranges = [];
  for (const part of accept.split(',')) {
    const [media, ...params] = part.split(';').map((f) => f.trim());
    if (!media) continue;
    let q = 1;
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq > 0 && param.slice(0, eq).trim().toLowerCase() === 'q') {
        const value = Number(param.slice(eq + 1).trim());
        q = Number.isFinite(value) ? value : 0;
      }
    }
    ranges.push([media.toLowerCase(), q]);
  }
  const quality = (media) => {
    for (const candidate of [media, `${media.split('/')[0]}/*`, '*/*']) {
      const qs = ranges.filter(([m]) => m === candidate).map(([, q]) => q);
      if (qs.length) return Math.max(...qs);
    }
    return 0;
  };
  return quality('application/json') > quality('application/xml');
}

// Status, Content-Type and body of a /results request; `petRequests` gets
// [path, Accept as received, media type answered] of each /results/pets/{id}.
function resultsBody(rawPath, rawQuery, accept, petRequests) {
  const json = 'application/json';
  switch (rawPath) {
    case '/results/pets':
      return [200, json, JSON.stringify(PETS)];
    case '/results/greeting':
      return [200, json, JSON.stringify(GREETING)];
    case '/results/temperature':
      return [200, json, JSON.stringify(TEMPERATURE)];
    case '/results/flag':
      return [200, json, JSON.stringify(FLAG)];
    case '/results/records': {
      const count = Number(new URLSearchParams(rawQuery ?? '').get('count') ?? RECORD_COUNT);
      const valid = Number.isInteger(count) ? Math.min(Math.max(count, 1), RECORD_COUNT) : RECORD_COUNT;
      return [200, json, recordsText(valid)];
    }
    default:
      if (rawPath.startsWith('/results/pets/')) {
        if (acceptPrefersJson(accept)) {
          petRequests.push([rawPath, accept, json]);
          return [200, json, JSON.stringify(PET)];
        }
        petRequests.push([rawPath, accept, 'application/xml']);
        return [200, 'application/xml', PET_XML];
      }
      return [404, json, JSON.stringify({ error: 'no such results path' })];
  }
}

// /_/status/<code> → that status with {"error":"requested status"}
// /_/list          → [1,2,3]
// /results/...     → see resultsBody
// anything else    → {"method", "path" (raw), "query" (raw or null)}
function startUpstream() {
  const requests = [];
  const petRequests = [];
  const server = http.createServer((req, res) => {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const rawPath = q >= 0 ? raw.slice(0, q) : raw;
    const rawQuery = q >= 0 ? raw.slice(q + 1) : null;
    requests.push(`${req.method} ${raw}`);
    req.resume();
    req.on('end', () => {
      const send = (status, body) => {
        const text = JSON.stringify(body);
        res.writeHead(status, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
      };
      const m = /^\/_\/status\/(\d{3})$/.exec(rawPath);
      if (m) return send(Number(m[1]), { error: 'requested status' });
      if (rawPath === '/_/list') return send(200, [1, 2, 3]);
      if (rawPath.startsWith('/results/')) {
        const [status, type, text] = resultsBody(rawPath, rawQuery, req.headers.accept, petRequests);
        res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
        return res.end(text);
      }
      return send(200, { method: req.method, path: rawPath, query: rawQuery });
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ server, url: `http://127.0.0.1:${port}`, requests, petRequests });
    });
  });
}

// ---------------------------------------------------------------- wire log

// Records every JSON-RPC message the SDK sends and receives, so a failing
// check can show exactly what went over the wire. Protocol.connect() keeps an
// onmessage handler that is already set and calls it first.
function tapTransport(transport, wire) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    wire.push({ dir: 'sdk->restmcp', message });
    return send(message, options);
  };
  transport.onmessage = (message) => {
    wire.push({ dir: 'restmcp->sdk', message });
  };
  return transport;
}

function exchangeFor(wire, method) {
  // The last request of `method` and its response.
  for (let i = wire.length - 1; i >= 0; i--) {
    const { dir, message } = wire[i];
    if (dir === 'sdk->restmcp' && message.method === method && message.id !== undefined) {
      const resp = wire.find((w) => w.dir === 'restmcp->sdk' && w.message.id === message.id && !('method' in w.message));
      return `sent ${short(message)}; got ${resp ? short(resp.message) : '(no response)'}`;
    }
  }
  return '(no such request on the wire)';
}

// ---------------------------------------------------------------- restmcp serve

async function freePort() {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startHttpServer(baseUrl, stderrLines) {
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawn(BIN, ['serve', '--spec', SPEC, '--base-url', baseUrl, '--max-result-tokens', '0'], {
      cwd: workDir, // no stray config.toml
      env: childEnv({ RESTMCP_SERVER__LISTEN: `127.0.0.1:${port}` }),
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true, // own process group, so anything it starts is killed with it
    });
    children.add(child.pid);
    groups.add(child.pid);
    try {
      const url = await withTimeout(
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
              const m = /MCP over Streamable HTTP at (http:\/\/\S+)/.exec(line);
              if (m) resolve(m[1].replace(/[,.;]$/, ''));
            }
          });
          child.once('exit', (code, signal) =>
            reject(new Error(`restmcp serve exited early (code ${code}, signal ${signal}); stderr: ${short(stderrLines.join(' | '))}`)),
          );
          child.once('error', reject);
        }),
        STEP_TIMEOUT_MS,
        'restmcp serve banner',
      );
      return { child, url };
    } catch (e) {
      lastError = e;
      await stopChild(child);
      // Retry only when restmcp exited by itself (say, the port was taken
      // between probing and binding); a hang is not retried.
      if (!/exited early/.test(e.message)) break;
    }
  }
  throw lastError;
}

async function stopChild(child) {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    try {
      await withTimeout(exited, 5_000, 'restmcp to stop on SIGTERM');
    } catch {
      child.kill('SIGKILL');
      await withTimeout(exited, 5_000, 'restmcp to die on SIGKILL').catch(() => {});
    }
  }
  // Whatever is left in its process group goes too.
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // empty group: nothing left
  }
  children.delete(child.pid);
  groups.delete(child.pid);
}

// ---------------------------------------------------------------- the checks

const reqOpts = { timeout: STEP_TIMEOUT_MS };

async function runSuite(label, upstream, makeTransport, extraChecks) {
  const wire = [];
  const transportErrors = [];
  const c = (name) => `${label}: ${name}`;

  let transport;
  try {
    transport = await makeTransport();
  } catch (e) {
    fail(c('start'), errText(e));
    return;
  }
  tapTransport(transport, wire);
  transport.onerror = (e) => transportErrors.push(errText(e));

  const client = new Client({ name: 'restmcp-interop-ts', version: '1.0.0' });
  client.onerror = () => {}; // recorded via transport.onerror

  try {
    // -- connect (initialize + notifications/initialized)
    try {
      await withTimeout(client.connect(transport, reqOpts), STEP_TIMEOUT_MS, 'connect');
      if (transport.pid) children.add(transport.pid);
      const info = client.getServerVersion();
      pass(c('connect/initialize'), `server ${info?.name} ${info?.version}`);
    } catch (e) {
      if (transport.pid) children.add(transport.pid);
      fail(c('connect/initialize'), `${errText(e)}; ${exchangeFor(wire, 'initialize')}`);
      return; // nothing else can work
    }

    // -- negotiated protocol version
    {
      const initReq = wire.find((w) => w.dir === 'sdk->restmcp' && w.message.method === 'initialize');
      const initResp = initReq && wire.find((w) => w.dir === 'restmcp->sdk' && w.message.id === initReq.message.id);
      const requested = initReq?.message.params?.protocolVersion;
      const negotiated = initResp?.message.result?.protocolVersion;
      const onTransport = 'protocolVersion' in transport ? transport.protocolVersion : negotiated;
      if (requested === LATEST_PROTOCOL_VERSION && negotiated === requested && onTransport === negotiated) {
        pass(c('protocol version'), `requested ${requested}, negotiated ${negotiated}`);
      } else {
        fail(
          c('protocol version'),
          `SDK requested ${requested} (LATEST ${LATEST_PROTOCOL_VERSION}), server answered ${negotiated}, transport uses ${onTransport}`,
        );
      }
    }

    // -- tools/list
    try {
      const { tools } = await client.listTools(undefined, reqOpts);
      const names = tools.map((t) => t.name);
      const missing = ['getItem', 'status', 'list'].filter((n) => !names.includes(n));
      const listTool = tools.find((t) => t.name === 'list');
      if (missing.length) fail(c('tools/list'), `missing ${missing.join(', ')}; got ${names.join(', ')}`);
      else if (!listTool?.outputSchema) fail(c('tools/list'), `tool "list" has no outputSchema: ${short(listTool)}`);
      else pass(c('tools/list'), `${tools.length} tools, list has outputSchema`);
    } catch (e) {
      fail(c('tools/list'), `${errText(e)}; ${exchangeFor(wire, 'tools/list')}`);
    }

    // -- getItem {"id":"7","limit":2}
    try {
      const r = await client.callTool({ name: 'getItem', arguments: { id: '7', limit: 2 } }, undefined, reqOpts);
      const sc = r.structuredContent;
      if (r.isError) fail(c('getItem'), `isError: ${short(r.content)}`);
      else if (sc?.path !== '/echo/items/7' || sc?.query !== 'limit=2' || sc?.method !== 'GET')
        fail(c('getItem'), `structuredContent ${short(sc)}`);
      else pass(c('getItem'), `${sc.method} ${sc.path}?${sc.query}`);
    } catch (e) {
      fail(c('getItem'), `${errText(e)}; ${exchangeFor(wire, 'tools/call')}`);
    }

    // -- list → {"result":[1,2,3]}, validated by the SDK against the outputSchema
    try {
      const validating = typeof client.getToolOutputValidator('list') === 'function';
      const r = await client.callTool({ name: 'list', arguments: {} }, undefined, reqOpts);
      if (!validating) fail(c('list (outputSchema)'), 'SDK has no output validator for "list" (listTools not cached?)');
      else if (r.isError) fail(c('list (outputSchema)'), `isError: ${short(r.content)}`);
      else if (!isDeepStrictEqual(r.structuredContent, { result: [1, 2, 3] }))
        fail(c('list (outputSchema)'), `structuredContent ${short(r.structuredContent)}`);
      else pass(c('list (outputSchema)'), `structuredContent ${short(r.structuredContent)}, SDK-validated`);
    } catch (e) {
      fail(c('list (outputSchema)'), `${errText(e)}; ${exchangeFor(wire, 'tools/call')}`);
    }

    // -- status {"code":404} → tool error mentioning 404
    try {
      const r = await client.callTool({ name: 'status', arguments: { code: 404 } }, undefined, reqOpts);
      const text = (r.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
      if (r.isError !== true) fail(c('status 404'), `isError is ${r.isError}; content ${short(r.content)}`);
      else if (!text.includes('404')) fail(c('status 404'), `text does not mention 404: ${short(text)}`);
      else pass(c('status 404'), `isError, ${short(text.split('\n')[0], 80)}`);
    } catch (e) {
      fail(c('status 404'), `${errText(e)}; ${exchangeFor(wire, 'tools/call')}`);
    }

    // -- getItem {"limit":"x"} → tool error listing the violations (id missing, limit not an integer)
    try {
      const before = upstream.requests.length;
      const r = await client.callTool({ name: 'getItem', arguments: { limit: 'x' } }, undefined, reqOpts);
      const text = (r.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
      const sent = upstream.requests.slice(before);
      if (r.isError !== true) fail(c('invalid arguments'), `isError is ${r.isError}; content ${short(r.content)}`);
      else if (!/\bid\b/.test(text) || !/\blimit\b/.test(text))
        fail(c('invalid arguments'), `text does not name both id and limit: ${short(text)}`);
      else if (sent.length) fail(c('invalid arguments'), `upstream was called anyway: ${sent.join(', ')}`);
      else pass(c('invalid arguments'), short(text.replace(/\s+/g, ' '), 120));
    } catch (e) {
      fail(c('invalid arguments'), `${errText(e)}; ${exchangeFor(wire, 'tools/call')}`);
    }

    if (extraChecks) await extraChecks({ client, transport, wire, c });

    if (transportErrors.length) {
      fail(c('no transport errors'), short(transportErrors.join(' | ')));
    } else {
      pass(c('no transport errors'));
    }
  } finally {
    const pid = transport?.pid; // stdio only: the restmcp child the SDK spawned
    let closed = true;
    await withTimeout(client.close(), STEP_TIMEOUT_MS, 'client.close').catch((e) => {
      closed = false;
      fail(c('close'), errText(e));
    });
    if (pid) {
      // The SDK's close() waits for the child to exit (escalating to SIGKILL);
      // only if that itself timed out is it still ours to kill.
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
}

// ---------------------------------------------------------------- results matrix

const REVISIONS = ['2025-06-18', '2025-11-25', '2026-07-28'];

// The two SDKs behind one interface: which revisions each can speak, its
// transports, and how to make a client that speaks a given revision.
const SDKS = [
  {
    tag: 'v1',
    revisions: ['2025-11-25'],
    stdio: (params) => new StdioClientTransport(params),
    http: (url) => new StreamableHTTPClientTransport(new URL(url)),
    sse: (url) => new SSEClientTransport(new URL(url)),
    client: () => new Client({ name: 'restmcp-interop-ts', version: '1.0.0' }),
    connect: (client, transport) => client.connect(transport, reqOpts),
    // v1 keeps the negotiated version to itself: read it off the wire.
    negotiated: (_client, wire) => {
      const init = wire.find((w) => w.dir === 'sdk->restmcp' && w.message.method === 'initialize');
      const resp = init && wire.find((w) => w.dir === 'restmcp->sdk' && w.message.id === init.message.id);
      return resp?.message.result?.protocolVersion;
    },
    callTool: (client, name, args, opts) => client.callTool({ name, arguments: args }, undefined, opts),
  },
  {
    tag: 'v2',
    revisions: REVISIONS,
    stdio: (params) => new StdioClientTransportV2(params),
    http: (url) => new StreamableHTTPClientTransportV2(new URL(url)),
    sse: (url) => new SSEClientTransportV2(new URL(url)),
    client: (revision) =>
      new ClientV2(
        { name: 'restmcp-interop-ts', version: '1.0.0' },
        revision === '2025-06-18'
          ? { supportedProtocolVersions: ['2025-06-18'] }
          : revision === '2026-07-28'
            ? { versionNegotiation: { mode: 'auto' } }
            : {},
      ),
    connect: (client, transport) => client.connect(transport),
    negotiated: (client) => client.getNegotiatedProtocolVersion(),
    callTool: (client, name, args, opts) => client.callTool({ name, arguments: args }, opts),
  },
];

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// The structuredContent a JSON body must arrive as: objects as they are,
// anything else wrapped as {"result": …} up to 2025-11-25, bare on 2026-07-28.
function shaped(value, revision) {
  return isObject(value) || revision === '2026-07-28' ? value : { result: value };
}

function textBlocks(result) {
  return (result.content ?? []).filter((b) => b.type === 'text').map((b) => b.text);
}

function parseJson(text) {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

// A success whose structuredContent is `value` shaped for `revision`, and
// whose one text content is exactly that structured value, serialized.
function judgeValue(r, value, revision) {
  const expected = shaped(value, revision);
  const blocks = textBlocks(r);
  const text = blocks.length === 1 ? parseJson(blocks[0]) : undefined;
  const ok =
    r.isError !== true &&
    isDeepStrictEqual(r.structuredContent, expected) &&
    text !== undefined &&
    isDeepStrictEqual(text.value, expected);
  let detail = `isError=${r.isError} structuredContent=${short(r.structuredContent, 200)} text=${short(blocks, 200)}`;
  if (!ok) detail += ` (expected both to be ${short(expected, 200)})`;
  return [ok, detail];
}

// isError, no structuredContent, a text that is a prefix of the data (of the
// body as the upstream sent it, or of the text a complete result would have
// had: the structured value serialized) and a text with the truncation marker.
function judgeTruncated(r, count, revision) {
  const wholes = [recordsText(count), JSON.stringify(shaped(records(count), revision))];
  const isData = (t) => wholes.some((whole) => whole.startsWith(t));
  const blocks = textBlocks(r);
  const data = blocks.filter((t) => t.length >= 1024 && isData(t));
  const markers = blocks.filter((t) => /truncated/i.test(t) && !isData(t));
  const ok = r.isError === true && r.structuredContent === undefined && data.length > 0 && markers.length > 0;
  let detail =
    `isError=${r.isError} structuredContent=${short(r.structuredContent, 80)}` +
    ` text blocks of ${blocks.map((t) => t.length).join(', ') || 'none'} chars;` +
    ` data prefix ${data.length ? 'yes' : 'NO'}; marker ${markers.length ? short(markers[0], 160) : 'NONE'}`;
  if (!ok) detail += `; first text ${short(blocks[0] ?? '', 200)}`;
  return [ok, detail];
}

async function callForValue(sdk, client, tool, args, value, revision) {
  return judgeValue(await sdk.callTool(client, tool, args, reqOpts), value, revision);
}

const withProgress = { ...reqOpts, onprogress: () => {} };

// listRecords(count=MEDIUM_COUNT) answers 1.3 MiB of JSON, under the 4 MiB
// cap. framing 'json' (stdio, Streamable HTTP): the whole array. 'sse' (legacy
// SSE, where every answer is an SSE event, which the Python SDK refuses over
// 1 MiB; restmcp cuts by transport, whatever the client): cut down to fit like
// a truncated body. 'progress' (Streamable HTTP, asking for progress: an SSE
// stream if restmcp had to send a notification first, else plain JSON):
// either, and the detail says which.
async function callMedium(sdk, client, revision, framing) {
  const args = { count: MEDIUM_COUNT };
  if (framing === 'json') return callForValue(sdk, client, 'listRecords', args, records(MEDIUM_COUNT), revision);
  const r = await sdk.callTool(client, 'listRecords', args, framing === 'progress' ? withProgress : reqOpts);
  if (framing === 'progress' && r.isError !== true) {
    const [ok, detail] = judgeValue(r, records(MEDIUM_COUNT), revision);
    return [ok, `whole: ${detail}`];
  }
  const [ok, detail] = judgeTruncated(r, MEDIUM_COUNT, revision);
  return [ok, framing === 'progress' ? `cut: ${detail}` : detail];
}

// listRecords answers 6.3 MiB, over the 4 MiB cap: a truncated result with a
// marker; the tool has an outputSchema the truncated JSON cannot be checked
// against, so isError and no structuredContent.
async function callLarge(sdk, client, revision, progress) {
  const r = await sdk.callTool(client, 'listRecords', {}, progress ? withProgress : reqOpts);
  return judgeTruncated(r, RECORD_COUNT, revision);
}

// The session outlived what came before: an ordinary call (an object result,
// the same on every revision) answers.
async function callStillWorks(sdk, client, item) {
  const r = await sdk.callTool(client, 'getItem', { id: item }, reqOpts);
  const sc = r.structuredContent;
  const ok = r.isError !== true && sc?.path === `/echo/items/${item}`;
  return [ok, `isError=${r.isError} structuredContent=${short(sc, 200)}`];
}

// One SDK client speaking `revision` calls the /results tools. `sse`: the
// transport carries every answer as an SSE event (legacy SSE); `progress`: also
// make the calls that ask for progress (Streamable HTTP answers those with an
// SSE stream).
async function runResults(label, sdk, revision, upstream, makeTransport, progress, sse) {
  const wire = [];
  const transportErrors = [];
  const c = (name) => `${label}: ${name}`;
  const step = async (name, body, method = 'tools/call') => {
    const started = Date.now();
    const took = () => `[${((Date.now() - started) / 1000).toFixed(1)} s]`;
    try {
      const [ok, detail] = await withTimeout(body(), STEP_TIMEOUT_MS, name);
      if (ok) pass(c(name), `${took()} ${detail}`);
      else fail(c(name), `${took()} ${detail}`);
    } catch (e) {
      fail(c(name), `${took()} ${errText(e)}; ${exchangeFor(wire, method)}`);
    }
  };

  let transport;
  try {
    transport = await makeTransport();
  } catch (e) {
    fail(c('start'), errText(e));
    return;
  }
  tapTransport(transport, wire);
  transport.onerror = (e) => transportErrors.push(errText(e));
  const client = sdk.client(revision);
  client.onerror = () => {}; // recorded via transport.onerror

  try {
    try {
      await withTimeout(sdk.connect(client, transport), STEP_TIMEOUT_MS, 'connect');
      if (transport.pid) children.add(transport.pid);
    } catch (e) {
      if (transport.pid) children.add(transport.pid);
      fail(c('connect'), `${errText(e)}; ${exchangeFor(wire, 'initialize')}`);
      return;
    }
    const negotiated = sdk.negotiated(client, wire);
    if (negotiated === revision) pass(c('connect'), `protocol ${negotiated}`);
    else fail(c('connect'), `protocol ${negotiated}, expected ${revision}`);

    await step('tools/list', async () => {
      const { tools } = await client.listTools(undefined, reqOpts);
      const wanted = ['listPets', 'getGreeting', 'getTemperature', 'getFlag', 'getPet', 'listRecords'];
      const missing = wanted.filter((n) => !tools.some((t) => t.name === n));
      const noSchema = wanted.filter((n) => tools.some((t) => t.name === n && !t.outputSchema));
      let detail = `${tools.length} tools`;
      if (missing.length) detail += `, missing ${missing}`;
      if (noSchema.length) detail += `, no outputSchema: ${noSchema}`;
      return [!missing.length && !noSchema.length, detail];
    }, 'tools/list');
    await step('array', () => callForValue(sdk, client, 'listPets', {}, PETS, revision));
    await step('string', () => callForValue(sdk, client, 'getGreeting', {}, GREETING, revision));
    await step('number', () => callForValue(sdk, client, 'getTemperature', {}, TEMPERATURE, revision));
    await step('boolean', () => callForValue(sdk, client, 'getFlag', {}, FLAG, revision));
    await step('xml-or-json', async () => {
      const before = upstream.petRequests.length;
      const [ok, detail] = await callForValue(sdk, client, 'getPet', { petId: 7 }, PET, revision);
      const seen = upstream.petRequests.slice(before).at(-1);
      const [accept, answered] = seen ? [seen[1], seen[2]] : [undefined, 'no request'];
      return [ok && answered === 'application/json', `Accept ${JSON.stringify(accept)} got ${answered}; ${detail}`];
    });
    await step('1.3 MiB body', () => callMedium(sdk, client, revision, sse ? 'sse' : 'json'));
    await step('large body', () => callLarge(sdk, client, revision, false));
    await step('after large body', () => callStillWorks(sdk, client, 'after'));
    if (progress) {
      await step('1.3 MiB body, progress', () => callMedium(sdk, client, revision, 'progress'));
      await step('large body, progress', () => callLarge(sdk, client, revision, true));
      await step('after large body, progress', () => callStillWorks(sdk, client, 'after-progress'));
    }
    if (transportErrors.length) fail(c('no transport errors'), short(transportErrors.join(' | ')));
    else pass(c('no transport errors'));
  } finally {
    const pid = transport?.pid;
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
}

// Every SDK × the revisions it speaks × stdio, Streamable HTTP and legacy SSE,
// each on its own restmcp process.
async function resultsMatrix(upstream) {
  recordsText(RECORD_COUNT); // built before any call's clock starts
  recordsText(MEDIUM_COUNT);
  for (const sdk of SDKS) {
    for (const revision of sdk.revisions) {
      const stdioStderr = [];
      const failedBefore = failed;
      await runResults(`results ${sdk.tag} stdio ${revision}`, sdk, revision, upstream, async () => {
        const t = sdk.stdio({
          command: BIN,
          args: ['stdio', '--spec', SPEC, '--base-url', upstream.url, '--max-result-tokens', '0'],
          env: childEnv(),
          cwd: workDir,
          stderr: 'pipe',
        });
        t.stderr?.setEncoding('utf8');
        t.stderr?.on('data', (d) => stdioStderr.push(d));
        return t;
      }, false, false);
      if (failed > failedBefore) console.log(`--- restmcp stdio stderr (tail):\n    ${stderrTail(stdioStderr)}`);

      for (const [transport, progress] of [
        ['http', true],
        ['sse', false],
      ]) {
        const label = `results ${sdk.tag} ${transport} ${revision}`;
        const serveStderr = [];
        let server;
        const failedBefore = failed;
        await runResults(
          label,
          sdk,
          revision,
          upstream,
          async () => {
            server = await startHttpServer(upstream.url, serveStderr);
            return transport === 'http' ? sdk.http(server.url) : sdk.sse(server.url.replace(/\/mcp$/, '/sse'));
          },
          progress,
          transport === 'sse',
        );
        if (server) await stopChild(server.child);
        if (failed > failedBefore) {
          const tail = stderrTail(serveStderr.map((l) => `${l}\n`));
          console.log(`--- restmcp serve stderr (${label}, tail):\n    ${tail}`);
        }
      }
    }
  }
}

function stderrTail(chunks) {
  return chunks.join('').split('\n').filter(Boolean).slice(-15).join('\n    ');
}

// ---------------------------------------------------------------- main

async function main() {
  const t0 = Date.now();
  console.log(`restmcp: ${BIN}`);
  console.log(`spec:    ${SPEC}`);

  const upstream = await startUpstream();
  closers.push(() => new Promise((r) => upstream.server.close(() => r())));
  upstream.server.unref();
  console.log(`upstream: ${upstream.url}; SDK protocol version ${LATEST_PROTOCOL_VERSION}`);

  // (1) stdio
  const stdioStderr = [];
  await runSuite('stdio', upstream, async () => {
    const t = new StdioClientTransport({
      command: BIN,
      args: ['stdio', '--spec', SPEC, '--base-url', upstream.url, '--max-result-tokens', '0'],
      env: childEnv(),
      cwd: workDir,
      stderr: 'pipe',
    });
    t.stderr?.setEncoding('utf8');
    t.stderr?.on('data', (d) => stdioStderr.push(d));
    return t;
  });

  // (2) Streamable HTTP
  const httpStderr = [];
  let server;
  const httpLog = []; // one line per HTTP exchange the SDK made
  const loggingFetch = async (input, init) => {
    const method = init?.method ?? 'GET';
    try {
      const res = await fetch(input, init);
      httpLog.push(`${method} ${res.status} ${res.headers.get('content-type') ?? '-'}`);
      return res;
    } catch (e) {
      httpLog.push(`${method} failed: ${errText(e)}`);
      throw e;
    }
  };
  await runSuite(
    'http',
    upstream,
    async () => {
      server = await startHttpServer(upstream.url, httpStderr);
      return new StreamableHTTPClientTransport(new URL(server.url), { fetch: loggingFetch });
    },
    async ({ transport, c }) => {
      // A session id is optional in Streamable HTTP: informational only.
      console.log(`info ${c('session')}: ${transport.sessionId ? 'Mcp-Session-Id issued' : 'stateless, no Mcp-Session-Id'}`);
      // Ending the session with DELETE (the SDK accepts 2xx and 405).
      if (transport.sessionId) {
        try {
          await withTimeout(transport.terminateSession(), STEP_TIMEOUT_MS, 'terminateSession');
          const del = httpLog.filter((l) => l.startsWith('DELETE ')).at(-1) ?? '?';
          pass(c('terminate session (DELETE)'), del);
        } catch (e) {
          fail(c('terminate session (DELETE)'), errText(e));
        }
      }
    },
  );
  console.log(`info http: exchanges made by the SDK: ${httpLog.join(', ') || '(none)'}`);
  if (server) {
    await stopChild(server.child);
    const stopped = server.child.exitCode === 0 || server.child.signalCode === 'SIGTERM';
    if (stopped) pass('http: restmcp stops on SIGTERM', `exit ${server.child.exitCode ?? server.child.signalCode}`);
    else fail('http: restmcp stops on SIGTERM', `exit code ${server.child.exitCode}, signal ${server.child.signalCode}`);
  }

  // (3) the results matrix
  await resultsMatrix(upstream);

  for (const close of closers.reverse()) await withTimeout(close(), 5_000, 'cleanup').catch(() => {});

  if (failed > 0) {
    const tail = (lines) => lines.join('').split('\n').filter(Boolean).slice(-15).join('\n    ');
    console.log(`--- restmcp stdio stderr (tail):\n    ${tail(stdioStderr)}`);
    console.log(`--- restmcp serve stderr (tail):\n    ${tail(httpStderr.map((l) => `${l}\n`))}`);
    console.log(`--- upstream requests (last 40): ${upstream.requests.slice(-40).join(', ') || '(none)'}`);
  }
  console.log(`time: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

let exitCode = 1;
try {
  await main();
  exitCode = failed === 0 && passed > 0 ? 0 : 1;
} catch (e) {
  fail('run', errText(e));
  exitCode = 1;
}
clearTimeout(watchdog);
console.log(`interop-typescript: ${passed} passed, ${failed} failed`);
process.exit(exitCode);
