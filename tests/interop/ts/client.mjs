// Interoperability test: restmcp against the official MCP TypeScript SDK.
//
// Usage: node client.mjs --bin PATH/TO/restmcp --spec PATH/TO/echo-api.yaml
//        (or RESTMCP_BIN / RESTMCP_SPEC in the environment)
//
// Starts a tiny echo upstream on 127.0.0.1 (random port), then drives restmcp
// through the SDK's Client over (1) stdio and (2) Streamable HTTP. Prints one
// line per check and a final line `interop-typescript: N passed, M failed`;
// exits 0 only if every check passed. Nothing here talks to anything but
// 127.0.0.1, and every step has a timeout so the run can never hang.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const STEP_TIMEOUT_MS = 20_000; // any single MCP request, start-up or shutdown
const WATCHDOG_MS = 180_000; // the whole run

// ---------------------------------------------------------------- arguments

function argValue(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const BIN = path.resolve(argValue('--bin') ?? process.env.RESTMCP_BIN ?? 'target/debug/restmcp');
const SPEC = path.resolve(argValue('--spec') ?? process.env.RESTMCP_SPEC ?? 'tests/fixtures/echo-api.yaml');

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

// /_/status/<code> → that status with {"error":"requested status"}
// /_/list          → [1,2,3]
// anything else    → {"method", "path" (raw), "query" (raw or null)}
function startUpstream() {
  const requests = [];
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
      return send(200, { method: req.method, path: rawPath, query: rawQuery });
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ server, url: `http://127.0.0.1:${port}`, requests });
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
    const child = spawn(BIN, ['serve', '--spec', SPEC, '--base-url', baseUrl], {
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
      args: ['stdio', '--spec', SPEC, '--base-url', upstream.url],
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

  for (const close of closers.reverse()) await withTimeout(close(), 5_000, 'cleanup').catch(() => {});

  if (failed > 0) {
    const tail = (lines) => lines.join('').split('\n').filter(Boolean).slice(-15).join('\n    ');
    console.log(`--- restmcp stdio stderr (tail):\n    ${tail(stdioStderr)}`);
    console.log(`--- restmcp serve stderr (tail):\n    ${tail(httpStderr.map((l) => `${l}\n`))}`);
    console.log(`--- upstream requests: ${upstream.requests.join(', ') || '(none)'}`);
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
