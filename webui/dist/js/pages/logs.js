// Logs: /admin/logs filtered by time range, channel, token, model, status
// and failure scope, paged by cursor (before = the last row id), with a
// column chooser kept in localStorage. A row opens its attempts and its
// usage and cost. Filters live in the URL, so a view can be shared.
import { api, h, put, qs, table, badge, store, fmtInt, fmtCost, fmtMs, fmtTime, fmtWhen, statusClass } from '../lib.js';

export const title = 'Logs';

const COLUMNS_KEY = 'ccload.logs.columns';
const RANGES = [['15m', 'Last 15 min'], ['1h', 'Last hour'], ['6h', 'Last 6 h'], ['24h', 'Last 24 h'], ['7d', 'Last 7 days'], ['', 'All'], ['custom', 'Custom…']];
const LIMITS = ['25', '50', '100', '200'];

const proto = (r) => (r.upstream_protocol && r.upstream_protocol !== r.client_protocol
  ? `${r.client_protocol} → ${r.upstream_protocol}` : r.client_protocol);

/** columns: key, label, value (text or a <td>), num (right-aligned), on (shown by default). */
const columns = [
  { key: 'time', label: 'Time', on: true, value: (r) => h('td', { class: 'nowrap', title: fmtTime(r.time) }, fmtWhen(r.time)) },
  { key: 'token', label: 'Token', on: true, value: (r) => r.token },
  { key: 'channel', label: 'Channel', on: true, value: (r) => r.channel },
  { key: 'model', label: 'Model', on: true, value: (r) => h('td', { class: 'nowrap' }, r.upstream_model && r.upstream_model !== r.model ? `${r.model} → ${r.upstream_model}` : r.model) },
  { key: 'protocols', label: 'Protocols', value: proto },
  { key: 'status', label: 'Status', on: true, value: (r) => h('td', {}, badge(r.status ? String(r.status) : 'none', statusClass(r.status))) },
  { key: 'failure', label: 'Failure', on: true, value: (r) => [r.failure_kind, r.failure_scope && `(${r.failure_scope})`].filter(Boolean).join(' ') },
  { key: 'attempts', label: 'Attempts', num: true, on: true, value: (r) => fmtInt(r.attempts) },
  { key: 'ttfb', label: 'TTFB', num: true, on: true, value: (r) => (r.ttfb_ms || statusClass(r.status) === 'ok' ? fmtMs(r.ttfb_ms) : '–') },
  { key: 'duration', label: 'Duration', num: true, on: true, value: (r) => fmtMs(r.duration_ms) },
  { key: 'input', label: 'Tokens in', num: true, on: true, value: (r) => fmtInt(r.input_tokens) },
  { key: 'output', label: 'Tokens out', num: true, on: true, value: (r) => fmtInt(r.output_tokens) },
  { key: 'cache_read', label: 'Cache read', num: true, value: (r) => fmtInt(r.cache_read_tokens) },
  { key: 'cache_write', label: 'Cache write', num: true, value: (r) => fmtInt(r.cache_write_tokens) },
  { key: 'reasoning', label: 'Reasoning', num: true, value: (r) => fmtInt(r.reasoning_tokens) },
  { key: 'cost', label: 'Cost', num: true, on: true, value: (r) => fmtCost(r.cost) },
  { key: 'stream', label: 'Stream', value: (r) => (r.stream ? (r.incomplete ? 'yes, cut' : 'yes') : 'no') },
  { key: 'key', label: 'Key', value: (r) => h('td', { class: 'mono nowrap' }, r.key) },
  { key: 'url', label: 'URL', value: (r) => h('td', { class: 'mono' }, r.url) },
  { key: 'client_ip', label: 'Client IP', value: (r) => r.client_ip },
  { key: 'request_id', label: 'Request ID', value: (r) => h('td', { class: 'mono' }, r.request_id) },
  { key: 'error', label: 'Error', value: (r) => h('td', { class: 'err wide' }, r.error) },
];

export async function mount(root, ctx) {
  const p = ctx.params;
  let shown = new Set(store.get(COLUMNS_KEY, columns.filter((c) => c.on).map((c) => c.key)));
  const cursors = []; // the "before" of each newer page, for Newer
  let before = p.get('before') || '';
  let rows = [];
  let next = 0;
  let seq = 0; // only the latest load renders
  let lastApplied = '';

  // Filters.
  const rangeParam = p.get('range') ?? '24h';
  const rangeVal = p.has('since') || p.has('until') ? 'custom' : rangeParam === 'all' ? '' : rangeParam;
  const range = select('range', RANGES, rangeVal);
  const since = h('input', { type: 'datetime-local', name: 'since', step: 1, value: toLocalInput(p.get('since')) });
  const until = h('input', { type: 'datetime-local', name: 'until', step: 1, value: toLocalInput(p.get('until')) });
  const sinceL = h('label', {}, 'From', since);
  const untilL = h('label', {}, 'To', until);
  const channel = select('channel', [['', 'Any']], p.get('channel') || '');
  const token = select('token', [['', 'Any']], p.get('token') || '');
  const model = h('input', { type: 'search', name: 'model', list: 'models', placeholder: 'any', value: p.get('model') || '', size: 18 });
  const models = h('datalist', { id: 'models' });
  const status = select('status', [['', 'Any'], ['2xx', '2xx'], ['3xx', '3xx'], ['4xx', '4xx'], ['5xx', '5xx']], p.get('status') || '');
  const scope = select('scope', [['', 'Any'], ['key', 'key'], ['model', 'model'], ['url', 'url'], ['channel', 'channel']], p.get('scope') || '');
  const limit = select('limit', LIMITS.map((l) => [l, l]), LIMITS.includes(p.get('limit')) ? p.get('limit') : '50');
  const form = h('form', { class: 'filters card', role: 'search', 'aria-label': 'Filter logs', onsubmit: (e) => { e.preventDefault(); apply(); } },
    h('label', {}, 'Time', range), sinceL, untilL,
    h('label', {}, 'Channel', channel), h('label', {}, 'Token', token), h('label', {}, 'Model', model, models),
    h('label', {}, 'Status', status), h('label', {}, 'Failure scope', scope), h('label', {}, 'Rows', limit),
    h('button', { type: 'submit', class: 'btn primary' }, 'Apply'),
    h('button', { type: 'button', class: 'btn', onclick: () => ctx.navigate('/web/logs') }, 'Reset'));
  for (const el of [range, since, until, channel, token, model, status, scope, limit]) el.addEventListener('change', apply);
  const showCustom = () => { sinceL.hidden = untilL.hidden = range.value !== 'custom'; };
  range.addEventListener('change', showCustom);
  showCustom();

  // Column chooser.
  const chooser = h('details', { class: 'columns' }, h('summary', { class: 'btn' }, 'Columns'),
    h('fieldset', { class: 'menu' }, h('legend', { class: 'sr-only' }, 'Columns shown'), columns.map((c) => h('label', {},
      h('input', { type: 'checkbox', name: 'col', value: c.key, checked: shown.has(c.key), onchange: (e) => {
        if (e.target.checked) shown.add(c.key); else shown.delete(c.key);
        store.set(COLUMNS_KEY, columns.filter((x) => shown.has(x.key)).map((x) => x.key));
        renderTable();
      } }), c.label))));

  const info = h('span', { class: 'muted grow', id: 'page-info', role: 'status' });
  const newest = h('button', { type: 'button', class: 'btn', onclick: () => { cursors.length = 0; before = ''; load(); } }, '« Newest');
  const newer = h('button', { type: 'button', class: 'btn', onclick: () => { before = cursors.pop() ?? ''; load(); } }, '‹ Newer');
  const older = h('button', { type: 'button', class: 'btn', onclick: () => { cursors.push(before); before = String(next); load(); } }, 'Older ›');
  const box = h('div', { id: 'logs-table' });
  root.append(h('h1', {}, 'Logs'), form, h('div', { class: 'toolbar' }, info, chooser), box,
    h('div', { class: 'toolbar' }, h('span', { class: 'grow' }), newest, newer, older));

  // The choices of the filters come from the config (cheap: no database).
  api('/admin/config', { signal: ctx.signal }).then(({ config: c }) => {
    fill(channel, c.channels.map((x) => x.name));
    fill(token, c.tokens.map((x) => x.name));
    const names = new Set(c.channels.flatMap((x) => x.models.map((m) => m.name)));
    put(models, ...[...names].sort().map((n) => h('option', { value: n })));
  }).catch(() => {});

  lastApplied = JSON.stringify(query());
  await load();
  ctx.ready();

  function query() {
    const q = { channel: channel.value, token: token.value, model: model.value.trim(), status: status.value, scope: scope.value, limit: limit.value };
    if (range.value === 'custom') {
      q.since = fromLocalInput(since.value);
      q.until = fromLocalInput(until.value);
    } else {
      q.range = range.value || 'all';
    }
    return q;
  }

  function apply() {
    if (range.value === 'custom' && !since.value && !until.value) return; // wait for a date
    const q = query();
    if (JSON.stringify(q) !== lastApplied) { // Enter in a field fires change, then submit
      lastApplied = JSON.stringify(q);
      cursors.length = 0;
      before = '';
      history.pushState({}, '', `/web/logs${qs({ ...q, limit: q.limit === '50' ? '' : q.limit, range: q.range === '24h' ? '' : q.range })}`);
    }
    load();
  }

  async function load() {
    const q = query();
    const apiQ = { ...q, range: undefined, before };
    if (q.range && q.range !== 'all') apiQ.since = q.range; // a duration back from now
    info.textContent = 'Loading…';
    const mine = ++seq;
    try {
      const res = await api(`/admin/logs${qs(apiQ)}`, { signal: ctx.signal });
      if (mine !== seq) return;
      rows = res.rows;
      next = res.next_before;
    } catch (err) {
      if (err.name === 'AbortError' || mine !== seq) return;
      info.textContent = '';
      put(box, h('p', { class: 'alert', role: 'alert' }, `Could not load the logs: ${err.message}`));
      return;
    }
    renderTable();
    const first = rows.length ? rows[0].id : 0;
    const last = rows.length ? rows[rows.length - 1].id : 0;
    info.textContent = rows.length ? `${fmtInt(rows.length)} request${rows.length === 1 ? '' : 's'}, ids ${fmtInt(last)}–${fmtInt(first)}` : 'No matching requests.';
    newest.disabled = newer.disabled = !before;
    older.disabled = !next;
  }

  function renderTable() {
    const cols = columns.filter((c) => shown.has(c.key));
    const head = [{ label: '' }, ...cols];
    const trs = rows.map((r) => {
      const id = `log-${r.id}`;
      const btn = h('button', { type: 'button', class: 'disclose', 'aria-expanded': 'false', 'aria-controls': id, 'aria-label': `Details of request ${r.id}` }, h('span', { 'aria-hidden': 'true' }, '▸'));
      const tr = h('tr', { class: 'clickable', dataset: { id: String(r.id) } },
        h('td', {}, btn), cols.map((c) => {
          const v = c.value(r);
          return v instanceof Node && v.tagName === 'TD' ? v : h('td', { class: c.num ? 'num' : null }, v);
        }));
      const toggle = () => {
        const open = btn.getAttribute('aria-expanded') !== 'true';
        btn.setAttribute('aria-expanded', String(open));
        if (open) tr.after(h('tr', { class: 'detail', id }, h('td', { colspan: head.length }, detail(r), debugPanel(r.id, ctx.signal))));
        else document.getElementById(id)?.remove();
      };
      btn.addEventListener('click', (e) => { e.stopPropagation(); toggle(); });
      tr.addEventListener('click', (e) => { if (!e.target.closest('a, button, input')) toggle(); });
      return tr;
    });
    put(box, table('Request logs, newest first', head, trs, 'No matching requests.'));
  }
}

function detail(r) {
  const attempts = r.attempt_log.map((a, i) => [String(i + 1), a.channel, h('td', { class: 'mono nowrap' }, a.key), h('td', { class: 'mono' }, a.url),
    a.protocol, h('td', { class: 'nowrap' }, a.upstream_model), h('td', {}, badge(a.status ? String(a.status) : 'none', statusClass(a.status))),
    [a.kind, a.scope && `(${a.scope})`].filter(Boolean).join(' '), fmtMs(a.duration_ms), h('td', { class: 'err wide' }, a.error || '')]);
  const usage = [['Input', fmtInt(r.input_tokens)], ['Cache read', fmtInt(r.cache_read_tokens)], ['Cache write', fmtInt(r.cache_write_tokens)],
    ['Output', fmtInt(r.output_tokens)], ['of which reasoning', fmtInt(r.reasoning_tokens)], ['Cost', fmtCost(r.cost)]];
  return h('div', { class: 'detail-grid' },
    h('section', {}, h('h3', {}, 'Request'), h('dl', { class: 'facts' },
      h('dt', {}, 'Time'), h('dd', {}, fmtTime(r.time)),
      r.request_id ? [h('dt', {}, 'Request ID'), h('dd', { class: 'mono' }, r.request_id)] : null,
      h('dt', {}, 'Protocols'), h('dd', {}, proto(r)),
      h('dt', {}, 'Model'), h('dd', {}, r.upstream_model && r.upstream_model !== r.model ? `${r.model} (upstream ${r.upstream_model})` : r.model),
      h('dt', {}, 'Stream'), h('dd', {}, r.stream ? (r.incomplete ? 'yes, cut off' : 'yes') : 'no'),
      h('dt', {}, 'Client IP'), h('dd', {}, r.client_ip),
      r.error ? [h('dt', {}, 'Error'), h('dd', { class: 'err' }, r.error)] : null)),
    h('section', {}, h('h3', {}, 'Usage and cost'), table('Usage and cost', [{ label: 'Tokens' }, { label: '', num: true }], usage)),
    h('section', { class: 'attempts' }, h('h3', {}, `Attempts (${r.attempt_log.length})`), table('Upstream attempts', [
      { label: '#' }, { label: 'Channel' }, { label: 'Key' }, { label: 'URL' }, { label: 'Protocol' }, { label: 'Upstream model' },
      { label: 'Status' }, { label: 'Failure' }, { label: 'Duration', num: true }, { label: 'Error' }], attempts, 'No upstream attempt (rejected before routing).')));
}

/**
 * debugPanel loads GET /admin/logs/{id} and shows the request's debug
 * capture: for each captured attempt the upstream request and response,
 * headers and body as stored (credentials already masked by the server).
 */
function debugPanel(id, signal) {
  const box = h('section', { class: 'debug', 'aria-label': `Debug capture of request ${id}` }, h('h3', {}, 'Debug capture'), h('p', { class: 'muted' }, 'Loading…'));
  api(`/admin/logs/${id}`, { signal }).then((d) => {
    if (!d.debug) {
      put(box, h('h3', {}, 'Debug capture'), h('p', { class: 'muted' }, 'Not captured. Set debug: true on the channel or token to keep the upstream requests and responses of its requests.'));
      return;
    }
    put(box, h('h3', {}, `Debug capture (${d.debug.exchanges.length} exchange${d.debug.exchanges.length === 1 ? '' : 's'}, bodies cut at ${fmtInt(d.debug.max_bytes)} bytes)`),
      d.debug.exchanges.map((x) => h('div', { class: 'exchange' },
        h('h4', {}, `Attempt ${x.attempt}`),
        h('div', { class: 'exchange-grid' },
          message('Request', `${x.request.method} ${x.request.url}`, x.request),
          x.response ? message('Response', `HTTP ${x.response.status}`, x.response) : h('div', { class: 'muted' }, 'No response (no answer arrived).')))));
  }).catch((err) => {
    if (err.name !== 'AbortError') put(box, h('h3', {}, 'Debug capture'), h('p', { class: 'alert', role: 'alert' }, `Could not load the request: ${err.message}`));
  });
  return box;
}

/** message is one captured request or response: first line, headers, body. */
function message(label, first, m) {
  const head = [first, ...m.header.map((kv) => `${kv.name}: ${kv.value}`)].join('\n');
  let note = '';
  if (m.base64) note = `base64, ${fmtInt(m.size)} bytes`;
  if (m.truncated) note = `first ${fmtInt(m.base64 ? Math.floor(m.body.length * 3 / 4) : m.body.length)} of ${fmtInt(m.size)} bytes`;
  return h('div', { class: 'message', dataset: { part: label.toLowerCase() } },
    h('h5', {}, label, note ? h('span', { class: 'muted' }, ` (${note})`) : null),
    h('pre', { class: 'mono headers' }, head),
    h('pre', { class: 'mono body', tabindex: '0' }, m.body || '(empty body)'));
}

function select(name, options, value) {
  const s = h('select', { name }, options.map(([v, label]) => h('option', { value: v }, label)));
  if (!options.some(([v]) => v === value)) s.append(h('option', { value }, value));
  s.value = value;
  return s;
}

function fill(sel, names) {
  const cur = sel.value;
  for (const n of names) if (![...sel.options].some((o) => o.value === n)) sel.append(h('option', { value: n }, n));
  sel.value = cur;
}

/** toLocalInput turns an RFC 3339 time into a datetime-local value in the browser's zone. */
function toLocalInput(v) {
  if (!v) return '';
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

const fromLocalInput = (v) => (v ? new Date(v).toISOString() : '');
