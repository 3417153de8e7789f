// The Prism suite's driver: every tool of every spec called against Stoplight Prism, which
// validates each request against the same API description. tests/world/run-prism.sh installs
// the pinned tools and starts this file; see that script for the usage and the output.
//
// Per spec:
//   1. `prism mock` serves the spec on a loopback port (static answers: the spec's examples).
//   2. A relay of this file's own stands between restmcp and Prism and passes every exchange
//      on unchanged, except the body of a non-2xx answer that is not a problem report of
//      Prism's own. Prism answers an invalid request with the 422 or 400 response the
//      description documents, when there is one, and then says why only in its
//      `sl-violations` header; and it answers a valid request with a documented non-2xx
//      when the operation documents no 2xx (a 302, say). The relay writes the verdict into
//      the body: a problem listing the violations, or one that says "Prism: the request is
//      valid". Prism's own problem answers (422 with `validation`, 401, 404, 405, 406, 415)
//      already say why. A redirect's Location is dropped (restmcp would follow a
//      same-origin one into a path Prism made up). The relay logs every exchange, with what
//      restmcp sent for the requests Prism rejected.
//   3. A config.toml names the spec, the relay as base_url (timeout 120 s: Prism takes
//      seconds on Kubernetes-sized schemas) and, for each security scheme the spec
//      declares, dummy credentials (Prism checks that credentials are present, not what
//      they are); OAuth 2.0 schemes get their tokens from a token endpoint of this file's own.
//   4. `restmcp selftest --live --json --transport http --concurrency 4` calls every tool
//      with arguments generated from its inputSchema (over one transport: the request is
//      built by the same code over both; Prism serves one request at a time), and each
//      call is judged:
//        ok          the call succeeded
//        rejected    4xx: Prism found the request restmcp built invalid      → FAILS the run
//        restmcp     no request or no answer (arguments refused, credentials
//                    missing, connection failed, timed out, listing differs) → FAILS the run
//        documented  Prism answered a documented non-2xx to a valid request  → fine
//        response    Prism's 2xx answer (the spec's own example, mostly) does
//                    not match the tool's outputSchema                        → reported
//        prism       5xx from Prism itself (no serializer for a media type)  → reported
//   5. Cases listed in tests/world/prism-known.yaml (each with the clause that shows it, or
//      the fix of restmcp under way) do not fail the run, and a spec listed
//      with `skip` is not run; a listed case that no longer happens fails the run, so the
//      list stays true.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const yaml = require('js-yaml');

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');

// ---------------------------------------------------------------------------------------
// Settings

const args = parseArgs(process.argv.slice(2));
const bin = path.resolve(root, args.bin ?? 'target/debug/restmcp');
const sharedDir = path.resolve(root, args.shared ?? '../shared/specs');
const knownFile = path.resolve(root, args.known ?? 'tests/world/prism-known.yaml');
const results = path.resolve(root, args.results ?? 'target/world/prism');
const transport = args.transport ?? 'http';
const only = args.only ?? [];
const prismCli = path.join(here, 'node_modules/@stoplight/prism-cli/dist/index.js');

const PRISM_START_TIMEOUT_MS = 300_000; // GitHub's 13 MB description loads in ~15 s
const SELFTEST_TIMEOUT_MS = 1_800_000;
// Prism answers one request at a time: more in flight only makes each wait longer.
const CONCURRENCY = 4;
const PARALLEL_SPECS = 2;
const VALID_MARK = 'Prism: the request is valid';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const RELAY_TYPE = 'https://restmcp.invalid/prism-relay';

// Dummy credentials, at least 8 bytes each so restmcp's redaction treats them as secrets.
const DUMMY_ENV = {
  PRISM_DUMMY_API_KEY: 'prism-dummy-api-key',
  PRISM_DUMMY_TOKEN: 'prism-dummy-bearer-token',
  PRISM_DUMMY_USER: 'prism-dummy-user',
  PRISM_DUMMY_PASSWORD: 'prism-dummy-password',
  PRISM_DUMMY_CLIENT_ID: 'prism-dummy-client',
  PRISM_DUMMY_CLIENT_SECRET: 'prism-dummy-client-secret',
};
const ACCESS_TOKEN = 'prism-dummy-access-token';

// The specs: those this repository ships, then the shared real-world ones.
const OWN_SPECS = [
  'specs/petstore.yaml',
  'tests/fixtures/echo-api.yaml',
  'tests/fixtures/ecma-patterns.yaml',
  'tests/fixtures/byte-bodies.yaml',
  'tests/fixtures/aws-json-target.yaml',
  'tests/fixtures/deep-entities.json',
  'tests/fixtures/echo-swagger2.yaml',
  'tests/fixtures/library-3.1.yaml',
  'tests/fixtures/mock-api.yaml',
  'tests/fixtures/petstore-expanded-v3.json',
  'tests/fixtures/petstore-v2.json',
  'tests/fixtures/petstore-v2-separate/spec/swagger.yaml',
  'tests/fixtures/petstore-v3.yaml',
];
// Left out: tests/fixtures/faults.yaml (parameterless GETs whose point is a misbehaving
// server), broken/ (specs that must not load), ecma-lone-surrogates.yaml (Prism exits with
// "URIError: URI malformed" at start: the example it makes for its pattern is a lone surrogate).
const SHARED_REAL = ['github.json', 'stripe.json', 'kubernetes.json', 'twilio.json', 'box.json'];

// ---------------------------------------------------------------------------------------
// Cleanup: nothing outlives this process.

const children = new Set();
const servers = new Set();
function stopAll() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {}
  }
  for (const server of servers) server.close();
}
process.on('exit', stopAll);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopAll();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

// ---------------------------------------------------------------------------------------
// Main

const started = Date.now();
fs.mkdirSync(results, { recursive: true });
const prismVersion = require('@stoplight/prism-cli/package.json').version;
console.log(
  `prism: Stoplight Prism ${prismVersion} on node ${process.version}; ` +
    `restmcp selftest --live --transport ${transport}; results in ${path.relative(root, results)}`,
);

const known = loadKnown(knownFile);
const specs = discoverSpecs();
const tokens = await startTokenServer();

const totals = { specs: 0, failedSpecs: 0, calls: 0, kinds: {}, known: 0, knownKinds: {}, newFailures: 0, prismRequests: 0, prismFlagged: 0 };
const usedKnown = new Set();
const ranLabels = new Set();
// Two specs at a time: a small spec's run is mostly the start-up of Prism and restmcp,
// which leaves a core idle. Each spec's lines are printed together, in the list's order.
const runs = [];
let next = 0;
const worker = async () => {
  while (next < specs.length) {
    const spec = specs[next++];
    if (spec.skip) {
      runs.push(Promise.resolve({ lines: [`skip ${spec.label}: ${spec.skip}`], skipped: true, spec }));
      continue;
    }
    const run = runSpec(spec).then((outcome) => ({ ...outcome, spec }));
    runs.push(run);
    await run;
  }
};
const workers = Array.from({ length: PARALLEL_SPECS }, worker);
for (let printed = 0; printed < specs.length; printed++) {
  while (runs.length <= printed) await sleep(50);
  const outcome = await runs[printed];
  for (const line of outcome.lines) console.log(line);
  if (outcome.skipped) continue;
  ranLabels.add(outcome.spec.label);
  totals.specs += 1;
  if (!outcome.passed) totals.failedSpecs += 1;
}
await Promise.all(workers);

// Known cases that did not happen: stale entries, which fail the run.
const stale = [];
for (const entry of known) {
  if (!ranLabels.has(entry.spec)) continue;
  for (const tool of entry.tools) {
    if (!usedKnown.has(`${entry.index}\u0000${tool}`)) stale.push(`${entry.spec} ${tool} (entry ${entry.index + 1}: ${entry.title})`);
  }
}
for (const line of stale) console.log(`STALE ${line}: listed in ${path.relative(root, knownFile)} but no longer failing; remove it`);

const listedKinds = Object.entries(totals.knownKinds).map(([kind, n]) => `${kind} ${n}`).join(', ');
if (totals.known > 0) console.log(`known: ${totals.known} calls listed in ${path.relative(root, knownFile)} (${listedKinds})`);
const k = totals.kinds;
const count = (name) => k[name] ?? 0;
const seconds = ((Date.now() - started) / 1000).toFixed(0);
console.log(
  `prism: ${totals.specs} specs (${totals.failedSpecs} failed), ${totals.calls} calls: ${count('ok')} ok, ` +
    `${count('rejected')} rejected by Prism (${totals.known} known, ${totals.newFailures} new), ` +
    `${count('restmcp')} without an answer, ${count('documented')} documented non-2xx answers, ` +
    `${count('response')} answers not matching the outputSchema, ${count('prism')} Prism failures, ` +
    `${count('skipped')} skipped; Prism judged ${totals.prismRequests} requests and flagged ` +
    `${totals.prismFlagged}; ${stale.length} stale known entries; ${seconds} s`,
);
process.exit(totals.failedSpecs === 0 && stale.length === 0 ? 0 : 1);

// ---------------------------------------------------------------------------------------
// One spec

async function runSpec(spec) {
  const t0 = Date.now();
  const lines = [];
  const dir = path.join(results, spec.label.replace(/[^A-Za-z0-9._-]+/g, '_'));
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  let prism;
  let relay;
  try {
    prism = await startPrism(spec.path, path.join(dir, 'prism.log'));
    relay = await startRelay(prism.port, path.join(dir, 'relay.jsonl'));
    const config = writeConfig(dir, spec, relay.port);
    const report = await runSelftest(config, dir);
    const prismCpu = prism.cpu();
    const verdict = judge(spec, report);
    totals.prismRequests += relay.stats.requests;
    totals.prismFlagged += relay.stats.flagged;
    const s = ((Date.now() - t0) / 1000).toFixed(1);
    const c = verdict.counts;
    lines.push(
      `${verdict.failures.length === 0 ? 'pass' : 'FAIL'} ${spec.label}: ${report.tools.length} tools, ` +
        `${verdict.calls} calls: ${c.ok ?? 0} ok, ${c.rejected ?? 0} rejected (${verdict.known} known), ` +
        `${c.restmcp ?? 0} unanswered, ${c.documented ?? 0} documented non-2xx, ${c.response ?? 0} ` +
        `not matching the outputSchema, ${c.prism ?? 0} Prism failures, ${c.skipped ?? 0} skipped; ` +
        `Prism flagged ${relay.stats.flagged} of ${relay.stats.requests} requests (${s} s; Prism used ${prismCpu.toFixed(0)} s of CPU)`,
    );
    for (const line of verdict.failures) lines.push(`    ${line}`);
    for (const line of verdict.notes) lines.push(`    note: ${line}`);
    return { passed: verdict.failures.length === 0, lines };
  } catch (error) {
    lines.push(`FAIL ${spec.label}: ${error.message}`);
    return { passed: false, lines };
  } finally {
    if (relay) await relay.close();
    if (prism) await prism.stop();
  }
}

/// Sorts every call of the report into the kinds above, against the known list.
function judge(spec, report) {
  const counts = {};
  const failures = [];
  const notes = [];
  let calls = 0;
  let knownHere = 0;
  const reportedResponse = [];
  for (const tool of report.tools) {
    for (const wire of ['http', 'stdio']) {
      const outcome = tool[wire];
      if (outcome.outcome === 'skipped' && /^not called \(--transport/.test(outcome.reason ?? '')) continue;
      calls += 1;
      const { kind, status } = classify(outcome);
      counts[kind] = (counts[kind] ?? 0) + 1;
      totals.kinds[kind] = (totals.kinds[kind] ?? 0) + 1;
      totals.calls += 1;
      if (kind === 'rejected' || kind === 'restmcp') {
        const entry = known.find((e) => e.spec === spec.label && e.tools.includes(tool.name) && matches(e, status, outcome.reason));
        if (entry) {
          usedKnown.add(`${entry.index}\u0000${tool.name}`);
          knownHere += 1;
          totals.known += 1;
          totals.knownKinds[entry.kind] = (totals.knownKinds[entry.kind] ?? 0) + 1;
        } else {
          failures.push(`${kind} ${tool.name} [${wire}]: ${outcome.reason}`);
          if (kind === 'rejected') totals.newFailures += 1;
        }
      } else if (kind === 'response' || kind === 'prism') {
        reportedResponse.push(`${kind} ${tool.name} [${wire}]: ${outcome.reason}`);
      }
    }
  }
  if (reportedResponse.length > 0) {
    const file = path.join(results, spec.label.replace(/[^A-Za-z0-9._-]+/g, '_'), 'answers.txt');
    fs.writeFileSync(file, reportedResponse.join('\n') + '\n');
    notes.push(`${reportedResponse.length} answers not used (outputSchema mismatch or Prism failure): ${path.relative(root, file)}`);
  }
  return { counts, failures, notes, calls, known: knownHere };
}

function classify(outcome) {
  if (outcome.outcome === 'ok') return { kind: 'ok' };
  if (outcome.outcome === 'skipped') return { kind: 'skipped' };
  const reason = outcome.reason ?? '';
  const m = /^upstream API "[^"]*" answered (\d{3})\b/.exec(reason);
  if (!m) return { kind: 'restmcp' };
  const status = Number(m[1]);
  if (status >= 200 && status < 300) return { kind: 'response', status };
  if (reason.includes(VALID_MARK)) return { kind: 'documented', status };
  if (status >= 400 && status < 500) return { kind: 'rejected', status };
  return { kind: 'prism', status };
}

/// Whether a failed call is the entry's case: its status, and every violation its reason
/// names (`upstream API "a" answered 422 …: v1; v2`) containing one of the entry's.
function matches(entry, status, reason) {
  if (entry.status !== undefined && entry.status !== status) return false;
  const text = reason ?? '';
  const m = /^upstream API "[^"]*" answered \d{3}[^:]*: (.*)$/.exec(text);
  const said = m ? m[1].split('; ').filter((v) => !/^and \d+ more$/.test(v)) : [text];
  return said.every((v) => entry.violations.some((known) => v.includes(known)));
}

// ---------------------------------------------------------------------------------------
// Specs and the known list

function discoverSpecs() {
  const list = [];
  const seen = new Map();
  const add = (label, file) => {
    if (only.length > 0 && !only.some((o) => label.includes(o))) return;
    // The same document in JSON and in YAML (the OpenAPI examples come in both) is run once.
    const hash = createHash('sha256').update(canonical(parseSpec(file))).digest('hex');
    const same = seen.get(hash);
    let skip = same ? `the same document as ${same}` : undefined;
    const listed = known.find((e) => e.skip && e.spec === label);
    if (!skip && listed) skip = `${listed.title} (${path.relative(root, knownFile)}, entry ${listed.index + 1})`;
    if (!skip && !hasOperations(parseSpec(file))) skip = 'no operations to call (webhooks only), which Prism refuses to serve';
    list.push({ label, path: file, skip });
    if (!same) seen.set(hash, label);
  };
  for (const rel of OWN_SPECS) add(rel, path.join(root, rel));
  if (!fs.existsSync(sharedDir)) {
    console.log(`skip shared specs: ${sharedDir} is absent (petstore3.yaml, oai-examples, real/*.json not run)`);
    return list;
  }
  add('shared/petstore3.yaml', path.join(sharedDir, 'petstore3.yaml'));
  const examples = path.join(sharedDir, 'oai-examples');
  for (const file of walk(examples).sort()) {
    if (!/\.(ya?ml|json)$/.test(file) || !isApiRoot(file)) continue;
    add(`shared/${path.relative(sharedDir, file)}`, file);
  }
  for (const name of SHARED_REAL) add(`shared/real/${name}`, path.join(sharedDir, 'real', name));
  return list;
}

/// JSON text with object keys sorted: equal for equal documents, whatever their syntax.
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function walk(dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : [p];
  });
}

function parseSpec(file) {
  return yaml.safeLoad(fs.readFileSync(file, 'utf8'), { json: true });
}

function hasOperations(doc) {
  return Object.values(doc?.paths ?? {}).some((item) => item && METHODS.some((m) => item[m]));
}

function isApiRoot(file) {
  try {
    const doc = parseSpec(file);
    return !!doc && typeof doc === 'object' && ('openapi' in doc || 'swagger' in doc);
  } catch {
    return false;
  }
}

/// The known list (its header says what an entry holds).
function loadKnown(file) {
  if (!fs.existsSync(file)) return [];
  const entries = yaml.safeLoad(fs.readFileSync(file, 'utf8')) ?? [];
  if (!Array.isArray(entries)) throw new Error(`${file}: expected a list of entries`);
  const kinds = ['prism', 'undefined', 'description', 'pending'];
  return entries.map((e, index) => {
    const where = `${file}: entry ${index + 1}`;
    const keys = e?.skip ? ['spec', 'kind', 'title', 'why'] : ['spec', 'tools', 'violations', 'kind', 'title', 'why'];
    for (const key of keys) if (!e || e[key] === undefined) throw new Error(`${where} has no ${key}`);
    if (!kinds.includes(e.kind)) throw new Error(`${where}: kind is one of ${kinds.join(', ')}`);
    if (e.kind === 'pending' ? !e.issue : !e.clause) {
      throw new Error(`${where} needs ${e.kind === 'pending' ? 'the issue that fixes restmcp (issue)' : 'the clause that shows it (clause)'}`);
    }
    return { ...e, index, tools: [].concat(e.tools ?? []), violations: [].concat(e.violations ?? []) };
  });
}

// ---------------------------------------------------------------------------------------
// Config

function writeConfig(dir, spec, port) {
  const doc = parseSpec(spec.path);
  const schemes = (doc.components && doc.components.securitySchemes) || doc.securityDefinitions || {};
  const q = (s) => JSON.stringify(String(s));
  const lines = [
    '# Written by tests/world/prism/run.mjs: the spec, the relay in front of Prism, dummy credentials.',
    '[reload]',
    'enabled = false',
    '',
    '[log]',
    'level = "warn"',
    '',
    '[apis.api]',
    `spec = ${q(spec.path)}`,
    `base_url = ${q(`http://127.0.0.1:${port}`)}`,
    // Prism takes seconds for a call on Kubernetes-sized schemas on a busy machine.
    'timeout_seconds = 120',
  ];
  for (const [name, scheme] of Object.entries(schemes)) {
    if (!scheme || typeof scheme !== 'object' || scheme.$ref) continue;
    const type = String(scheme.type ?? '').toLowerCase();
    const httpScheme = String(scheme.scheme ?? '').toLowerCase();
    let keys;
    if (type === 'apikey') keys = { value_env: 'PRISM_DUMMY_API_KEY' };
    else if ((type === 'http' && httpScheme === 'bearer')) keys = { token_env: 'PRISM_DUMMY_TOKEN' };
    else if ((type === 'http' && httpScheme === 'basic') || type === 'basic') keys = { username_env: 'PRISM_DUMMY_USER', password_env: 'PRISM_DUMMY_PASSWORD' };
    else if (type === 'oauth2') keys = { client_id_env: 'PRISM_DUMMY_CLIENT_ID', client_secret_env: 'PRISM_DUMMY_CLIENT_SECRET', token_url: tokens.url };
    else continue; // openIdConnect, mutualTLS, other HTTP schemes: nothing restmcp can send
    lines.push('', `[apis.api.auth.${q(name)}]`);
    for (const [key, value] of Object.entries(keys)) lines.push(`${key} = ${q(value)}`);
  }
  const file = path.join(dir, 'config.toml');
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

// ---------------------------------------------------------------------------------------
// Processes

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

function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function startPrism(specPath, logFile) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const log = fs.openSync(logFile, 'w');
    const child = track(
      spawn(process.execPath, [prismCli, 'mock', '--host', '127.0.0.1', '--port', String(port), '--verboseLevel', 'warn', specPath], {
        stdio: ['ignore', log, log],
      }),
    );
    fs.closeSync(log);
    let exited = null;
    child.once('exit', (code, signal) => (exited = signal ?? code));
    const deadline = Date.now() + PRISM_START_TIMEOUT_MS;
    while (exited === null && Date.now() < deadline) {
      if (await answers(port)) {
        return { port, cpu: () => cpuSeconds(child.pid), stop: () => stop(child) };
      }
      await sleep(200);
    }
    await stop(child);
    const tail = fs.readFileSync(logFile, 'utf8').slice(-1500);
    if (exited !== null && attempt < 3 && /EADDRINUSE/.test(tail)) continue;
    throw new Error(exited === null ? `Prism did not answer within ${PRISM_START_TIMEOUT_MS / 1000} s` : `Prism exited (${exited}) before answering: ${tail}`);
  }
}

/// CPU seconds a process has used (user + system), from /proc; 0 where there is none.
function cpuSeconds(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function answers(port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/__restmcp_prism_probe', agent: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function runSelftest(config, dir) {
  const env = { ...process.env, ...DUMMY_ENV, RUST_LOG: 'warn' };
  for (const name of Object.keys(env)) if (name.startsWith('RESTMCP_')) delete env[name];
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(bin, ['selftest', '--live', '--json', '--concurrency', String(CONCURRENCY), ...(transport === 'both' ? [] : ['--transport', transport]), '--config', config], {
        cwd: dir,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), SELFTEST_TIMEOUT_MS);
    child.once('error', (e) => reject(new Error(`cannot start ${bin}: ${e.message}`)));
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      fs.writeFileSync(path.join(dir, 'selftest.json'), stdout);
      fs.writeFileSync(path.join(dir, 'selftest.stderr'), stderr);
      try {
        const report = JSON.parse(stdout);
        if (!Array.isArray(report.tools)) throw new Error('no tools in the report');
        resolve(report);
      } catch {
        reject(new Error(`restmcp selftest did not report (exit ${signal ?? code}): ${stderr.slice(-1500).trim()}`));
      }
    });
  });
}

// ---------------------------------------------------------------------------------------
// The relay and the token endpoint

function listen(server) {
  servers.add(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

async function startRelay(prismPort, logFile) {
  const log = fs.openSync(logFile, 'w');
  const stats = { requests: 0, flagged: 0 };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const t0 = Date.now();
      const headers = { ...req.headers, host: `127.0.0.1:${prismPort}` };
      // A connection per request: a pooled one could meet Prism's 5 s keep-alive timeout.
      const upstream = http.request({ host: '127.0.0.1', port: prismPort, method: req.method, path: req.url, headers, agent: false }, (answer) => {
        const parts = [];
        answer.on('data', (c) => parts.push(c));
        answer.on('end', () => {
          const status = answer.statusCode ?? 502;
          const out = { ...answer.headers };
          let payload = Buffer.concat(parts);
          const violations = requestViolations(out['sl-violations']);
          const prismProblem = /problem\+json/.test(out['content-type'] ?? '') && /stoplight\.io\/prism\/errors#/.test(payload.toString('utf8'));
          let validation = violations;
          if (prismProblem) {
            try {
              validation = JSON.parse(payload.toString('utf8')).validation ?? [{ message: 'Prism refused the request' }];
            } catch {
              validation = [{ message: 'Prism refused the request' }];
            }
          }
          stats.requests += 1;
          if ((status >= 400 && status < 500 && prismProblem) || violations.length > 0) stats.flagged += 1;
          if (status >= 300 && !prismProblem) {
            payload = Buffer.from(
              JSON.stringify(
                violations.length > 0
                  ? { type: `${RELAY_TYPE}#violations`, title: `Invalid request: Prism answered the description's own ${status}`, status, validation: violations }
                  : { type: `${RELAY_TYPE}#valid`, title: VALID_MARK, detail: `Prism answered the ${status} response the operation documents`, status },
              ),
            );
            out['content-type'] = 'application/problem+json';
            delete out['content-length'];
            delete out['transfer-encoding'];
            delete out['content-encoding'];
            delete out.location;
          }
          const flagged = (status >= 400 && status < 500 && prismProblem) || violations.length > 0;
          const entry = { method: req.method, url: req.url, status, ms: Date.now() - t0, violations: flagged ? validation : [] };
          // What restmcp sent, for the requests Prism rejected.
          if (flagged) Object.assign(entry, { headers: req.headers, body: body.toString('utf8').slice(0, 4096) });
          fs.writeSync(log, JSON.stringify(entry) + '\n');
          res.writeHead(status, out);
          res.end(payload);
        });
      });
      upstream.on('error', (e) => {
        fs.writeSync(log, JSON.stringify({ method: req.method, url: req.url, error: e.message }) + '\n');
        res.writeHead(502, { 'content-type': 'application/problem+json' });
        res.end(JSON.stringify({ title: 'Prism closed the connection without answering', detail: e.message, status: 502 }));
      });
      upstream.end(body);
    });
  });
  // Longer than restmcp's pooled connections live (90 s), so the relay never closes one
  // restmcp is about to reuse.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 130_000;
  const port = await listen(server);
  return {
    port,
    stats,
    close: () =>
      new Promise((resolve) => {
        servers.delete(server);
        server.closeAllConnections();
        server.close(() => {
          fs.closeSync(log);
          resolve();
        });
      }),
  };
}

/// The request's violations of severity Error from Prism's `sl-violations` header. Prism
/// cuts a long header to 8 KB after "Too many violations! ", which leaves no JSON to read:
/// then any request violation in what is left counts, with its text.
function requestViolations(header) {
  if (!header) return [];
  try {
    return JSON.parse(header)
      .filter((v) => v.severity === 'Error' && Array.isArray(v.location) && v.location[0] === 'request')
      .map((v) => ({ location: v.location.slice(1), severity: v.severity, code: v.code, message: v.message }));
  } catch {
    const text = String(header);
    const at = text.indexOf('"location":["request"');
    return at < 0 ? [] : [{ location: [], severity: 'Error', message: `Prism's list of violations, cut short: ${text.slice(at, at + 500)}` }];
  }
}

/// An OAuth 2.0 token endpoint for the client credentials grant (RFC 6749 §4.4): it checks
/// what restmcp sends and hands out one dummy token.
async function startTokenServer() {
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const basic = `Basic ${Buffer.from(`${DUMMY_ENV.PRISM_DUMMY_CLIENT_ID}:${DUMMY_ENV.PRISM_DUMMY_CLIENT_SECRET}`).toString('base64')}`;
      if (req.method !== 'POST' || body.get('grant_type') !== 'client_credentials' || req.headers.authorization !== basic) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_request' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify({ access_token: ACCESS_TOKEN, token_type: 'Bearer', expires_in: 3600 }));
    });
  });
  server.keepAliveTimeout = 120_000;
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}/token` };
}

// ---------------------------------------------------------------------------------------

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const m = /^--([a-z-]+)$/.exec(a);
    if (!m || i + 1 >= argv.length) throw new Error(`usage: run.mjs [--bin B] [--shared DIR] [--known F] [--results DIR] [--transport http|stdio|both] [--only LABEL]...; got ${a}`);
    const value = argv[++i];
    if (m[1] === 'only') (out.only ??= []).push(value);
    else out[m[1]] = value;
  }
  return out;
}
