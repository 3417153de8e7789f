// Long-running operations past their call with the official MCP TypeScript
// SDK: the status-tool walk, briefly. Run by python_operations.py (which starts the upstream,
// tests/results/app.py, and restmcp W, no time limit, and T, `tool_timeouts.startReport = 1`):
//
//   node ts_operations.mjs --t URL --w URL     (cwd: tests/interop/ts, with its node_modules)
//
// For @modelcontextprotocol/sdk 1.32.2 at 2025-11-25 and @modelcontextprotocol/client 2.4.0 at
// 2026-07-28 (versionNegotiation 'auto'), over Streamable HTTP: T lists operation_status; a
// startReport running 2.5 s is isError past T's time limit with a handle; operation_status with
// it says running (structuredContent {status: "running", running: true, handle,
// retryAfterSeconds: 1}); once the report ended it gives the result a waited call of the same
// report on W gave (content, structuredContent, isError); an altered handle is isError
// `Unknown operation handle`.
// Output: one JSON line per check, {"check": name, "ok": bool, "detail": text}, which
// python_operations.py prints as its own `ok N - typescript ...` lines; exit 0 when the script
// ran to its end (1 on an exception, itself reported as a failed check).

import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { pathToFileURL } from 'node:url';

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || !process.argv[i + 1]) throw new Error(`usage: node ts_operations.mjs --t URL --w URL (missing --${name})`);
  return process.argv[i + 1];
};
const urls = { t: arg('t'), w: arg('w') };

// The SDKs of tests/interop/ts (this file lives elsewhere, and ESM ignores NODE_PATH).
const modules = path.resolve(process.cwd(), 'node_modules', '@modelcontextprotocol');
const load = (file) => import(pathToFileURL(path.join(modules, file)).href);
const v1 = await load('sdk/dist/esm/client/index.js');
const v1http = await load('sdk/dist/esm/client/streamableHttp.js');
const v2 = await load('client/dist/index.mjs');

const TOOL = 'startReport';
const reqOpts = { timeout: 20000 };
const HANDLE = /handle "([^"]+)"/;

function check(name, ok, detail = '') {
  process.stdout.write(JSON.stringify({ check: name, ok: Boolean(ok), detail: ok ? '' : String(detail) }) + '\n');
  return Boolean(ok);
}

const short = (value, n = 800) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length <= n ? text : `${text.slice(0, n)}... (${text.length} chars)`;
};
const texts = (result) => (result.content ?? []).filter((b) => b.type === 'text').map((b) => b.text);
const wire = (r) => ({ content: r.content, structuredContent: r.structuredContent, isError: Boolean(r.isError) });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const SDKS = [
  {
    label: '@modelcontextprotocol/sdk 1.32.2 at 2025-11-25',
    revision: '2025-11-25',
    connect: async (url) => {
      const transport = new v1http.StreamableHTTPClientTransport(new URL(url));
      const client = new v1.Client({ name: 'restmcp-operations-ts', version: '1.0.0' });
      await client.connect(transport, reqOpts);
      return { client, version: transport.protocolVersion };
    },
    call: (client, name, args) => client.callTool({ name, arguments: args }, undefined, reqOpts),
  },
  {
    label: '@modelcontextprotocol/client 2.4.0 at 2026-07-28',
    revision: '2026-07-28',
    connect: async (url) => {
      const client = new v2.Client({ name: 'restmcp-operations-ts', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new v2.StreamableHTTPClientTransport(new URL(url)));
      return { client, version: client.getNegotiatedProtocolVersion() };
    },
    call: (client, name, args) => client.callTool({ name, arguments: args }, reqOpts),
  },
];

async function walk(sdk) {
  const label = sdk.label;
  const title = `ts-${sdk.revision}`;
  const t = await sdk.connect(urls.t);
  const w = await sdk.connect(urls.w);
  try {
    check(`${label}: connected at ${sdk.revision}`, t.version === sdk.revision && w.version === sdk.revision,
      `T ${t.version}, W ${w.version}`);
    const names = (await t.client.listTools(undefined, reqOpts)).tools.map((tool) => tool.name);
    check(`${label}: T lists operation_status`, names.includes('operation_status') && names.includes(TOOL), short(names));

    const waited = await sdk.call(w.client, TOOL, { polls: 1, seconds: 0, retry_after: '0.2', title });
    check(`${label}: W: a waited call gives the finished status`,
      !waited.isError && isDeepStrictEqual(waited.structuredContent, { status: 'succeeded', report: { title, rows: 1000 } }),
      short(waited));

    const began = Date.now();
    const first = await sdk.call(t.client, TOOL, { polls: 0, seconds: 2.5, retry_after: '1', title });
    const handle = HANDLE.exec(texts(first).join(' '))?.[1];
    if (!check(`${label}: T: past the time limit an isError result with a handle for operation_status`,
      first.isError === true && handle && texts(first).join(' ').includes('Call operation_status with handle'), short(first))) {
      return;
    }
    const running = await sdk.call(t.client, 'operation_status', { handle });
    check(`${label}: T: operation_status says running, structured {status, running, handle, retryAfterSeconds}`,
      !running.isError && isDeepStrictEqual(running.structuredContent, { status: 'running', running: true, handle, retryAfterSeconds: 1 })
        && texts(running).join(' ').startsWith('The operation is still running'), short(running));
    await sleep(Math.max(0, began + 2900 - Date.now()));
    const done = await sdk.call(t.client, 'operation_status', { handle });
    check(`${label}: T: once the report ended, operation_status gives the waited call's result`,
      isDeepStrictEqual(wire(done), wire(waited)), `status tool: ${short(wire(done))}\nwaited: ${short(wire(waited))}`);
    const i = handle.length - 6;
    const altered = handle.slice(0, i) + (handle[i] === 'A' ? 'B' : 'A') + handle.slice(i + 1);
    const refused = await sdk.call(t.client, 'operation_status', { handle: altered });
    check(`${label}: T: an altered handle is isError \`Unknown operation handle\``,
      refused.isError === true && texts(refused).join(' ').startsWith('Unknown operation handle'), short(refused));
  } finally {
    await t.client.close().catch(() => {});
    await w.client.close().catch(() => {});
  }
}

let status = 0;
for (const sdk of SDKS) {
  try {
    await walk(sdk);
  } catch (e) {
    check(`${sdk.label}: the walk ran to its end`, false, e?.stack ?? String(e));
    status = 1;
  }
}
process.exit(status);
