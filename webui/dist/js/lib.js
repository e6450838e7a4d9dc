// Shared helpers of the dashboard pages: the admin API client, the event
// stream, number and time formatting, and a small DOM builder. Pages never
// use innerHTML: every value from the API goes in as text.

/** AuthError means the admin session is missing or expired. */
export class AuthError extends Error {}

/** APIError is an admin API answer other than 2xx; message is its "error". */
export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

let authLost = () => {};

/** onAuthLost sets what happens when a call answers 401 (app.js: show the login). */
export function onAuthLost(fn) { authLost = fn; }

/**
 * api calls the admin API with the session cookie and returns the decoded
 * JSON body (or the text with {text: true}). A 401 calls the onAuthLost
 * handler and throws AuthError; another error status throws APIError.
 */
export async function api(path, { method = 'GET', body, text = false, signal } = {}) {
  const init = { method, credentials: 'same-origin', signal, headers: { Accept: text ? '*/*' : 'application/json' } };
  // Every state change is JSON: the admin API refuses other POSTs from a
  // browser session (a cross-site form cannot send JSON).
  if (body !== undefined || method !== 'GET') {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body ?? {});
  }
  const res = await fetch(path, init);
  if (res.status === 401 && path !== '/admin/login') {
    authLost();
    throw new AuthError('admin login required');
  }
  if (!res.ok) {
    let msg = `${res.status} ${res.statusText}`;
    try { msg = (await res.json()).error || msg; } catch { /* not JSON */ }
    throw new APIError(res.status, msg);
  }
  return text ? res.text() : res.json();
}

/** qs builds a query string from the non-empty values of obj. */
export function qs(obj) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== null && v !== '') p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

/**
 * events opens /admin/events and calls onEvent(ev) for every request event
 * and onState('open' | 'reconnecting' | 'closed'). EventSource reconnects
 * by itself; a stream the server refused (401) is reported through api().
 * Returns the function that closes the stream.
 */
export function events(onEvent, onState = () => {}) {
  const es = new EventSource('/admin/events');
  const handle = (e) => { try { onEvent(JSON.parse(e.data)); } catch (err) { console.error(err); } };
  for (const t of ['start', 'first_byte', 'progress', 'end']) es.addEventListener(t, handle);
  es.onopen = () => onState('open');
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) {
      onState('closed');
      api('/admin/status').catch(() => {}); // a 401 here sends the user to the login
    } else {
      onState('reconnecting');
    }
  };
  return () => es.close();
}

// Formatting. Locale and time zone are the browser's.
const intFmt = new Intl.NumberFormat();
const costFmt = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', maximumSignificantDigits: 4 });
const pctFmt = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });
const secFmt = new Intl.NumberFormat(undefined, { maximumSignificantDigits: 3 });
const dateTimeFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const timeFmt = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium' });
const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });

/** zone is the browser's time zone name, in which every time is shown. */
export const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** fmtInt formats a count with thousands separators ("12,345"). */
export const fmtInt = (n) => intFmt.format(n || 0);
/** fmtCost formats USD to 4 significant digits ("$0.001235", "$12,350"). */
export const fmtCost = (x) => costFmt.format(x || 0);
/** fmtCount formats a count with its noun ("1 request", "1,200 requests"). */
export const fmtCount = (n, noun) => `${intFmt.format(n || 0)} ${noun}${n === 1 ? '' : 's'}`;
/** fmtPct formats a ratio (0.123 -> "12.3%"). */
export const fmtPct = (r) => pctFmt.format(r || 0);

/** fmtMs formats a duration in milliseconds ("840 ms", "1.52 s", "3m 05s"). */
export function fmtMs(ms) {
  if (ms === undefined || ms === null) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${secFmt.format(ms / 1000)} s`;
  return fmtSeconds(Math.round(ms / 1000));
}

/** fmtSeconds formats a countdown ("45s", "4m 05s", "2h 03m"). */
export function fmtSeconds(s) {
  s = Math.max(0, Math.round(s));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

const isZero = (t) => !t || t.startsWith('0001-01-01');

/** fmtTime formats an RFC 3339 time in the browser's zone; "" for none. */
export const fmtTime = (t) => (isZero(t) ? '' : dateTimeFmt.format(new Date(t)));
/** fmtDate formats the date part only. */
export const fmtDate = (t) => (isZero(t) ? '' : dateFmt.format(new Date(t)));

/** fmtWhen formats a recent time compactly: the time only when it is today. */
export function fmtWhen(t) {
  if (isZero(t)) return '';
  const d = new Date(t);
  return d.toDateString() === new Date().toDateString() ? timeFmt.format(d) : dateTimeFmt.format(d);
}

/** statusClass maps an HTTP status to ok, warn or err (0: no status sent). */
export function statusClass(s) {
  if (s >= 200 && s < 400) return 'ok';
  if (s >= 400 && s < 500 && s !== 408) return 'warn';
  return 'err';
}

/**
 * h builds an element: h('td', {class: 'num', onclick: fn}, 'text', node).
 * Props starting with "on" are listeners, "class", "text" and "dataset"
 * are special, true/false toggle boolean attributes, other values become
 * attributes. Children may be strings, numbers, nodes, arrays or null.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

/** put replaces el's children, taking the same children as h (null is skipped). */
export function put(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

/** table builds a scrollable table: cols are {label, num}; rows are arrays of cells or <tr>s. */
export function table(label, cols, rows, empty = 'Nothing yet.') {
  const body = h('tbody', {}, rows.map((r) => (r instanceof Node ? r : h('tr', {}, r.map((c, i) => cell(c, cols[i]))))));
  const t = h('table', {}, h('caption', { class: 'sr-only' }, label),
    h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col', class: c.num ? 'num' : null }, c.label)))), body);
  if (!rows.length) body.append(h('tr', {}, h('td', { colspan: cols.length, class: 'empty' }, empty)));
  return h('div', { class: 'table-wrap' }, t);
}

function cell(c, col) {
  if (c instanceof Node && c.tagName === 'TD') return c;
  return h('td', { class: col && col.num ? 'num' : null }, c);
}

/** badge is a small labelled status pill. */
export const badge = (text, cls = 'muted', title) => h('span', { class: `badge ${cls}`, title }, text);

/** tile is one number of a summary row. */
export const tile = (label, value, sub, attrs = {}) =>
  h('div', { class: 'tile', ...attrs }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value), sub ? h('div', { class: 'sub' }, sub) : null);

/** errorBox shows a failed call in place of the page's content. */
export function errorBox(err) {
  return h('p', { class: 'alert', role: 'alert' }, `Could not load: ${err.message}`);
}

/** cssVar reads a colour of the current scheme (charts use them). */
export const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** store reads and writes a JSON value in localStorage, ignoring failures. */
export const store = {
  get(key, fallback) {
    try { const v = localStorage.getItem(key); return v === null ? fallback : JSON.parse(v); } catch { return fallback; }
  },
  set(key, value) {
    try { localStorage.setItem(key, JSON.stringify(value)); } catch { /* private mode */ }
  },
};
