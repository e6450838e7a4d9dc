// Live: the requests in flight, updated in place from /admin/events, and
// the last finished ones. The stream is opened first and /admin/active read
// once it is open, so no request falls between the two.
import { api, events, h, put, table, badge, fmtInt, fmtMs, fmtWhen, statusClass } from '../lib.js';

export const title = 'Live';

const KEEP_FINISHED = 50;

const activeCols = [
  { label: 'Started' }, { label: 'Token' }, { label: 'Protocols' }, { label: 'Model' }, { label: 'Channel' },
  { label: 'Elapsed', num: true }, { label: 'TTFB', num: true }, { label: 'Tokens in', num: true },
  { label: 'Tokens out', num: true }, { label: 'Attempts', num: true },
];
const finishedCols = [
  { label: 'Ended' }, { label: 'Token' }, { label: 'Model' }, { label: 'Channel' }, { label: 'Status' },
  { label: 'Duration', num: true }, { label: 'TTFB', num: true }, { label: 'Tokens in', num: true },
  { label: 'Tokens out', num: true }, { label: 'Error' },
];

export async function mount(root, ctx) {
  const conn = h('span', { class: 'muted live-dot', id: 'conn', role: 'status' }, 'connecting…');
  const activeBox = h('section', { id: 'active' });
  const finishedBox = h('section', { id: 'finished' });
  const count = h('span', { class: 'muted', id: 'active-count' });
  root.append(h('div', { class: 'toolbar' }, h('h1', { class: 'grow' }, 'Live'), conn),
    h('h2', {}, 'In flight ', count), activeBox,
    h('h2', {}, 'Recently finished'), finishedBox);

  const active = new Map(); // id -> {ev, at (performance.now() when ev arrived), tr}
  const finished = []; // newest first: {time, token, model, channel, status, duration, ttfb, in, out, error}
  let activeTable = null;

  const onEvent = (ev) => {
    if (ev.type === 'end') {
      const a = active.get(ev.id);
      if (a) { a.tr.remove(); active.delete(ev.id); }
      finished.unshift(fromEvent(ev));
      finished.length = Math.min(finished.length, KEEP_FINISHED);
      renderFinished();
    } else {
      upsert(ev);
    }
    renderCount();
  };

  // Open the stream, then read what is already in flight.
  const opened = new Promise((resolve) => {
    const close = events(onEvent, (state) => {
      conn.textContent = state === 'open' ? 'live' : state === 'reconnecting' ? 'reconnecting…' : 'disconnected';
      conn.className = `live-dot ${state === 'open' ? 'ok' : 'warn'}`;
      if (state === 'open') resolve();
    });
    ctx.onCleanup(close);
    setTimeout(resolve, 3000); // show the snapshot even if the stream is slow to open
  });
  await opened;
  const [snap, recent] = await Promise.all([
    api('/admin/active', { signal: ctx.signal }),
    api('/admin/logs?limit=20', { signal: ctx.signal }),
  ]);
  activeTable = table('Requests in flight', activeCols, [], 'No request in flight.');
  activeBox.append(activeTable);
  for (const ev of snap.active) if (!active.has(ev.id)) upsert(ev);
  if (!finished.length) finished.push(...recent.rows.map(fromLog));
  renderFinished();
  renderCount();
  ctx.ready();

  // Elapsed time ticks here; the server sends progress only as it happens.
  ctx.every(250, () => {
    const now = performance.now();
    for (const a of active.values()) a.tr.cells[5].textContent = fmtMs(a.ev.elapsed_ms + (now - a.at));
  });

  function upsert(ev) {
    let a = active.get(ev.id);
    if (!a) {
      if (!activeTable) return; // the snapshot will bring it
      const tr = h('tr', { dataset: { id: String(ev.id) } }, activeCols.map((c) => h('td', { class: c.num ? 'num' : 'nowrap' })));
      a = { ev, at: performance.now(), tr };
      active.set(ev.id, a);
      const body = activeTable.querySelector('tbody');
      body.querySelector('td.empty')?.parentElement.remove();
      body.append(tr);
    }
    // Keep what an earlier event knew and a later one leaves out.
    a.ev = { ...a.ev, ...stripEmpty(ev), time: ev.time, elapsed_ms: ev.elapsed_ms };
    a.at = performance.now();
    const e = a.ev;
    const c = a.tr.cells;
    c[0].textContent = fmtWhen(new Date(Date.parse(e.time) - e.elapsed_ms).toISOString());
    c[1].textContent = e.token;
    c[2].textContent = e.upstream_protocol && e.upstream_protocol !== e.client_protocol
      ? `${e.client_protocol} → ${e.upstream_protocol}` : e.client_protocol;
    c[3].textContent = e.model + (e.stream ? ' (stream)' : '');
    c[4].textContent = e.channel || '…';
    c[5].textContent = fmtMs(e.elapsed_ms);
    c[6].textContent = e.ttfb_ms ? fmtMs(e.ttfb_ms) : '–';
    c[7].textContent = fmtInt(e.input_tokens);
    c[8].textContent = fmtInt(e.output_tokens);
    c[9].textContent = fmtInt(e.attempts);
  }

  function renderCount() {
    count.textContent = `(${fmtInt(active.size)})`;
    if (activeTable && active.size === 0 && !activeTable.querySelector('td.empty')) {
      activeTable.querySelector('tbody').append(h('tr', {}, h('td', { colspan: activeCols.length, class: 'empty' }, 'No request in flight.')));
    }
  }

  function renderFinished() {
    if (!activeTable) return;
    put(finishedBox, table('Recently finished requests', finishedCols, finished.map((f) => [
      h('td', { class: 'nowrap' }, fmtWhen(f.time)), f.token, h('td', { class: 'nowrap' }, f.model), f.channel,
      h('td', {}, badge(f.status ? String(f.status) : 'no status', statusClass(f.status))),
      fmtMs(f.duration), statusClass(f.status) === 'ok' || f.ttfb ? fmtMs(f.ttfb) : '–', fmtInt(f.in), fmtInt(f.out),
      h('td', { class: 'err wide' }, f.error),
    ]), 'Nothing finished yet.'));
  }
}

function stripEmpty(ev) {
  const out = {};
  for (const [k, v] of Object.entries(ev)) if (v !== '' && v !== 0 && v !== undefined) out[k] = v;
  return out;
}

function fromEvent(ev) {
  return {
    time: ev.time, token: ev.token, model: ev.model, channel: ev.channel || '', status: ev.status || 0,
    duration: ev.elapsed_ms, ttfb: ev.ttfb_ms || 0, in: ev.input_tokens || 0, out: ev.output_tokens || 0,
    error: [ev.failure_scope && `scope ${ev.failure_scope}`, ev.error].filter(Boolean).join(': '),
  };
}

function fromLog(r) {
  return {
    time: new Date(Date.parse(r.time) + r.duration_ms).toISOString(), token: r.token, model: r.model, channel: r.channel,
    status: r.status, duration: r.duration_ms, ttfb: r.ttfb_ms, in: r.input_tokens, out: r.output_tokens,
    error: [r.failure_scope && `scope ${r.failure_scope}`, r.error].filter(Boolean).join(': '),
  };
}
