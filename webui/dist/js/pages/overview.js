// Overview: the last 24 h in 5-minute buckets (/admin/stats), TTFB
// percentiles, the top models, channels and tokens by cost, and the config,
// storage and instance status (/admin/status).
import { api, h, put, table, tile, badge, cssVar, fmtInt, fmtCost, fmtPct, fmtMs, fmtTime, fmtSeconds } from '../lib.js';

export const title = 'Overview';

const REFRESH_MS = 60_000;
const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });

export async function mount(root, ctx) {
  const tiles = h('div', { class: 'tiles', id: 'tiles' });
  const charts = h('div', { class: 'grid' });
  const tops = h('div', { class: 'grid', id: 'top-tables' });
  const status = h('div', { class: 'grid', id: 'status' });
  root.append(h('h1', {}, 'Overview ', h('span', { class: 'muted' }, '· last 24 hours')), tiles, charts, tops, status);

  const [stats, st] = await Promise.all([
    api('/admin/stats?range=24h&bucket=5m', { signal: ctx.signal }),
    api('/admin/status', { signal: ctx.signal }),
  ]);
  const plots = makeCharts(charts, stats, ctx);
  render(stats, st);
  ctx.ready();

  ctx.every(REFRESH_MS, async () => {
    const [s2, st2] = await Promise.all([api('/admin/stats?range=24h&bucket=5m'), api('/admin/status')]);
    if (!ctx.alive()) return;
    for (const p of plots) p.update(s2);
    render(s2, st2);
  });

  function render(s, st) {
    const t = s.total;
    const errRate = t.requests ? t.errors / t.requests : 0;
    put(tiles,
      tile('Requests', fmtInt(t.requests), `${fmtInt(st.in_flight)} in flight now`, { id: 'tile-requests' }),
      tile('Error rate', fmtPct(errRate), `${fmtInt(t.errors)} errors`),
      tile('Input tokens', fmtInt(t.input_tokens)),
      tile('Output tokens', fmtInt(t.output_tokens)),
      tile('Cost', fmtCost(t.cost)),
      tile('Cache hit rate', t.input_tokens ? fmtPct(t.cache_hit_rate) : '–',
        `${fmtInt(t.cache_read_tokens)} cached tokens, ${fmtCost(t.cache_saved)} saved`, { id: 'tile-cache' }),
      tile('TTFB p50', t.requests > t.errors ? fmtMs(t.ttfb_p50_ms) : '–'),
      tile('TTFB p95', t.requests > t.errors ? fmtMs(t.ttfb_p95_ms) : '–'),
    );
    put(tops,
      topTable('Top models', s.top.models),
      topTable('Top channels', s.top.channels),
      topTable('Top tokens', s.top.tokens),
    );
    put(status, configCard(st), storageCard(st), instancesCard(st));
  }
}

function topTable(label, ranks) {
  // Narrow cards: tokens are in each row's tooltip, names wrap at hyphens.
  const cols = [{ label: 'Name' }, { label: 'Cost', num: true }, { label: 'Requests', num: true }, { label: 'Errors', num: true },
    { label: 'Cache', num: true }];
  const rows = ranks.map((r) => h('tr', { title: `${fmtInt(r.input_tokens)} input, ${fmtInt(r.output_tokens)} output, ${fmtInt(r.cache_read_tokens)} cache-read tokens; ${fmtCost(r.cache_saved)} saved by the cache` },
    h('td', {}, r.name), h('td', { class: 'num' }, fmtCost(r.cost)), h('td', { class: 'num' }, fmtInt(r.requests)),
    h('td', { class: r.errors ? 'num err' : 'num' }, fmtInt(r.errors)),
    h('td', { class: 'num' }, r.input_tokens ? fmtPct(r.cache_hit_rate) : '–')));
  return h('section', { class: 'card' }, h('h2', {}, label), table(label, cols, rows, 'No requests in the last 24 h.'));
}

function configCard(st) {
  const c = st.config;
  const failed = c.error !== '';
  return h('section', { class: 'card', id: 'config-status' },
    h('h2', {}, 'Config ', failed ? badge('reload failed', 'err') : badge('ok', 'ok')),
    failed ? h('p', { class: 'alert', role: 'alert' },
      `The last reload (${fmtTime(c.last_attempt)}) failed; the previous config keeps serving: ${c.error}`) : null,
    h('dl', { class: 'facts' },
      h('dt', {}, 'File'), h('dd', { class: 'mono' }, c.file),
      h('dt', {}, 'Loaded at'), h('dd', {}, fmtTime(c.loaded_at)),
      h('dt', {}, 'SHA-256'), h('dd', { class: 'mono', title: c.sha256 }, c.sha256.slice(0, 12)),
      h('dt', {}, 'Reloads'), h('dd', {}, `${fmtInt(c.reloads)} ok, ${fmtInt(c.failures)} failed`),
      h('dt', {}, 'Serving'), h('dd', {}, `${fmtInt(c.channels)} channels, ${fmtInt(c.tokens)} tokens`),
      h('dt', {}, 'Up since'), h('dd', {}, `${fmtTime(st.started_at)} (${fmtSeconds(st.uptime_seconds)})`)),
    h('p', {}, h('a', { href: '/web/config' }, 'Config and reload history')));
}

function storageCard(st) {
  const s = st.storage;
  return h('section', { class: 'card' },
    h('h2', {}, 'Storage ', s.write_errors || s.dropped ? badge('losing logs', 'err') : badge(s.driver, 'muted')),
    s.last_error ? h('p', { class: 'alert', role: 'alert' }, `Last write error: ${s.last_error}`) : null,
    h('dl', { class: 'facts' },
      h('dt', {}, 'Driver'), h('dd', {}, s.driver),
      h('dt', {}, 'Logs written'), h('dd', {}, fmtInt(s.written)),
      h('dt', {}, 'Queued'), h('dd', {}, fmtInt(s.queued)),
      h('dt', {}, 'Dropped'), h('dd', {}, fmtInt(s.dropped)),
      h('dt', {}, 'Write errors'), h('dd', {}, fmtInt(s.write_errors)),
      h('dt', {}, 'Events dropped'), h('dd', {}, fmtInt(st.events_dropped))));
}

// instancesCard lists the live ccload instances on the database (scale-out,
// docs/scale-out.md). The Live page shows the requests of the one marked
// "this page": active requests stay per instance.
function instancesCard(st) {
  const list = st.instances || [];
  const now = Date.parse(st.time);
  const cols = [{ label: 'Instance' }, { label: 'Address' }, { label: 'Version' }, { label: 'Up', num: true },
    { label: 'Heartbeat', num: true }, { label: 'In flight', num: true }];
  const rows = list.map((i) => [
    h('td', {}, i.id, i.self ? ' ' : null, i.self ? badge('this page', 'ok', 'the instance that answered') : null),
    i.address, i.version,
    fmtSeconds((now - Date.parse(i.started_at)) / 1000),
    `${fmtSeconds((now - Date.parse(i.last_heartbeat)) / 1000)} ago`,
    fmtInt(i.in_flight)]);
  return h('section', { class: 'card', id: 'instances' },
    h('h2', {}, 'Instances ', badge(`${list.length} live`, 'muted')),
    st.instances_error ? h('p', { class: 'alert', role: 'alert' }, `Instance list: ${st.instances_error}`) : null,
    table('Instances', cols, rows, 'No instance list.'));
}

// Charts (uPlot, vendored in /web/vendor). Time is on the browser's clock
// and zone; buckets without a first byte leave a gap in the TTFB chart.
const chartDefs = [
  {
    id: 'chart-requests', title: 'Requests and errors per 5 min',
    series: [{ label: 'Requests', color: '--chart-1', get: (b) => b.requests, fill: true },
      { label: 'Errors', color: '--chart-2', get: (b) => b.errors }],
    fmt: fmtInt,
  },
  {
    id: 'chart-tokens', title: 'Tokens and cost per 5 min',
    series: [{ label: 'Input tokens', color: '--chart-1', get: (b) => b.input_tokens },
      { label: 'Output tokens', color: '--chart-3', get: (b) => b.output_tokens },
      { label: 'Cost', color: '--chart-4', get: (b) => b.cost, scale: 'usd', fmt: fmtCost }],
    fmt: fmtInt,
  },
  {
    id: 'chart-ttfb', title: 'Time to first byte',
    series: [{ label: 'p50', color: '--chart-1', get: (b) => (b.requests > b.errors ? b.ttfb_p50_ms : null) },
      { label: 'p95', color: '--chart-4', get: (b) => (b.requests > b.errors ? b.ttfb_p95_ms : null) }],
    fmt: (v) => fmtMs(v),
  },
];

function makeCharts(container, stats, ctx) {
  const out = [];
  for (const def of chartDefs) {
    const box = h('div', { class: 'chart', id: def.id });
    container.append(h('section', { class: 'card' }, h('h2', {}, def.title), box));
    out.push(chart(box, def, stats, ctx));
  }
  return out;
}

function chart(box, def, stats, ctx) {
  const data = (s) => [s.buckets.map((b) => Date.parse(b.start) / 1000), ...def.series.map((sr) => s.buckets.map(sr.get))];
  if (!window.uPlot) {
    box.append(h('p', { class: 'alert' }, 'The chart library did not load.'));
    return { update() {} };
  }
  const muted = cssVar('--muted');
  const grid = { stroke: cssVar('--border'), width: 1 };
  const axis = (extra) => ({ stroke: muted, grid, ticks: grid, ...extra });
  const hasUSD = def.series.some((s) => s.scale === 'usd');
  const opts = {
    width: Math.max(box.clientWidth, 280),
    height: 200,
    scales: { x: { time: true } },
    series: [{}, ...def.series.map((s) => ({
      label: s.label, scale: s.scale || 'y', width: 1.6, stroke: cssVar(s.color),
      fill: s.fill ? `${cssVar(s.color)}22` : undefined,
      value: (u, v) => (v === null || v === undefined ? '–' : (s.fmt || def.fmt)(v)),
      points: { show: false },
    }))],
    axes: [axis({}), axis({ scale: 'y', size: 56, values: (u, vals) => vals.map((v) => compact.format(v)) }),
      ...(hasUSD ? [axis({ scale: 'usd', side: 1, size: 60, grid: { show: false }, values: (u, vals) => vals.map((v) => fmtCost(v)) })] : [])],
    legend: { live: true },
  };
  const u = new window.uPlot(opts, data(stats), box);
  box.uplot = u; // for the browser tests
  const ro = new ResizeObserver(() => u.setSize({ width: Math.max(box.clientWidth, 280), height: 200 }));
  ro.observe(box);
  ctx.onCleanup(() => { ro.disconnect(); u.destroy(); });
  return { update: (s) => u.setData(data(s)) };
}
