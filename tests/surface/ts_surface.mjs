// Resources, subscriptions, prompts and completions through the official MCP TypeScript SDKs.
// Run by python_surface.py, which starts the upstream (tests/surface/app.py) and `restmcp serve`
// with tests/surface/config.toml:
//
//   node ts_surface.mjs --url URL/mcp --sse URL/sse --app UPSTREAM --bin RESTMCP --config CONFIG
//   (cwd: tests/interop/ts, with its node_modules)
//
// Five clients: @modelcontextprotocol/sdk 1.32.2 at 2025-11-25 over stdio, Streamable HTTP
// (initialize, a session) and legacy SSE; @modelcontextprotocol/client 2.4.0 at 2026-07-28
// (versionNegotiation 'auto') over stdio and Streamable HTTP. Each one lists the resources and
// templates; reads a note (text, application/json), a badge (blob, image/png), a priority;
// gets "resource not found" for an unknown URI (-32002 up to 2025-11-25, -32602 with data.uri on
// 2026-07-28); gets review_note (the note embedded as a resource) and badge_of (image content
// from the operation's image/png answer); without the required noteId gets -32602 (2025-11-25)
// or, on 2026-07-28, an input_required the SDK fulfils through its elicitation handler before
// the retry completes; completes a prompt argument and a template variable from an enum and from
// a list tool; subscribes to a note of its own (resources/subscribe, or subscriptions/listen with
// resourceSubscriptions on 2026-07-28): nothing while it does not change, one
// notifications/resources/updated after a PUT upstream, nothing after unsubscribe (or closing
// the listen), the polling stopped, and the upstream's log shows the polls after the first
// conditional (If-None-Match) and answered 304 until the change.
// Output: one JSON line per check, {"check": name, "ok": bool, "detail": text}, which
// python_surface.py prints as its own `ok N - typescript ...` lines; exit 0 when the script ran
// to its end (1 on an exception, itself reported as a failed check).

import path from 'node:path';
import { pathToFileURL } from 'node:url';

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || !process.argv[i + 1]) throw new Error(`usage: node ts_surface.mjs --url URL --sse URL --app URL --bin PATH --config PATH (missing --${name})`);
  return process.argv[i + 1];
};
const URLS = { mcp: arg('url'), sse: arg('sse'), app: arg('app') };
const BIN = arg('bin');
const CONFIG = arg('config');

// The SDKs of tests/interop/ts (this file lives elsewhere, and ESM ignores NODE_PATH).
const modules = path.resolve(process.cwd(), 'node_modules', '@modelcontextprotocol');
const load = (file) => import(pathToFileURL(path.join(modules, file)).href);
const v1 = await load('sdk/dist/esm/client/index.js');
const v1http = await load('sdk/dist/esm/client/streamableHttp.js');
const v1sse = await load('sdk/dist/esm/client/sse.js');
const v1stdio = await load('sdk/dist/esm/client/stdio.js');
const v1types = await load('sdk/dist/esm/types.js');
const v2 = await load('client/dist/index.mjs');
const v2stdio = await load('client/dist/stdio.mjs');

const STEP = 20000;
const reqOpts = { timeout: STEP };
const QUIET_MS = 3200; // three polls at poll_seconds = 1
const UPDATE_WAIT_MS = 8000;
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const TEMPLATES = ['notes://notes/{noteId}', 'notes://badges/{noteId}', 'notes://priorities/{priority}'];
const INFO = { name: 'restmcp-surface-ts', version: '1.0.0' };
const ELICIT_CAPS = { elicitation: { form: {} } };

function check(name, ok, detail = '') {
  process.stdout.write(JSON.stringify({ check: name, ok: Boolean(ok), detail: ok ? '' : String(detail) }) + '\n');
  return Boolean(ok);
}
const short = (value, n = 800) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text === undefined ? String(value) : text.length <= n ? text : `${text.slice(0, n)}... (${text.length} chars)`;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const errorOf = async (action) => {
  try {
    return { none: await action() };
  } catch (e) {
    return { code: e.code, message: e.message, data: e.data };
  }
};

async function changeNote(id, text) {
  const r = await fetch(`${URLS.app}/notes/${id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text }) });
  if (!r.ok) throw new Error(`PUT /notes/${id}: ${r.status}`);
}
async function upstreamLog() {
  const r = await fetch(`${URLS.app}/_log`);
  return r.json();
}

const stdioParams = {
  command: BIN,
  args: ['stdio', '--config', CONFIG],
  env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', RESTMCP_APIS__NOTES__BASE_URL: URLS.app },
  stderr: 'ignore',
};

// Each client: how it connects, and the calls whose signatures differ between the SDKs.
const V1 = {
  revision: '2025-11-25',
  make: () => new v1.Client(INFO, { capabilities: ELICIT_CAPS }),
  onElicit: (client, fn) => client.setRequestHandler(v1types.ElicitRequestSchema, (request) => fn(request.params)),
  onUpdated: (client, fn) => client.setNotificationHandler(v1types.ResourceUpdatedNotificationSchema, (n) => fn(n.params.uri)),
  connect: (client, transport) => client.connect(transport, reqOpts),
  // v1 keeps the negotiated version nowhere public: the initialize result, seen on the wire.
  negotiated: (_client, transport) => transport.seenVersion,
  read: (client, uri) => client.readResource({ uri }, reqOpts),
};
const V2 = {
  revision: '2026-07-28',
  make: () => new v2.Client(INFO, { capabilities: ELICIT_CAPS, versionNegotiation: { mode: 'auto' } }),
  onElicit: (client, fn) => client.setRequestHandler('elicitation/create', (request) => fn(request.params)),
  onUpdated: (client, fn) => client.setNotificationHandler('notifications/resources/updated', (n) => fn(n.params.uri)),
  connect: (client, transport) => client.connect(transport),
  negotiated: (client) => client.getNegotiatedProtocolVersion(),
  read: (client, uri) => client.readResource({ uri }, { ...reqOpts, cacheMode: 'bypass' }),
};
const CLIENTS = [
  { label: 'v1 1.32.2 stdio 2025-11-25', sdk: V1, transport: () => new v1stdio.StdioClientTransport(stdioParams) },
  { label: 'v1 1.32.2 Streamable HTTP 2025-11-25', sdk: V1, transport: () => new v1http.StreamableHTTPClientTransport(new URL(URLS.mcp)) },
  { label: 'v1 1.32.2 legacy SSE 2025-11-25', sdk: V1, transport: () => new v1sse.SSEClientTransport(new URL(URLS.sse)) },
  { label: 'v2 2.4.0 stdio 2026-07-28', sdk: V2, transport: () => new v2stdio.StdioClientTransport(stdioParams) },
  { label: 'v2 2.4.0 Streamable HTTP 2026-07-28', sdk: V2, transport: () => new v2.StreamableHTTPClientTransport(new URL(URLS.mcp)) },
];

async function reads(label, sdk, client) {
  const newest = sdk.revision === '2026-07-28';
  const uris = (await client.listResources(undefined, reqOpts)).resources.map((r) => r.uri);
  check(`${label}: resources/list gives notes://notes`, uris.includes('notes://notes'), short(uris));
  const templates = (await client.listResourceTemplates(undefined, reqOpts)).resourceTemplates.map((t) => t.uriTemplate);
  check(`${label}: resources/templates/list gives the three templates`, TEMPLATES.every((t) => templates.includes(t)), short(templates));

  const alpha = (await sdk.read(client, 'notes://notes/alpha')).contents;
  const body = alpha.length === 1 && alpha[0].text ? JSON.parse(alpha[0].text) : {};
  check(`${label}: read notes://notes/alpha: text, application/json, the note`,
    body.id === 'alpha' && body.text === 'Buy milk.' && alpha[0].mimeType === 'application/json', short(alpha));
  const badge = (await sdk.read(client, 'notes://badges/alpha')).contents;
  const bytes = badge.length === 1 && badge[0].blob ? Buffer.from(badge[0].blob, 'base64') : Buffer.alloc(0);
  check(`${label}: read notes://badges/alpha: a blob, image/png, a PNG`,
    bytes.subarray(0, 8).equals(PNG) && badge[0].mimeType === 'image/png', short(badge, 300));
  const urgent = (await sdk.read(client, 'notes://priorities/urgent')).contents;
  const ids = urgent.length === 1 && urgent[0].text ? JSON.parse(urgent[0].text).map((n) => n.id) : [];
  check(`${label}: read notes://priorities/urgent: bravo`, short(ids) === '["bravo"]', short(urgent));

  for (const uri of ['notes://nothing/here', 'notes://notes/zulu']) {
    const e = await errorOf(() => sdk.read(client, uri));
    const ok = newest ? e.code === -32602 && e.data?.uri === uri : e.code === -32002;
    check(`${label}: read ${uri}: resource not found, ${newest ? '-32602 with data.uri' : '-32002'}`, ok, short(e));
  }
}

async function prompts(label, sdk, client, asked) {
  const listed = (await client.listPrompts(undefined, reqOpts)).prompts;
  const review = listed.find((p) => p.name === 'review_note');
  check(`${label}: prompts/list gives review_note(noteId required, tone) and badge_of`,
    listed.some((p) => p.name === 'badge_of') && review?.arguments?.find((a) => a.name === 'noteId')?.required === true,
    short(listed));

  let got = await client.getPrompt({ name: 'review_note', arguments: { noteId: 'alpha', tone: 'brief' } }, reqOpts);
  const kinds = got.messages.map((m) => m.content.type);
  const embedded = got.messages[1]?.content?.resource;
  check(`${label}: prompts/get review_note: the text filled in, then the note embedded as a resource`,
    short(kinds) === '["text","resource"]' && got.messages[0].content.text.includes('brief review of note alpha')
      && embedded?.uri === 'notes://notes/alpha' && JSON.parse(embedded.text).text === 'Buy milk.', short(got));

  got = await client.getPrompt({ name: 'badge_of', arguments: { noteId: 'bravo' } }, reqOpts);
  const image = got.messages.at(-1)?.content;
  check(`${label}: prompts/get badge_of: the operation's image/png answer is image content`,
    image?.type === 'image' && image.mimeType === 'image/png' && Buffer.from(image.data, 'base64').subarray(0, 8).equals(PNG),
    short(got, 400));

  if (sdk.revision === '2026-07-28') {
    asked.length = 0;
    got = await client.getPrompt({ name: 'review_note', arguments: { tone: 'detailed' } }, reqOpts);
    const schema = asked[0]?.requestedSchema ?? {};
    check(`${label}: prompts/get review_note without noteId: input_required asks for it (the elicitation handler), the retry completes`,
      asked.length === 1 && 'noteId' in (schema.properties ?? {}) && got.messages.at(-1)?.content?.resource?.uri === 'notes://notes/charlie',
      `asked ${short(asked)}; got ${short(got)}`);
  } else {
    const e = await errorOf(() => client.getPrompt({ name: 'review_note', arguments: { tone: 'brief' } }, reqOpts));
    check(`${label}: prompts/get review_note without noteId: -32602 naming it`, e.code === -32602 && /noteId/.test(e.message), short(e));
  }
}

async function completions(label, client) {
  const prompt = { type: 'ref/prompt', name: 'review_note' };
  const cases = [
    ['prompt argument tone (enum), "b"', prompt, 'tone', 'b', ['brief']],
    ['prompt argument noteId (list tool), "a"', prompt, 'noteId', 'a', ['alpha']],
    ['template variable {priority} (the parameter\'s enum), "u"', { type: 'ref/resource', uri: 'notes://priorities/{priority}' }, 'priority', 'u', ['urgent']],
    ['template variable {noteId} (list tool), "b"', { type: 'ref/resource', uri: 'notes://notes/{noteId}' }, 'noteId', 'b', ['bravo']],
  ];
  for (const [name, ref, argument, value, want] of cases) {
    const got = await client.complete({ ref, argument: { name: argument, value } }, reqOpts);
    check(`${label}: complete ${name}: ${short(want)}`, short(got.completion.values) === short(want), short(got));
  }
}

async function subscription(label, sdk, client, updates, slug) {
  const uri = `notes://notes/${slug}`;
  const p = `/notes/${slug}`;
  await changeNote(slug, 'first');
  const since = (t) => updates.filter((u) => u.at >= t && u.uri === uri);
  let listen;
  if (sdk.revision === '2026-07-28') {
    listen = await client.listen({ resourceSubscriptions: [uri] }, reqOpts);
    check(`${label}: subscriptions/listen acknowledged resourceSubscriptions [${uri}]`,
      short(listen.honoredFilter.resourceSubscriptions) === short([uri]), short(listen.honoredFilter));
  } else {
    await client.subscribeResource({ uri }, reqOpts);
  }
  const t0 = Date.now();
  await sleep(QUIET_MS);
  check(`${label}: subscribed to ${uri}: nothing while it does not change`, since(t0).length === 0, short(updates));
  const t1 = Date.now();
  await changeNote(slug, 'second');
  for (let waited = 0; waited < UPDATE_WAIT_MS && since(t1).length === 0; waited += 100) await sleep(100);
  check(`${label}: the upstream changed (PUT): notifications/resources/updated for ${uri}`, since(t1).length >= 1, short(updates));
  const read = (await sdk.read(client, uri)).contents;
  check(`${label}: a read after the update gives the new text`, read[0]?.text && JSON.parse(read[0].text).text === 'second', short(read));
  await sleep(1500);
  check(`${label}: one update for one change`, since(t1).length === 1, short(updates));

  if (listen) await listen.close();
  else await client.unsubscribeResource({ uri }, reqOpts);
  const t2 = Date.now();
  await sleep(500);
  const gets = async () => (await upstreamLog()).filter((e) => e.path === p && e.method === 'GET');
  const before = (await gets()).length;
  await changeNote(slug, 'third');
  await sleep(QUIET_MS);
  const log = await gets();
  check(`${label}: after ${listen ? 'closing the listen' : 'unsubscribe'}, a change sends nothing and the polling stops`,
    since(t2).length === 0 && log.length === before, `updates ${short(updates)}; ${log.length - before} GETs of ${p} after`);
  const v1 = log.filter((e) => e.if_none_match === `"${slug}-v1"`);
  const v2 = log.filter((e) => e.if_none_match === `"${slug}-v2"`);
  const unconditional = log.filter((e) => !e.if_none_match);
  check(`${label}: upstream log: the first poll unconditional, every later one with If-None-Match, 304 until the change, then 200 once`,
    log.length > 0 && !log[0].if_none_match && log[0].status === 200 && unconditional.length <= 2
      && v1.length >= 3 && v1.slice(0, -1).every((e) => e.status === 304) && v1.at(-1).status === 200
      && v2.every((e) => e.status === 304),
    short(log.map((e) => [e.if_none_match, e.status]), 1200));
}

async function run({ label, sdk, transport: makeTransport }) {
  const client = sdk.make();
  const asked = [];
  const updates = [];
  sdk.onElicit(client, async (params) => {
    asked.push(params);
    return { action: 'accept', content: { noteId: 'charlie' } };
  });
  sdk.onUpdated(client, (uri) => updates.push({ at: Date.now(), uri }));
  const transport = makeTransport();
  // Protocol.connect() keeps an onmessage handler that is already set and calls it first.
  transport.onmessage = (message) => {
    if (message?.result?.protocolVersion) transport.seenVersion = message.result.protocolVersion;
  };
  await sdk.connect(client, transport);
  try {
    const version = sdk.negotiated(client, transport);
    check(`${label}: connected at ${sdk.revision}`, version === sdk.revision, `negotiated ${version}`);
    await reads(label, sdk, client);
    await prompts(label, sdk, client, asked);
    await completions(label, client);
    await subscription(label, sdk, client, updates, `ts-${label.replace(/[^A-Za-z0-9]+/g, '-').toLowerCase()}`);
  } finally {
    await client.close().catch(() => {});
  }
}

let status = 0;
for (const c of CLIENTS) {
  try {
    await run(c);
  } catch (e) {
    check(`${c.label}: ran to its end`, false, e?.stack ?? String(e));
    status = 1;
  }
}
process.exit(status);
