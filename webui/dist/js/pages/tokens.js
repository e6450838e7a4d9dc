// Tokens: every client token with its rules (models, channels), limits,
// usage (lifetime cost, today) and expiry. A token itself never reaches the
// browser: only its fingerprint.
import { api, h, put, table, badge, fmtInt, fmtCost, fmtPct, fmtDate, fmtTime } from '../lib.js';

export const title = 'Tokens';

export async function mount(root, ctx) {
  const box = h('div', { id: 'tokens-table' });
  root.append(h('h1', {}, 'Tokens'), box);
  const render = (res) => {
    const cols = [{ label: 'Name' }, { label: 'Fingerprint' }, { label: 'Models' }, { label: 'Channels' },
      { label: 'Cost used', num: true }, { label: 'Today', num: true }, { label: 'Cost today', num: true },
      { label: 'In flight', num: true }, { label: 'RPM', num: true }, { label: 'Expires' }];
    put(box, table('Client tokens', cols, res.tokens.map((t) => {
      const ch = t.channels;
      return h('tr', { dataset: { token: t.name } },
        h('td', {}, h('strong', {}, t.name)),
        h('td', { class: 'mono' }, t.fingerprint),
        h('td', {}, t.models.length ? t.models.map((m) => h('span', { class: 'chip' }, m)) : h('span', { class: 'muted' }, 'all')),
        h('td', {}, ch.allow.length ? ['only ', ch.allow.map((c) => h('span', { class: 'chip' }, c))]
          : ch.deny.length ? ['all but ', ch.deny.map((c) => h('span', { class: 'chip off' }, c))] : h('span', { class: 'muted' }, 'all')),
        h('td', { class: 'num' }, fmtCost(t.cost_used), t.cost_limit ? [` / ${fmtCost(t.cost_limit)}`,
          h('div', { class: t.cost_used >= t.cost_limit ? 'err' : 'muted' }, `${fmtPct(t.cost_used / t.cost_limit)} of limit`)] : null),
        h('td', { class: 'num' }, `${fmtInt(t.today.requests)} req`, h('div', { class: 'muted' }, `${fmtInt(t.today.input_tokens)} in / ${fmtInt(t.today.output_tokens)} out`)),
        h('td', { class: 'num' }, fmtCost(t.today.cost)),
        h('td', { class: 'num' }, fmtInt(t.in_flight) + (t.max_concurrency ? ` / ${fmtInt(t.max_concurrency)}` : '')),
        h('td', { class: 'num' }, fmtInt(t.rpm) + (t.rpm_limit ? ` / ${fmtInt(t.rpm_limit)}` : '')),
        h('td', { title: t.expires ? fmtTime(t.expires) : null }, t.expires ? [fmtDate(t.expires), ' ', t.expired ? badge('expired', 'err') : null] : h('span', { class: 'muted' }, 'never')));
    }), 'No tokens configured.'));
  };
  render(await api('/admin/tokens', { signal: ctx.signal }));
  ctx.ready();
  ctx.every(10_000, async () => { const r = await api('/admin/tokens'); if (ctx.alive()) render(r); });
}
