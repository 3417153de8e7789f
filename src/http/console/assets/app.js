// The restmcp console: one classic script, no framework, no build step.
//
// Everything shown comes from the JSON API under /console/api/ (src/http/console/api.rs; its
// routes are listed in docs/src/console.md); this file only fetches and draws. Four hash routes: #/apis,
// #/tools, #/tools/NAME and #/calls. Two things run in the background once the API lets us
// in: a poll of /console/api/stats every 2 s (kept for 10 minutes at most, for the charts)
// and the call feed /console/api/calls (read with fetch, as EventSource cannot send the
// Authorization header; at most 500 calls kept). Both are bounded, so a page left open for
// days holds no more than a page opened a minute ago.
//
// The Content-Security-Policy forbids inline styles and handlers: elements are built with
// `el` (textContent, never innerHTML, so no datum is ever parsed as markup) and handlers
// attached with addEventListener.
'use strict';

(() => {
  const API = '/console/api/';
  const TOKEN_KEY = 'restmcp.console.token';
  const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'];
  const DEFAULT_REVISION = '2025-11-25';
  const STATS_EVERY_MS = 2000;
  const STATS_KEEP_MS = 10 * 60 * 1000; // the charts' memory: 10 minutes of snapshots
  const STATS_MAX = 400; // and never more snapshots than this, whatever the clock says
  const CALLS_MAX = 500; // calls kept in the live list
  const CHART_TOOLS = 4; // tools drawn beside "all" in the rate chart
  const LATENCY_TOOLS = 6; // tools in the latency chart
  const LATENCY_WINDOW_MS = 5 * 60 * 1000;

  // ---------------------------------------------------------------------------------------
  // Small helpers

  const $ = (id) => document.getElementById(id);

  // el('div', {class: 'x', dataset: {testid: 'y'}, onclick: f}, child, 'text', [more]):
  // a new element; attributes set one by one (on* become listeners), children appended,
  // strings as text nodes, null and false skipped.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'dataset') Object.assign(node.dataset, value);
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else if (key === 'value') node.value = value;
      else if (key === 'checked') node.checked = !!value;
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    append(node, children);
    return node;
  }

  function append(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function clear(node, ...children) {
    node.replaceChildren();
    return append(node, children);
  }

  const fmtInt = (n) => (n === null || n === undefined ? '—' : Number(n).toLocaleString('en-US'));
  const fmtJson = (v) => JSON.stringify(v, null, 2);

  function fmtMs(ms) {
    if (ms === null || ms === undefined) return '—';
    if (ms < 1) return ms.toFixed(2) + ' ms';
    if (ms < 100) return ms.toFixed(1) + ' ms';
    if (ms < 10000) return Math.round(ms) + ' ms';
    return (ms / 1000).toFixed(1) + ' s';
  }

  function fmtBytes(n) {
    if (n === null || n === undefined) return '—';
    if (n < 1024) return n + ' B';
    if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KiB';
    return (n / 1024 / 1024).toFixed(1) + ' MiB';
  }

  function fmtTime(iso) {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso || '');
    return d.toLocaleTimeString('en-GB', { hour12: false }) + '.' + String(d.getMilliseconds()).padStart(3, '0');
  }

  function badge(text, kind, title) {
    return el('span', { class: 'badge ' + (kind || ''), title }, text);
  }

  function methodBadge(method) {
    const m = String(method || '').toUpperCase();
    return el('span', { class: 'method m-' + m.toLowerCase() }, m || '?');
  }

  // A definition list from [term, value] pairs, values being nodes or text.
  function facts(pairs) {
    return el('dl', { class: 'facts' }, pairs.filter(Boolean).map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  }

  function debounce(fn, ms) {
    let timer = 0;
    return (...args) => {
      clearTimeout(timer);
      timer = setTimeout(() => fn(...args), ms);
    };
  }

  // ---------------------------------------------------------------------------------------
  // The JSON API, with the token (sessionStorage only)

  class Unauthorized extends Error {}

  const token = {
    get: () => sessionStorage.getItem(TOKEN_KEY) || '',
    set: (t) => sessionStorage.setItem(TOKEN_KEY, t),
    forget: () => sessionStorage.removeItem(TOKEN_KEY),
  };

  function headers(extra) {
    const h = Object.assign({ Accept: 'application/json' }, extra || {});
    const t = token.get();
    if (t) h.Authorization = 'Bearer ' + t;
    return h;
  }

  // GET or POST one API path; the parsed JSON, or throws: Unauthorized on 401 (after showing
  // the token form), an Error carrying the server's {"error"} text otherwise.
  async function api(path, body, signal) {
    const init = { headers: headers(), signal, cache: 'no-store' };
    if (body !== undefined) {
      init.method = 'POST';
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(API + path, init);
    if (response.status === 401) {
      needToken(token.get() ? 'That token was refused.' : '');
      throw new Unauthorized('401');
    }
    let data = null;
    try {
      data = await response.json();
    } catch (_) {
      data = null;
    }
    if (!response.ok) {
      const text = data && data.error ? data.error : `HTTP ${response.status}`;
      const err = new Error(text);
      err.status = response.status;
      throw err;
    }
    return data;
  }

  // ---------------------------------------------------------------------------------------
  // State

  const state = {
    authed: false, // the API answered us at least once with the current token
    overview: null,
    stats: [], // snapshots {at_ms, in_flight, buckets, tools}, oldest first, bounded
    calls: [], // call events, oldest first, bounded to CALLS_MAX
    feed: null, // AbortController of the running call feed
    lastCallId: null, // the id of the last call event, sent as Last-Event-ID when the feed reconnects
    feedStatus: 'idle',
    statsTimer: 0,
    overviewTimer: 0,
    route: { page: 'apis', tool: null },
    toolQuery: { q: '', api: '' },
    detail: null, // {name, revision, client} of the tool page being shown
  };

  // ---------------------------------------------------------------------------------------
  // Authentication: the token form

  function needToken(message) {
    state.authed = false;
    stopBackground();
    for (const page of document.querySelectorAll('.page')) {
      page.hidden = true;
      page.replaceChildren(); // no API data stays on screen once refused
    }
    clear($('status'));
    $('banner').hidden = true;
    $('auth').hidden = false;
    $('nav').hidden = true;
    $('forget-token').hidden = true;
    const error = $('token-error');
    error.textContent = message || '';
    error.hidden = !message;
    $('token-input').focus();
  }

  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const value = $('token-input').value.trim();
    if (!value) return;
    token.set(value);
    $('token-input').value = '';
    start();
  });

  $('forget-token').addEventListener('click', () => {
    token.forget();
    needToken('');
  });

  // ---------------------------------------------------------------------------------------
  // Start: the overview first (it says whether we are let in), then the background work

  async function start() {
    try {
      state.overview = await api('overview');
    } catch (e) {
      if (!(e instanceof Unauthorized)) showBanner('The console API did not answer: ' + e.message, 'error');
      return;
    }
    state.authed = true;
    $('auth').hidden = true;
    $('nav').hidden = false;
    $('forget-token').hidden = !token.get();
    renderStatus();
    startBackground();
    route();
  }

  function startBackground() {
    stopBackground();
    pollStats();
    state.statsTimer = setInterval(pollStats, STATS_EVERY_MS);
    state.overviewTimer = setInterval(refreshOverview, 5000);
    openFeed();
  }

  function stopBackground() {
    clearInterval(state.statsTimer);
    clearInterval(state.overviewTimer);
    state.statsTimer = state.overviewTimer = 0;
    if (state.feed) state.feed.abort();
    state.feed = null;
    state.stats = [];
  }

  async function refreshOverview() {
    try {
      state.overview = await api('overview');
    } catch (_) {
      return;
    }
    renderStatus();
    if (state.route.page === 'apis') renderApis();
  }

  function showBanner(text, kind) {
    const banner = $('banner');
    banner.className = 'banner ' + (kind || '');
    banner.textContent = text;
    banner.hidden = !text;
  }

  function renderStatus() {
    const o = state.overview;
    if (!o) return;
    const ready = o.ready
      ? badge('ready', 'ok', 'The tool set is loaded')
      : badge('loading', 'warn', 'The first tool set is still loading');
    const feed = {
      live: badge('live', 'ok', 'The call feed is connected'),
      connecting: badge('connecting', 'muted', 'Connecting to the call feed'),
      down: badge('feed down', 'warn', 'The call feed is disconnected; retrying'),
      idle: null,
    }[state.feedStatus];
    // A failed reload is told in full on the APIs page; here, a badge leading there.
    const r = o.reload;
    const reload = r && !r.ok
      ? el('a', { href: '#/apis', title: r.error || '' }, badge('reload failed', 'danger', `The last reload (${r.at}) failed: ${r.error || 'unknown error'}`))
      : null;
    clear($('status'),
      reload, ' ',
      ready, ' ',
      feed, ' ',
      el('span', { class: 'muted' }, `${fmtInt(o.tools)} tools · auth ${o.auth} · v${o.version}`));
  }

  // ---------------------------------------------------------------------------------------
  // Routing

  function route() {
    const hash = location.hash.replace(/^#\/?/, '');
    const [page, ...rest] = hash.split('/');
    let r = { page: 'apis', tool: null };
    if (page === 'tools' && rest.length) r = { page: 'tool', tool: decodeURIComponent(rest.join('/')) };
    else if (page === 'tools' || page === 'calls' || page === 'apis') r = { page, tool: null };
    const moved = state.route.page !== r.page || state.route.tool !== r.tool;
    state.route = r;
    if (moved) window.scrollTo(0, 0);
    for (const a of document.querySelectorAll('#nav a')) {
      const current = a.dataset.route === (r.page === 'tool' ? 'tools' : r.page);
      a.classList.toggle('current', current);
      if (current) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    if (!state.authed) return;
    for (const id of ['apis', 'tools', 'tool', 'calls']) $(id).hidden = id !== r.page;
    if (r.page === 'apis') renderApis();
    else if (r.page === 'tools') renderTools();
    else if (r.page === 'tool') renderTool(r.tool);
    else renderCalls();
  }

  window.addEventListener('hashchange', route);

  // ---------------------------------------------------------------------------------------
  // APIs

  function renderApis() {
    const o = state.overview;
    const root = $('apis');
    if (!o) return;
    const cards = o.apis.map((a) => {
      const modes = ['all', 'search', 'meta'].map((m) =>
        el('td', { class: 'num' + (m === a.discovery ? ' chosen' : '') }, fmtInt((a.tokens || {})[m])));
      return el('article', { class: 'card api', dataset: { testid: 'api-row', api: a.name } },
        el('header', { class: 'api-head' },
          el('h2', {}, el('a', { href: '#/tools', dataset: { api: a.name }, onclick: () => { state.toolQuery = { q: '', api: a.name }; } }, a.name)),
          el('span', { class: 'api-title' }, a.title || ''),
          el('span', { class: 'spacer' }),
          a.mock ? badge('mock', 'info', 'Answered by restmcp from the spec') : badge('live', 'ok', 'Calls go to the upstream')),
        el('div', { class: 'api-body' },
          facts([
            ['tools', el('span', { dataset: { testid: 'api-tools' } }, fmtInt(a.tools))],
            ['listed', `${fmtInt(a.listed)} in tools/list`],
            ['discovery', el('span', {}, el('strong', { dataset: { testid: 'api-discovery' } }, a.discovery),
              el('span', { class: 'muted' }, ' — ' + (a.discovery_reason || '')))],
            ['base URL', a.base_url ? el('code', {}, a.base_url) : el('span', { class: 'muted' }, 'none')],
            ['calls', el('span', { dataset: { testid: 'api-calls' } }, fmtInt(a.calls))],
          ]),
          el('table', { class: 'modes' },
            el('caption', {}, 'tokens tools/list costs'),
            el('thead', {}, el('tr', {}, ['all', 'search', 'meta'].map((m) => el('th', { class: m === a.discovery ? 'chosen' : '' }, m)))),
            el('tbody', {}, el('tr', {}, modes)))));
    });
    const r = o.reload;
    const reload = r
      ? el('p', { class: r.ok ? 'muted' : 'error' },
        r.ok
          ? `Last reload ${r.at}: ${fmtInt(r.tools)} tools.`
          : `Last reload ${r.at} failed: ${r.error || 'unknown error'}. Still serving the ${fmtInt(r.tools)} tools from before.`)
      : el('p', { class: 'muted' }, 'No reload since start.');
    clear(root,
      el('div', { class: 'page-head' },
        el('h1', {}, 'APIs'),
        el('span', { class: 'muted' }, `${o.apis.length} APIs · ${fmtInt(o.tools)} tools served · ${o.ready ? 'ready' : 'loading the first tool set'}`)),
      reload,
      el('div', { class: 'api-list' }, cards));
  }

  // ---------------------------------------------------------------------------------------
  // Tools: search and browse

  let toolsRequest = null;

  function renderTools() {
    const root = $('tools');
    const search = el('input', {
      type: 'search', id: 'tool-search', dataset: { testid: 'tool-search' }, placeholder: 'Search name, title, description, method, path…',
      value: state.toolQuery.q, autocomplete: 'off', spellcheck: 'false',
    });
    const filter = el('select', { id: 'tool-api', dataset: { testid: 'tool-api' }, 'aria-label': 'API' },
      el('option', { value: '' }, 'all APIs'),
      (state.overview ? state.overview.apis : []).map((a) => el('option', { value: a.name }, a.name)));
    filter.value = state.toolQuery.api;
    const count = el('span', { class: 'muted', id: 'tool-count' });
    const body = el('tbody', {});
    const surface = el('section', { class: 'surface', dataset: { testid: 'surface' } });
    const reload = () => loadTools(body, count);
    search.addEventListener('input', debounce(() => { state.toolQuery.q = search.value; reload(); }, 150));
    filter.addEventListener('change', () => { state.toolQuery.api = filter.value; reload(); });
    clear(root,
      el('div', { class: 'page-head' }, el('h1', {}, 'Tools'), count),
      el('div', { class: 'toolbar' }, search, filter),
      el('table', { class: 'grid tools-table' },
        el('thead', {}, el('tr', {},
          el('th', {}, 'tool'), el('th', {}, 'API'), el('th', {}, 'route'), el('th', {}, 'summary'),
          el('th', {}, ''), el('th', { class: 'num' }, 'tokens'))),
        body),
      surface);
    reload();
    loadSurface(surface);
    search.focus();
  }

  // The resources, templates and prompts made of the tools (what `restmcp check` prints),
  // below the tool list; nothing when there are none.
  async function loadSurface(root) {
    let s;
    try {
      s = await api('surface');
    } catch (_) {
      return; // the tool list says what went wrong
    }
    if (!s.resources.length && !s.prompts.length) return;
    const toolLink = (name) => el('a', { href: '#/tools/' + encodeURIComponent(name) }, name);
    const resources = s.resources.map((r) => el('tr', { dataset: { testid: 'resource-row' } },
      el('td', {}, el('code', {}, r.uri), r.template ? ' ' : null, r.template ? badge('template', 'muted', 'A URI template: its variables are the tool\'s arguments') : null),
      el('td', {}, r.name),
      el('td', {}, toolLink(r.tool)),
      el('td', { class: 'muted small' }, (r.variables || []).map((v) => `${v.name} (${v.place}): completions from ${v.completions}`).join('; ')),
      el('td', { class: 'muted small' }, r.location)));
    const prompts = s.prompts.map((p) => el('tr', { dataset: { testid: 'prompt-row' } },
      el('td', {}, el('code', {}, p.name)),
      el('td', { class: 'small' }, (p.arguments || []).map((a) => `${a.name}${a.required ? '*' : ''}: completions from ${a.completions}`).join('; ')),
      el('td', { class: 'small' }, p.messages.join(', ')),
      el('td', { class: 'muted small' }, p.location)));
    clear(root,
      s.resources.length ? [el('h2', {}, 'Resources and templates'),
        el('table', { class: 'grid' }, el('thead', {}, el('tr', {},
          el('th', {}, 'URI'), el('th', {}, 'name'), el('th', {}, 'tool a read runs'), el('th', {}, 'variables'), el('th', {}, 'written in'))),
        el('tbody', {}, resources))] : null,
      s.prompts.length ? [el('h2', {}, 'Prompts'),
        el('table', { class: 'grid' }, el('thead', {}, el('tr', {},
          el('th', {}, 'prompt'), el('th', {}, 'arguments'), el('th', {}, 'messages'), el('th', {}, 'written in'))),
        el('tbody', {}, prompts))] : null);
  }

  async function loadTools(body, count) {
    if (toolsRequest) toolsRequest.abort();
    toolsRequest = new AbortController();
    const params = new URLSearchParams({ q: state.toolQuery.q, limit: '1000' });
    if (state.toolQuery.api) params.set('api', state.toolQuery.api);
    let data;
    try {
      data = await api('tools?' + params, undefined, toolsRequest.signal);
    } catch (e) {
      if (e.name !== 'AbortError' && !(e instanceof Unauthorized)) count.textContent = 'Search failed: ' + e.message;
      return;
    }
    count.textContent = data.total === data.tools.length
      ? `${fmtInt(data.total)} tools`
      : `${fmtInt(data.tools.length)} of ${fmtInt(data.total)} tools`;
    clear(body, data.tools.map((t) => {
      const open = () => { location.hash = '#/tools/' + encodeURIComponent(t.name); };
      return el('tr', { class: 'clickable', tabindex: '0', dataset: { testid: 'tool-row', tool: t.name }, onclick: open,
        onkeydown: (e) => { if (e.key === 'Enter') open(); } },
      el('td', {}, el('a', { href: '#/tools/' + encodeURIComponent(t.name), class: 'tool-name' }, t.name)),
      el('td', { class: 'muted' }, t.api),
      el('td', { class: 'route' }, methodBadge(t.method), ' ', el('code', {}, t.path)),
      el('td', { class: 'summary' }, t.title || t.summary || ''),
      el('td', { class: 'badges' }, toolBadges(t)),
      el('td', { class: 'num' }, fmtInt(t.tokens)));
    }));
    if (!data.tools.length) body.append(el('tr', {}, el('td', { colspan: '6', class: 'empty' }, 'No tool matches.')));
  }

  function toolBadges(t) {
    return [
      t.read_only ? badge('read-only', 'ok', 'readOnlyHint') : null,
      t.destructive ? badge('destructive', 'danger', 'destructiveHint') : null,
      t.confirm ? badge('confirm', 'warn', 'A human confirms each call before it is sent') : null,
      t.listed === false ? badge('not listed', 'muted', 'Not in tools/list itself (found through search)') : null,
    ];
  }

  // ---------------------------------------------------------------------------------------
  // One tool: what a client of a revision sees, where each piece came from, and Try it

  async function renderTool(name) {
    const root = $('tool');
    const prev = state.detail;
    const detail = {
      name,
      revision: prev ? prev.revision : DEFAULT_REVISION, // the pickers stay as set from tool to tool
      client: prev ? prev.client : '',
    };
    state.detail = detail;
    clear(root, el('p', { class: 'muted' }, 'Loading ' + name + '…'));
    const params = new URLSearchParams({ revision: detail.revision });
    if (detail.client) params.set('client', detail.client);
    let t;
    try {
      t = await api('tools/' + encodeURIComponent(name) + '?' + params);
    } catch (e) {
      if (e instanceof Unauthorized) return;
      clear(root, el('p', { class: 'error', dataset: { testid: 'tool-error' } }, e.message),
        el('p', {}, el('a', { href: '#/tools' }, '← all tools')));
      return;
    }
    if (state.detail !== detail) return; // another tool was opened meanwhile
    drawTool(root, t, detail);
  }

  function drawTool(root, t, detail) {
    const def = t.definition || {};
    const revision = el('select', { id: 'revision', dataset: { testid: 'revision-select' } },
      REVISIONS.map((r) => el('option', { value: r }, r)));
    revision.value = detail.revision;
    const client = el('input', { id: 'client', dataset: { testid: 'client-input' }, placeholder: 'clientInfo.name (none)', value: detail.client, spellcheck: 'false' });
    const again = () => {
      detail.revision = revision.value;
      detail.client = client.value.trim();
      renderTool(detail.name);
    };
    revision.addEventListener('change', again);
    client.addEventListener('change', again);

    const ann = def.annotations || {};
    const annBadges = Object.entries(ann).map(([k, v]) =>
      typeof v === 'boolean' ? badge(k.replace(/Hint$/, '') + (v ? '' : ': no'), v ? (k === 'destructiveHint' ? 'danger' : 'ok') : 'muted', k + ' = ' + v) : badge(`${k}: ${v}`, 'muted'));

    const provenance = Object.entries(t.provenance || {});
    const provTable = el('table', { class: 'grid provenance', dataset: { testid: 'provenance' } },
      el('thead', {}, el('tr', {}, el('th', {}, 'piece'), el('th', {}, 'source'))),
      el('tbody', {}, provenance.length
        ? provenance.map(([piece, source]) => el('tr', {}, el('td', {}, el('code', {}, piece)), el('td', { class: 'source' }, sourceOf(source))))
        : el('tr', {}, el('td', { colspan: '2', class: 'empty' }, 'Every piece comes from the spec and the defaults.'))));

    const route = t.route || {};
    clear(root,
      el('div', { class: 'page-head' },
        el('a', { href: '#/tools', class: 'back' }, '← tools'),
        el('h1', { class: 'tool-title' }, t.name),
        el('span', { class: 'muted' }, 'API ', el('strong', {}, t.api)),
        el('span', { class: 'spacer' }),
        el('label', { class: 'inline' }, 'revision ', revision),
        el('label', { class: 'inline' }, 'client ', client)),
      el('div', { class: 'tool-grid' },
        el('div', { class: 'col' },
          el('section', { class: 'card' },
            el('h2', {}, def.title || t.name),
            el('p', { class: 'route' }, methodBadge(route.method), ' ', el('code', {}, route.path || ''), ' ',
              route.base_url ? el('span', { class: 'muted' }, 'on ', el('code', {}, route.base_url)) : null),
            el('p', { class: 'description', dataset: { testid: 'tool-description' } }, def.description || el('span', { class: 'muted' }, 'no description')),
            el('div', { class: 'badges' }, annBadges, t.confirm ? badge('confirm', 'warn', 'A human confirms each call') : null,
              t.listed ? null : badge('not listed', 'muted')),
            facts([
              ['listed', t.listed ? 'yes, in tools/list' : 'no: reached through search'],
              ['dialect', t.dialect || '—'],
              ['confirmation', t.confirm ? 'asked before each call' : 'none'],
              ['idempotency', t.idempotency ? el('code', {}, JSON.stringify(t.idempotency)) : 'none'],
              ['scopes', scopesOf(t.scopes)],
            ])),
          el('section', { class: 'card' }, el('h2', {}, 'Provenance'), provTable),
          el('section', { class: 'card' }, tryIt(t)),
          el('section', { class: 'card' },
            el('h2', {}, 'Explain'),
            el('pre', { class: 'explain', dataset: { testid: 'explain' } }, t.explain || ''))),
        el('div', { class: 'col' },
          el('section', { class: 'card' },
            el('h2', {}, 'inputSchema'),
            el('pre', { class: 'json', dataset: { testid: 'input-schema' } }, fmtJson(def.inputSchema || {}))),
          def.outputSchema ? el('section', { class: 'card' },
            el('h2', {}, 'outputSchema'),
            el('pre', { class: 'json', dataset: { testid: 'output-schema' } }, fmtJson(def.outputSchema))) : null,
          el('details', { class: 'card' },
            el('summary', {}, 'The whole definition, as tools/list carries it'),
            el('pre', { class: 'json', dataset: { testid: 'definition' } }, fmtJson(def))))));
  }

  // "overlay file.yaml#/…": the kind of source first, as a badge, then where.
  function sourceOf(source) {
    const text = String(source);
    const m = /^((?:unlisted )?overlay|spec|x-mcp|config|default|generated)\b\s*(.*)$/.exec(text);
    if (!m) return text;
    return [badge(m[1], 'src-' + m[1].replace('unlisted ', '')), ' ', el('code', {}, m[2])];
  }

  function scopesOf(scopes) {
    if (!scopes || !scopes.length) return el('span', { class: 'muted' }, 'none: any token may call it');
    return scopes.map((alt, i) => [i ? ' or ' : '', alt.map((s) => el('code', {}, s)).reduce((acc, c, j) => acc.concat(j ? [' + ', c] : [c]), [])]);
  }

  // ---------------------------------------------------------------------------------------
  // Try it: a form from inputSchema, a JSON editor of the whole arguments object kept in
  // sync with it, and the call through the same pipeline as a client's.

  // The type a field is drawn as: 'enum', 'boolean', 'integer', 'number', 'string' or 'json'.
  function fieldKind(schema) {
    if (!schema || typeof schema !== 'object') return 'json';
    if (Array.isArray(schema.enum) && schema.enum.length && schema.enum.every((v) => typeof v === 'string' || typeof v === 'number')) return 'enum';
    let type = schema.type;
    if (Array.isArray(type)) {
      const real = type.filter((x) => x !== 'null');
      type = real.length === 1 ? real[0] : null;
    }
    if (!type && Array.isArray(schema.anyOf || schema.oneOf)) {
      const real = (schema.anyOf || schema.oneOf).filter((s) => s && s.type !== 'null');
      if (real.length === 1) return fieldKind(real[0]);
    }
    return ['boolean', 'integer', 'number', 'string'].includes(type) ? type : 'json';
  }

  function tryIt(t) {
    const schema = (t.definition && t.definition.inputSchema) || {};
    const props = schema.properties || {};
    const required = new Set(schema.required || []);
    const fields = []; // {name, kind, input, read(), write(value)}
    const raw = el('textarea', { class: 'json-editor', rows: '6', spellcheck: 'false', dataset: { testid: 'args-json' }, 'aria-label': 'arguments as JSON' });
    const rawError = el('p', { class: 'error small', hidden: true });
    let args = {};

    // One field per top-level property.
    for (const [name, prop] of Object.entries(props)) {
      const kind = fieldKind(prop);
      const id = 'arg-' + name;
      let input;
      if (kind === 'enum') {
        input = el('select', { id, dataset: { testid: id } }, el('option', { value: '' }, required.has(name) ? '— choose —' : '— unset —'),
          prop.enum.map((v) => el('option', { value: String(v) }, String(v))));
      } else if (kind === 'boolean') {
        input = el('input', { id, type: 'checkbox', dataset: { testid: id } });
      } else if (kind === 'integer' || kind === 'number') {
        input = el('input', { id, type: 'number', step: kind === 'integer' ? '1' : 'any', dataset: { testid: id },
          min: prop.minimum, max: prop.maximum, placeholder: prop.default !== undefined ? 'default ' + prop.default : '' });
      } else if (kind === 'string') {
        input = el('input', { id, type: 'text', dataset: { testid: id }, spellcheck: 'false',
          placeholder: prop.default !== undefined ? 'default ' + prop.default : (prop.format || '') });
      } else {
        input = el('textarea', { id, rows: '3', class: 'json-field', dataset: { testid: id }, spellcheck: 'false', placeholder: 'JSON' });
      }
      const field = { name, kind, input, required: required.has(name), error: el('span', { class: 'error small', hidden: true }) };
      const enumValue = (text) => prop.enum.find((v) => String(v) === text);
      field.read = () => readField(field, enumValue);
      field.write = (value) => writeField(field, value);
      fields.push(field);
      input.addEventListener(kind === 'boolean' || kind === 'enum' ? 'change' : 'input', () => {
        fromFields();
      });
    }

    // The arguments object from the fields (a field left empty is omitted), into the editor.
    function fromFields() {
      const next = {};
      for (const f of fields) {
        const r = f.read();
        f.error.hidden = r.ok;
        f.error.textContent = r.ok ? '' : r.error;
        if (r.ok && r.value !== undefined) next[f.name] = r.value;
      }
      // Keys the editor holds that no field draws (additional properties) are kept.
      for (const [k, v] of Object.entries(args)) if (!(k in props)) next[k] = v;
      args = next;
      raw.value = fmtJson(args);
      rawError.hidden = true;
    }

    // The editor into the fields, when it parses as an object.
    raw.addEventListener('input', () => {
      let parsed;
      try {
        parsed = JSON.parse(raw.value || '{}');
      } catch (e) {
        rawError.textContent = 'Not valid JSON: ' + e.message;
        rawError.hidden = false;
        return;
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        rawError.textContent = 'The arguments must be a JSON object.';
        rawError.hidden = false;
        return;
      }
      rawError.hidden = true;
      args = parsed;
      for (const f of fields) f.write(args[f.name]);
    });

    const button = el('button', { type: 'submit', class: 'primary', dataset: { testid: 'try-call' } }, 'Call ' + t.name);
    const out = el('div', { class: 'try-out', dataset: { testid: 'try-output' } });
    const form = el('form', { class: 'try-form', dataset: { testid: 'try-form' }, autocomplete: 'off' },
      fields.length
        ? el('div', { class: 'fields' }, fields.map((f) => {
          const prop = props[f.name] || {};
          const label = el('label', { for: f.input.id }, el('code', {}, f.name), required.has(f.name) ? el('span', { class: 'req', title: 'required' }, ' *') : null,
            el('span', { class: 'muted small' }, ' ' + (f.kind === 'json' ? 'JSON' : f.kind)));
          return el('div', { class: 'field' + (f.kind === 'boolean' ? ' check' : '') }, label, f.input,
            prop.description ? el('span', { class: 'hint' }, prop.description) : null, f.error);
        }))
        : el('p', { class: 'muted' }, 'This tool takes no arguments.'),
      el('label', { class: 'raw-label' }, 'arguments (JSON, kept in step with the fields)'),
      raw, rawError,
      el('div', { class: 'actions' }, button,
        t.confirm ? el('span', { class: 'muted small' }, 'This tool asks for confirmation before anything is sent.') : null));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (!rawError.hidden) return;
      button.disabled = true;
      try {
        await runCall(t, args, out);
      } finally {
        button.disabled = false;
      }
    });
    fromFields();
    return [el('h2', {}, 'Try it'), form, out];
  }

  // A field's value: {ok, value} (undefined: left out of the arguments) or {ok: false, error}.
  // An unchecked box is false when the argument is required or the editor said false, else
  // left out.
  function readField(f, enumValue) {
    const input = f.input;
    if (f.kind === 'boolean') {
      if (input.checked) return { ok: true, value: true };
      return { ok: true, value: f.required || input.dataset.explicit === 'false' ? false : undefined };
    }
    const text = input.value;
    if (text === '') return { ok: true, value: undefined };
    if (f.kind === 'enum') return { ok: true, value: enumValue(text) };
    if (f.kind === 'integer' || f.kind === 'number') {
      const n = Number(text);
      if (!Number.isFinite(n) || (f.kind === 'integer' && !Number.isInteger(n))) return { ok: false, error: 'not ' + (f.kind === 'integer' ? 'an integer' : 'a number') };
      return { ok: true, value: n };
    }
    if (f.kind === 'string') return { ok: true, value: text };
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch (e) {
      return { ok: false, error: 'not valid JSON' };
    }
  }

  function writeField(f, value) {
    const input = f.input;
    f.error.hidden = true;
    if (f.kind === 'boolean') {
      input.checked = value === true;
      input.dataset.explicit = value === false ? 'false' : '';
    } else if (f.kind === 'json') {
      input.value = value === undefined ? '' : fmtJson(value);
    } else {
      input.value = value === undefined || value === null ? '' : String(value);
    }
  }

  // One call, and its confirmation round when the tool asks for one.
  async function runCall(t, args, out) {
    const body = { name: t.name, arguments: args, revision: state.detail ? state.detail.revision : DEFAULT_REVISION,
      client: state.detail && state.detail.client ? state.detail.client : null, state: null, answer: null };
    clear(out, el('p', { class: 'muted' }, 'Calling…'));
    let answer;
    try {
      answer = await api('call', body);
      // The dialog is for a confirmation only: an `ask` that comes with a result (2026-07-28's
      // input_required for a missing argument, say) is shown as the result the model gets.
      if (answer.ask && isConfirmation(answer)) {
        const choice = await confirmDialog(answer.ask.message);
        clear(out, el('p', { class: 'muted' }, choice === 'accept' ? 'Confirmed; sending…' : 'Declined; telling restmcp…'));
        answer = await api('call', Object.assign({}, body, { state: answer.ask.state, answer: choice }));
      }
    } catch (e) {
      if (e instanceof Unauthorized) return;
      clear(out, el('p', { class: 'error', dataset: { testid: 'call-error' } }, 'The call was refused: ' + e.message));
      return;
    }
    drawAnswer(out, answer);
  }

  function isConfirmation(answer) {
    const r = answer.result;
    if (!r) return true;
    return !!(r.inputRequests && r.inputRequests.confirm);
  }

  // The confirmation dialog: resolves 'accept' or 'decline' (Escape declines).
  function confirmDialog(message) {
    const dialog = $('confirm');
    $('confirm-message').textContent = message;
    return new Promise((resolve) => {
      const done = (choice) => {
        $('confirm-accept').removeEventListener('click', accept);
        $('confirm-decline').removeEventListener('click', decline);
        dialog.removeEventListener('cancel', cancel);
        dialog.close();
        resolve(choice);
      };
      const accept = () => done('accept');
      const decline = () => done('decline');
      const cancel = (e) => { e.preventDefault(); done('decline'); };
      $('confirm-accept').addEventListener('click', accept);
      $('confirm-decline').addEventListener('click', decline);
      dialog.addEventListener('cancel', cancel);
      dialog.showModal();
      $('confirm-decline').focus(); // the safe choice has the focus
    });
  }

  function drawAnswer(out, a) {
    const result = a.result || {};
    const isError = result.isError === true;
    const req = a.request;
    const request = req
      ? [el('div', { class: 'req-line' }, methodBadge(req.method), ' ', el('code', {}, req.url)),
        el('table', { class: 'grid headers' }, el('tbody', {}, (req.headers || []).map(([k, v]) =>
          el('tr', {}, el('td', {}, el('code', {}, k)), el('td', { class: v === '[redacted]' ? 'muted' : '' }, el('code', {}, v)))))),
        req.body !== null && req.body !== undefined ? el('pre', { class: 'json' }, req.body) : null]
      : el('p', { class: 'muted' }, 'Nothing was sent upstream.');
    const timing = [
      a.status !== null && a.status !== undefined ? badge(String(a.status), a.status < 400 ? 'ok' : 'danger', 'upstream status') : badge('no status', 'muted'),
      ' ', el('span', {}, 'total ', el('strong', {}, fmtMs(a.duration_ms))),
      a.upstream_ms !== null && a.upstream_ms !== undefined ? el('span', {}, ' · upstream ', el('strong', {}, fmtMs(a.upstream_ms))) : null,
    ];
    clear(out,
      el('div', { class: 'call-timing', dataset: { testid: 'call-timing' } },
        isError ? badge('isError', 'danger', 'The model sees an error result')
          : result.resultType && result.resultType !== 'complete' ? badge(result.resultType, 'warn', 'Not a final result: restmcp asks for more')
            : badge('ok', 'ok'), ' ', timing),
      el('h3', {}, 'Result, as the model receives it'),
      el('pre', { class: 'json result' + (isError ? ' is-error' : ''), dataset: { testid: 'call-result' } }, fmtJson(a.result)),
      el('h3', {}, 'Request restmcp sent'),
      el('div', { class: 'call-request', dataset: { testid: 'call-request' } }, request),
      a.log && a.log.length ? [el('h3', {}, 'Log'), el('ul', { class: 'log', dataset: { testid: 'call-log' } },
        a.log.map((l) => el('li', { class: 'lvl-' + l.level }, el('span', { class: 'lvl' }, l.level), ' ', l.text)))] : null);
  }

  // ---------------------------------------------------------------------------------------
  // Calls: the live feed

  async function openFeed() {
    const controller = new AbortController();
    state.feed = controller;
    let delay = 1000;
    while (state.feed === controller) {
      setFeedStatus('connecting');
      try {
        // Reconnecting, the page names the last call it has, and gets only what came after.
        const extra = { Accept: 'text/event-stream' };
        if (state.lastCallId) extra['Last-Event-ID'] = state.lastCallId;
        const response = await fetch(API + 'calls', { headers: headers(extra), signal: controller.signal, cache: 'no-store' });
        if (response.status === 401) {
          needToken('That token was refused.');
          return;
        }
        if (!response.ok || !response.body) throw new Error('HTTP ' + response.status);
        setFeedStatus('live');
        delay = 1000;
        await readEvents(response.body, (event, data, id) => {
          if (event === 'call') {
            try {
              addCall(JSON.parse(data));
              if (id) state.lastCallId = id;
            } catch (_) { /* a malformed event is skipped */ }
          }
        });
      } catch (e) {
        if (controller.signal.aborted) return;
      }
      if (state.feed !== controller) return;
      setFeedStatus('down');
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30000);
    }
  }

  // Server-sent events from a fetch body: calls back (event, data, id) per event.
  async function readEvents(stream, onEvent) {
    const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n?/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        let id = '';
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue; // a comment: keep-alive
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event = value;
          else if (field === 'data') data.push(value);
          else if (field === 'id') id = value;
        }
        if (data.length) onEvent(event, data.join('\n'), id);
      }
      if (buffer.length > 1 << 20) buffer = ''; // one event over 1 MiB: not ours; drop it
    }
  }

  function setFeedStatus(s) {
    if (state.feedStatus === s) return;
    state.feedStatus = s;
    renderStatus();
  }

  function addCall(call) {
    state.calls.push(call);
    if (state.calls.length > CALLS_MAX) state.calls.splice(0, state.calls.length - CALLS_MAX);
    if (state.route.page !== 'calls') return;
    const body = $('call-rows');
    if (!body) return;
    const empty = body.querySelector('.empty-row');
    if (empty) empty.remove();
    body.prepend(callRow(call));
    while (body.children.length > CALLS_MAX) body.lastElementChild.remove();
    const count = $('call-count');
    if (count) count.textContent = callCount();
  }

  const callCount = () => `${fmtInt(state.calls.length)} recent calls (at most ${CALLS_MAX} kept)`;

  function outcomeBadge(c) {
    const ok = c.outcome === 'ok';
    const kind = ok ? 'ok' : /4xx|tool_error|refused|declined|unconfirmed|invalid|rate/.test(c.outcome || '') ? 'warn' : 'danger';
    return [badge(c.outcome || '?', kind), c.status !== null && c.status !== undefined ? el('span', { class: 'muted' }, ' ' + c.status) : null];
  }

  function callRow(c) {
    return el('tr', { dataset: { testid: 'call-row', tool: c.tool, outcome: c.outcome || '' } },
      el('td', { class: 'mono' }, fmtTime(c.at)),
      el('td', {}, el('a', { href: '#/tools/' + encodeURIComponent(c.tool) }, c.tool), el('span', { class: 'muted' }, ' ' + (c.api || ''))),
      el('td', { class: 'mono muted' }, c.caller || '—'),
      el('td', {}, outcomeBadge(c)),
      el('td', { class: 'num' }, fmtMs(c.duration_ms)),
      el('td', { class: 'num muted' }, fmtMs(c.upstream_ms)),
      el('td', { class: 'num' }, fmtBytes(c.bytes_sent)),
      el('td', { class: 'num' }, fmtBytes(c.bytes_received)),
      el('td', { class: 'num' }, c.attempts === undefined ? '—' : String(c.attempts)),
      state.overview && state.overview.show_arguments
        ? el('td', { class: 'mono args' }, c.arguments === null || c.arguments === undefined ? '' : JSON.stringify(c.arguments))
        : null);
  }

  function renderCalls() {
    const root = $('calls');
    const showArgs = state.overview && state.overview.show_arguments;
    const rows = state.calls.slice().reverse().map(callRow);
    clear(root,
      el('div', { class: 'page-head' }, el('h1', {}, 'Calls'), el('span', { class: 'muted', id: 'call-count' }, callCount())),
      el('div', { class: 'charts' },
        el('figure', { class: 'card chart' },
          el('figcaption', {}, 'Calls per second', el('span', { class: 'muted', id: 'rate-note' })),
          el('canvas', { id: 'chart-rate', dataset: { testid: 'chart-rate' }, width: '600', height: '200' }),
          el('div', { class: 'legend', id: 'rate-legend' })),
        el('figure', { class: 'card chart' },
          el('figcaption', {}, 'Latency p50 / p95 / p99 per tool', el('span', { class: 'muted', id: 'latency-note' })),
          el('canvas', { id: 'chart-latency', dataset: { testid: 'chart-latency' }, width: '600', height: '200' }),
          el('div', { class: 'legend', id: 'latency-legend' }))),
      el('table', { class: 'grid calls-table' },
        el('thead', {}, el('tr', {},
          el('th', {}, 'time'), el('th', {}, 'tool'), el('th', {}, 'caller'), el('th', {}, 'outcome'),
          el('th', { class: 'num' }, 'latency'), el('th', { class: 'num' }, 'upstream'), el('th', { class: 'num' }, 'sent'),
          el('th', { class: 'num' }, 'received'), el('th', { class: 'num' }, 'attempts'), showArgs ? el('th', {}, 'arguments') : null)),
        el('tbody', { id: 'call-rows' }, rows.length ? rows
          : el('tr', { class: 'empty-row' }, el('td', { colspan: showArgs ? '10' : '9', class: 'empty' }, 'No call yet. Calls appear here as they happen.')))),
      showArgs ? null : el('p', { class: 'muted small' }, 'Argument values are not shown (server.console_arguments = false).'));
    drawCharts();
  }

  // ---------------------------------------------------------------------------------------
  // Stats: polled every 2 s, kept for 10 minutes, drawn as two charts

  async function pollStats() {
    let snap;
    try {
      snap = await api('stats');
    } catch (_) {
      return;
    }
    const s = state.stats;
    if (s.length && snap.at_ms <= s[s.length - 1].at_ms) return;
    s.push(snap);
    while (s.length > STATS_MAX || (s.length > 1 && s[0].at_ms < snap.at_ms - STATS_KEEP_MS)) s.shift();
    if (state.route.page === 'calls') drawCharts();
  }

  // Colours come from the stylesheet (so dark mode applies): --c1 … --c5, --grid, --fg.
  function palette() {
    const css = getComputedStyle(document.documentElement);
    const v = (name) => css.getPropertyValue(name).trim();
    return { series: [v('--c1'), v('--c2'), v('--c3'), v('--c4'), v('--c5')], grid: v('--grid'), fg: v('--muted'), text: v('--fg') };
  }

  // A canvas sized for the screen's pixel density; returns its 2D context in CSS pixels.
  function prepare(canvas) {
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 600;
    const height = canvas.clientHeight || 200;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = '11px system-ui, sans-serif';
    return { ctx, width, height };
  }

  function drawCharts() {
    const rate = $('chart-rate');
    const latency = $('chart-latency');
    if (rate) drawRate(rate);
    if (latency) drawLatency(latency);
  }

  // Calls per second between consecutive snapshots: all tools, and the busiest few.
  function drawRate(canvas) {
    const { ctx, width, height } = prepare(canvas);
    const colors = palette();
    const s = state.stats;
    const legend = $('rate-legend');
    const note = $('rate-note');
    if (s.length < 2) {
      ctx.fillStyle = colors.fg;
      ctx.fillText('Waiting for a second sample…', 12, height / 2);
      canvas.dataset.points = '0';
      if (legend) legend.replaceChildren();
      return;
    }
    // Calls per tool over the whole kept window pick the busiest tools.
    const first = s[0].tools || {};
    const last = s[s.length - 1].tools || {};
    const busiest = Object.keys(last)
      .map((name) => [name, last[name].calls - ((first[name] || {}).calls || 0)])
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1])
      .slice(0, CHART_TOOLS)
      .map(([name]) => name);
    const series = [{ name: 'all', points: [] }].concat(busiest.map((name) => ({ name, points: [] })));
    for (let i = 1; i < s.length; i++) {
      const dt = (s[i].at_ms - s[i - 1].at_ms) / 1000;
      if (dt <= 0) continue;
      const a = s[i - 1].tools || {};
      const b = s[i].tools || {};
      let all = 0;
      for (const name of Object.keys(b)) all += Math.max(0, b[name].calls - ((a[name] || {}).calls || 0));
      series[0].points.push([s[i].at_ms, all / dt]);
      for (const line of series.slice(1)) {
        const d = Math.max(0, ((b[line.name] || {}).calls || 0) - ((a[line.name] || {}).calls || 0));
        line.points.push([s[i].at_ms, d / dt]);
      }
    }
    // At least the last minute across, so that the first samples start at the right.
    const t1 = s[s.length - 1].at_ms;
    const t0 = Math.min(s[0].at_ms, t1 - 60000);
    const maxY = niceMax(Math.max(0.1, ...series[0].points.map((p) => p[1])));
    const pad = { l: 40, r: 10, t: 10, b: 20 };
    const x = (t) => pad.l + ((t - t0) / Math.max(1, t1 - t0)) * (width - pad.l - pad.r);
    const y = (v) => height - pad.b - (v / maxY) * (height - pad.t - pad.b);
    axes(ctx, colors, width, height, pad, maxY, (v) => (v < 1 ? v.toFixed(2) : v < 10 ? v.toFixed(1) : String(Math.round(v))), `${Math.round((t1 - t0) / 1000)} s`);
    let drawn = 0;
    series.forEach((line, i) => {
      ctx.strokeStyle = colors.series[i % colors.series.length];
      ctx.lineWidth = i === 0 ? 2 : 1.25;
      ctx.beginPath();
      line.points.forEach(([t, v], j) => (j ? ctx.lineTo(x(t), y(v)) : ctx.moveTo(x(t), y(v))));
      ctx.stroke();
      if (line.points.length === 1) { // one sample so far: a dot
        const [t, v] = line.points[0];
        ctx.fillStyle = ctx.strokeStyle;
        ctx.beginPath();
        ctx.arc(x(t), y(v), 2.5, 0, 2 * Math.PI);
        ctx.fill();
      }
      drawn += line.points.length;
    });
    canvas.dataset.points = String(drawn);
    if (note) note.textContent = ` · last ${Math.round((t1 - t0) / 1000)} s · now ${series[0].points[series[0].points.length - 1][1].toFixed(2)}/s`;
    if (legend) clear(legend, series.map((line, i) => legendItem(line.name, colors.series[i % colors.series.length])));
  }

  // p50, p95, p99 per tool from the bucket counts that grew in the window (or since start,
  // when nothing grew in the window), each the upper bound of the bucket reaching p·total.
  function drawLatency(canvas) {
    const { ctx, width, height } = prepare(canvas);
    const colors = palette();
    const s = state.stats;
    const legend = $('latency-legend');
    const note = $('latency-note');
    if (!s.length) {
      ctx.fillStyle = colors.fg;
      ctx.fillText('Waiting for the first sample…', 12, height / 2);
      canvas.dataset.points = '0';
      return;
    }
    const last = s[s.length - 1];
    const bounds = last.buckets || [];
    let base = s.find((snap) => snap.at_ms >= last.at_ms - LATENCY_WINDOW_MS) || s[0];
    let counted = histograms(base, last);
    let window = `last ${Math.max(1, Math.round((last.at_ms - base.at_ms) / 60000))} min`;
    if (!counted.length) {
      counted = histograms(null, last);
      window = 'since start';
    }
    counted = counted.sort((a, b) => b.total - a.total).slice(0, LATENCY_TOOLS);
    if (note) note.textContent = ' · ' + window;
    if (!counted.length) {
      ctx.fillStyle = colors.fg;
      ctx.fillText('No call yet.', 12, height / 2);
      canvas.dataset.points = '0';
      if (legend) legend.replaceChildren();
      return;
    }
    const ps = [0.5, 0.95, 0.99];
    const rows = counted.map((h) => ({ name: h.name, values: ps.map((p) => quantile(h.counts, bounds, p)) }));
    // A log scale from the smallest bucket bound to the largest value (or the top bound).
    const finite = rows.flatMap((r) => r.values).filter((v) => Number.isFinite(v));
    const lo = Math.max(1e-4, Math.min(bounds[0] || 0.001, ...finite) / 2);
    const hi = Math.max(...finite, bounds[bounds.length - 1] || 1) * 1.2;
    const pad = { l: 172, r: 24, t: 8, b: 20 };
    const x = (v) => pad.l + (Math.log(Math.min(v, hi) / lo) / Math.log(hi / lo)) * (width - pad.l - pad.r);
    const rowH = Math.min(32, (height - pad.t - pad.b) / rows.length);
    // Vertical grid lines on the powers of ten.
    ctx.strokeStyle = colors.grid;
    ctx.fillStyle = colors.fg;
    ctx.lineWidth = 1;
    for (let e = Math.ceil(Math.log10(lo)); Math.pow(10, e) <= hi; e++) {
      const gx = Math.round(x(Math.pow(10, e))) + 0.5;
      ctx.beginPath();
      ctx.moveTo(gx, pad.t);
      ctx.lineTo(gx, height - pad.b);
      ctx.stroke();
      const label = fmtMs(Math.pow(10, e) * 1000).replace('.0 ', ' ');
      ctx.fillText(label, Math.min(gx - 12, width - ctx.measureText(label).width - 2), height - 6);
    }
    let drawn = 0;
    rows.forEach((row, i) => {
      const top = pad.t + i * rowH;
      // The tool's name, and its three values under it.
      ctx.fillStyle = colors.text;
      ctx.fillText(row.name.length > 22 ? row.name.slice(0, 21) + '…' : row.name, 6, top + rowH / 2 - 1);
      ctx.fillStyle = colors.fg;
      ctx.fillText(row.values.map((v) => (Number.isFinite(v) ? fmtMs(v * 1000) : '∞')).join(' / '), 6, top + rowH / 2 + 11);
      const barH = Math.max(3, (rowH - 6) / 3);
      row.values.forEach((v, j) => {
        ctx.fillStyle = colors.series[j];
        const w = Number.isFinite(v) ? x(v) - pad.l : width - pad.l - pad.r;
        ctx.fillRect(pad.l, top + 3 + j * barH, Math.max(2, w), barH - 1);
        drawn++;
      });
    });
    canvas.dataset.points = String(drawn);
    canvas.dataset.tools = rows.map((r) => r.name).join(' ');
    if (legend) clear(legend, ps.map((p, j) => legendItem('p' + Math.round(p * 100), colors.series[j])), el('span', { class: 'muted' }, ' (bucket upper bounds; ∞ past the last)'));
  }

  // Per tool, the bucket counts that grew from `from` (null: from zero) to `to`.
  function histograms(from, to) {
    const out = [];
    const before = (from && from.tools) || {};
    for (const [name, t] of Object.entries(to.tools || {})) {
      const b = (before[name] || {}).counts || [];
      const counts = (t.counts || []).map((c, i) => Math.max(0, c - (b[i] || 0)));
      const total = counts.reduce((x, y) => x + y, 0);
      if (total > 0) out.push({ name, counts, total });
    }
    return out;
  }

  // The upper bound (seconds) of the bucket where the cumulative count reaches p·total.
  function quantile(counts, bounds, p) {
    const total = counts.reduce((x, y) => x + y, 0);
    let seen = 0;
    for (let i = 0; i < counts.length; i++) {
      seen += counts[i];
      if (seen >= p * total) return i < bounds.length ? bounds[i] : Infinity;
    }
    return Infinity;
  }

  function niceMax(v) {
    const e = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 5, 10]) if (m * e >= v) return m * e;
    return 10 * e;
  }

  function axes(ctx, colors, width, height, pad, maxY, fmt, span) {
    ctx.strokeStyle = colors.grid;
    ctx.fillStyle = colors.fg;
    ctx.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const v = (maxY * i) / 4;
      const gy = Math.round(height - pad.b - (i / 4) * (height - pad.t - pad.b)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(pad.l, gy);
      ctx.lineTo(width - pad.r, gy);
      ctx.stroke();
      ctx.fillText(fmt(v), 4, gy + 4);
    }
    ctx.fillText('−' + span, pad.l, height - 5);
    ctx.fillText('now', width - pad.r - 22, height - 5);
  }

  function legendItem(name, color) {
    const swatch = el('span', { class: 'swatch' });
    swatch.style.background = color; // CSSOM, which the CSP allows
    return el('span', { class: 'legend-item' }, swatch, name);
  }

  window.addEventListener('resize', debounce(() => { if (state.route.page === 'calls') drawCharts(); }, 200));

  // ---------------------------------------------------------------------------------------

  if (!location.hash) history.replaceState(null, '', '#/apis');
  route(); // the nav's highlight, before anything is fetched
  start();
})();
