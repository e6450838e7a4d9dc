// Channels: each channel's configuration (priority, weight, URLs and
// protocols, models with renames, keys as fingerprints) and live state
// (cooldowns with a countdown, in flight, RPM, today's usage), with the
// actions clear cooldown, pause/resume (a runtime override, stored in the
// database, not in the YAML) and test (POST /admin/channels/{name}/test).
import { api, h, put, table, badge, fmtCount, fmtInt, fmtCost, fmtMs, fmtSeconds, fmtTime } from '../lib.js';
import { fetchAccounts, accountsTable } from '../accounts.js';

export const title = 'Channels';

const REFRESH_MS = 5000;
const stateClass = { ok: 'ok', degraded: 'warn', cooling: 'err', paused: 'warn', disabled: 'muted' };

export async function mount(root, ctx) {
  const summary = h('section', { id: 'summary' });
  const list = h('div', { class: 'channels', id: 'channel-list' });
  const msg = h('p', { class: 'muted', role: 'status', id: 'channels-msg' });
  // Subscription accounts (oauth channels); hidden while there are none.
  const accounts = h('section', { id: 'accounts', hidden: true, 'aria-labelledby': 'accounts-h' });
  root.append(h('h1', {}, 'Channels'), summary, accounts, msg, list);

  const cards = new Map(); // name -> {el, update}
  let offset = 0; // server clock minus ours, for the countdowns
  let names = '';

  const refresh = async () => {
    const [res, accts] = await Promise.all([api('/admin/channels', { signal: ctx.signal }), fetchAccounts(ctx.signal)]);
    if (!ctx.alive()) return;
    accounts.hidden = !accts.length;
    if (accts.length) put(accounts, h('h2', { id: 'accounts-h' }, 'Subscription accounts'), accountsTable(accts));
    offset = Date.parse(res.time) - Date.now();
    const now = res.channels.map((c) => c.name).join('\n');
    if (now !== names) {
      names = now;
      cards.clear();
      put(list, ...res.channels.map((ch) => {
        const c = card(ch, { refresh, say, serverNow: () => Date.now() + offset });
        cards.set(ch.name, c);
        return c.el;
      }));
    }
    for (const ch of res.channels) cards.get(ch.name).update(ch);
    put(summary, summaryTable(res.channels));
  };
  const say = (text, cls = 'muted') => { msg.textContent = text; msg.className = cls; };

  await refresh();
  ctx.ready();
  ctx.every(REFRESH_MS, () => refresh().catch(() => {}));
  // Countdowns tick locally; one that runs out brings a refresh.
  ctx.every(1000, () => {
    let expired = false;
    for (const td of list.querySelectorAll('td[data-until]')) {
      const left = (Date.parse(td.dataset.until) - (Date.now() + offset)) / 1000;
      td.textContent = left > 0 ? fmtSeconds(Math.ceil(left)) : 'ended';
      if (left <= 0) expired = true;
    }
    if (expired) refresh().catch(() => {});
  });
}

function summaryTable(chs) {
  const cols = [{ label: 'Channel' }, { label: 'State' }, { label: 'Priority', num: true }, { label: 'Weight', num: true },
    { label: 'In flight', num: true }, { label: 'RPM', num: true }, { label: 'Today', num: true }, { label: 'Cost today', num: true },
    { label: 'Cooldowns', num: true }];
  return table('Channels', cols, chs.map((c) => [
    h('td', {}, h('a', { href: `#${anchor(c.name)}` }, c.name)),
    h('td', {}, stateBadge(c), unpricedBadge(c)),
    String(c.priority), String(c.weight), fmtInt(c.in_flight), fmtInt(c.rpm),
    `${fmtInt(c.today.requests)} req, ${fmtInt(c.today.errors)} err`, fmtCost(c.today.cost), fmtInt(c.cooldowns.length),
  ]));
}

const anchor = (name) => `ch-${name.replace(/[^A-Za-z0-9_-]/g, '_')}`;
const stateBadge = (c) => badge(c.state, stateClass[c.state] || 'muted');
// Models without a price cost 0 and are refused under cost limits unless
// routing.unpriced is allow (issue 19); the badge says so instead of a silent $0.
const unpricedTitle = 'No price in pricing:, the price catalog or the embedded table: logged as unpriced with cost 0, refused under a cost limit unless routing.unpriced: allow.';
const unpricedBadge = (c) => (c.unpriced && c.unpriced.length ? [' ', badge(`${c.unpriced.length} unpriced`, 'warn', unpricedTitle)] : null);
const limit = (n, fmt = fmtInt) => (n ? ` / ${fmt(n)}` : '');

/**
 * chatStream POSTs body to a channel's chat endpoint and reads its
 * server-sent events as they arrive: onText for each "delta", and the
 * "done" event's data as the result.
 */
async function chatStream(url, body, onText) {
  const res = await fetch(url, { method: 'POST', credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' }, body: JSON.stringify(body) });
  if (!res.ok) {
    let msg = `${res.status} ${res.statusText}`;
    try { msg = (await res.json()).error || msg; } catch { /* not JSON */ }
    throw new Error(msg);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let done = null;
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) break;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let name = '';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) name = line.slice(7);
        else if (line.startsWith('data: ')) data += line.slice(6);
      }
      if (name === 'delta') onText(JSON.parse(data).text);
      else if (name === 'done') done = JSON.parse(data);
    }
  }
  return done;
}

function card(ch, env) {
  const name = ch.name;
  const path = `/admin/channels/${encodeURIComponent(name)}`;
  const head = h('header');
  const facts = h('dl', { class: 'facts' });
  const urls = h('ul', { class: 'plain' });
  const cdBox = h('div', { class: 'cooldowns' });
  const pauseBtn = h('button', { type: 'button', class: 'btn', onclick: () => togglePause() });
  const model = h('select', { 'aria-label': `Model to test on ${name}` },
    ch.models.map((m) => h('option', { value: m.name }, m.upstream !== m.name ? `${m.name} → ${m.upstream}` : m.name)));
  const enabled = ch.models.find((m) => !m.disabled);
  if (ch.check) model.value = ch.check.model; else if (enabled) model.value = enabled.name;
  const testBtn = h('button', { type: 'button', class: 'btn primary', onclick: () => runTest() }, 'Test');
  const result = h('div', { class: 'test-result', role: 'status', 'aria-live': 'polite' });
  // A real chat through the normal request path (POST .../chat, SSE).
  const prompt = h('input', { type: 'text', name: 'prompt', class: 'grow', value: 'Say hello in five words.', maxlength: 4096,
    'aria-label': `Prompt to send to ${name}`, onkeydown: (e) => { if (e.key === 'Enter') { e.preventDefault(); runChat(); } } });
  const chatBtn = h('button', { type: 'button', class: 'btn', onclick: () => runChat() }, 'Chat');
  const answer = h('div', { class: 'chat-answer', hidden: true, 'aria-live': 'polite', 'aria-label': `Answer of ${name}` });
  const chatInfo = h('div', { class: 'chat-result', role: 'status' });
  let cdSig = null;
  let cur = ch;

  const el = h('section', { class: 'card channel', id: anchor(name), dataset: { channel: name }, 'aria-labelledby': `${anchor(name)}-h` },
    head,
    h('div', { class: 'grid' },
      h('div', {}, facts),
      h('div', {},
        h('h3', {}, 'URLs'), urls,
        h('h3', {}, 'Models'), h('div', {}, ch.models.map((m) => h('span', { class: m.disabled ? 'chip off' : 'chip', title: m.disabled ? 'listed, not routed' : null },
          m.upstream !== m.name ? `${m.name} → ${m.upstream}` : m.name))),
        h('h3', {}, 'Keys'), h('ul', { class: 'plain mono' }, ch.keys.length ? ch.keys.map((k) => h('li', {}, k)) : h('li', { class: 'muted' }, 'none')))),
    h('h3', {}, 'Cooldowns'), cdBox,
    h('div', { class: 'actions' }, pauseBtn, h('span', { class: 'grow' }), model, testBtn),
    result,
    h('div', { class: 'actions chat' }, prompt, chatBtn),
    answer, chatInfo);

  async function runChat() {
    if (chatBtn.disabled) return;
    chatBtn.disabled = true;
    chatBtn.textContent = 'Asking…';
    answer.hidden = false;
    answer.textContent = '';
    put(chatInfo, h('span', { class: 'muted' }, `Asking ${name} (${model.value})…`));
    try {
      const done = await chatStream(`${path}/chat`, { model: model.value, prompt: prompt.value }, (text) => { answer.textContent += text; });
      if (!done) throw new Error('the answer ended without its outcome');
      put(chatInfo,
        done.ok ? badge('OK', 'ok') : badge('failed', 'err'), ' ',
        h('span', { class: 'test-facts' }, [`HTTP ${done.status || 'none'}`, done.protocol, done.ttfb_ms ? `first token ${fmtMs(done.ttfb_ms)}` : null,
          `total ${fmtMs(done.duration_ms)}`, `${done.attempts} attempt${done.attempts === 1 ? '' : 's'}`, done.key].filter(Boolean).join(' · ')),
        done.error ? h('div', { class: 'err' }, done.error) : null,
        h('div', { class: 'muted' }, `Logged as ${done.request_id} (token "(channel test)").`));
    } catch (err) {
      put(chatInfo, h('span', { class: 'err' }, `Chat failed: ${err.message}`));
    } finally {
      chatBtn.disabled = false;
      chatBtn.textContent = 'Chat';
    }
  }

  async function togglePause() {
    const pause = !cur.paused;
    pauseBtn.disabled = true;
    try {
      const c = await api(`${path}/${pause ? 'pause' : 'resume'}`, { method: 'POST' });
      if (c.state) update(c);
      env.say(pause ? `Paused ${name} (runtime override, kept across restarts until resumed).` : `Resumed ${name}.`);
    } catch (err) {
      env.say(`Could not ${pause ? 'pause' : 'resume'} ${name}: ${err.message}`, 'error');
    } finally {
      pauseBtn.disabled = false;
    }
  }

  async function clear(cd) {
    const body = cd ? { channel: name, scope: cd.scope, key: cd.key, model: cd.model, url: cd.url } : { channel: name };
    try {
      const res = await api('/admin/cooldowns/clear', { method: 'POST', body });
      env.say(`Cleared ${res.cleared.length} cooldown${res.cleared.length === 1 ? '' : 's'} of ${name}.`);
      await env.refresh();
    } catch (err) {
      env.say(`Could not clear: ${err.message}`, 'error');
    }
  }

  async function runTest() {
    testBtn.disabled = true;
    testBtn.textContent = 'Testing…';
    put(result, h('span', { class: 'muted' }, `Sending a small request to ${name} (${model.value})…`));
    try {
      const r = await api(`${path}/test`, { method: 'POST', body: { model: model.value } });
      put(result,
        r.ok ? badge('OK', 'ok') : badge('failed', 'err'), ' ',
        h('span', { class: 'test-facts' }, [`HTTP ${r.status || 'none'}`, r.ttfb_ms ? `first byte ${fmtMs(r.ttfb_ms)}` : null, `total ${fmtMs(r.total_ms)}`,
          r.protocol, r.upstream_model !== r.model ? `${r.model} → ${r.upstream_model}` : r.model].filter(Boolean).join(' · ')),
        r.ok ? null : h('div', { class: 'err' }, `Classified as ${r.kind || 'unknown'}${r.scope ? ` (scope ${r.scope})` : ''}: ${r.message || ''}`),
        h('div', { class: 'muted mono' }, `key ${r.key} · ${r.url}`));
    } catch (err) {
      put(result, h('span', { class: 'err' }, `Test failed to run: ${err.message}`));
    } finally {
      testBtn.disabled = false;
      testBtn.textContent = 'Test';
    }
  }

  function update(c) {
    cur = c;
    put(head, h('h2', { id: `${anchor(name)}-h` }, name), stateBadge(c),
      c.paused ? badge(`paused at runtime${c.paused_at ? ` since ${fmtTime(c.paused_at)}` : ''}`, 'warn', 'A runtime override stored in the database, not in the YAML; Resume removes it.') : null,
      c.enabled ? null : h('span', { class: 'muted' }, 'enabled: false in the config'));
    const L = c.limits;
    put(facts,
      h('dt', {}, 'Priority'), h('dd', {}, String(c.priority)),
      h('dt', {}, 'Weight'), h('dd', {}, String(c.weight)),
      h('dt', {}, 'Key strategy'), h('dd', {}, c.key_strategy),
      h('dt', {}, 'In flight'), h('dd', {}, fmtInt(c.in_flight) + limit(L.max_concurrency)),
      h('dt', {}, 'RPM'), h('dd', {}, fmtInt(c.rpm) + limit(L.rpm_limit)),
      h('dt', {}, 'Today'), h('dd', {}, `${fmtCount(c.today.requests, 'request')}, ${fmtCount(c.today.errors, 'error')}, ${fmtInt(c.today.input_tokens)} in / ${fmtInt(c.today.output_tokens)} out tokens`),
      h('dt', {}, 'Cost today'), h('dd', {}, fmtCost(c.today.cost) + limit(L.daily_cost_limit, fmtCost)),
      L.active_hours ? [h('dt', {}, 'Active hours'), h('dd', {}, L.active_hours)] : null,
      L.cost_multiplier && L.cost_multiplier !== 1 ? [h('dt', {}, 'Cost multiplier'), h('dd', {}, `×${L.cost_multiplier}`)] : null,
      c.check ? [h('dt', {}, 'Scheduled check'), h('dd', {}, `${c.check.model} every ${c.check.every}`)] : null,
      c.last_check ? [h('dt', {}, 'Last check'), h('dd', {}, c.last_check.ok ? badge('ok', 'ok') : badge('failed', 'err'),
        ` ${fmtMs(c.last_check.total_ms)}`, c.last_check.ok ? '' : ` · ${c.last_check.kind}${c.last_check.scope ? ` (${c.last_check.scope})` : ''}: ${c.last_check.message || ''}`)] : null,
      c.proxy ? [h('dt', {}, 'Proxy'), h('dd', { class: 'mono' }, c.proxy)] : null,
      c.unpriced && c.unpriced.length ? [h('dt', {}, 'Unpriced models'), h('dd', { class: 'unpriced', title: unpricedTitle },
        badge('no price', 'warn'), ' ', c.unpriced.map((m) => h('span', { class: 'chip mono' }, m)))] : null,
    );
    put(urls, ...c.urls.map((u) => h('li', {}, h('span', { class: 'mono' }, u.url), ' ',
      u.protocols.length ? u.protocols.map((p) => h('span', { class: 'chip' }, p)) : h('span', { class: 'chip' }, 'detect'),
      (u.detected || []).map(detectedChip),
      u.exact ? h('span', { class: 'chip' }, 'exact') : null,
      h('span', { class: 'muted' }, u.visited ? ` ${fmtMs(u.ewma_ms)} avg` : ' not used yet'))));
    pauseBtn.textContent = c.paused ? 'Resume' : 'Pause';
    pauseBtn.setAttribute('aria-label', `${c.paused ? 'Resume' : 'Pause'} ${name}`);
    // Rebuild the cooldowns only when they change, so focus stays put.
    const sig = JSON.stringify(c.cooldowns.map((d) => [d.scope, d.key, d.model, d.url, d.until, d.strikes]));
    if (sig === cdSig) return;
    cdSig = sig;
    if (!c.cooldowns.length) {
      put(cdBox, h('p', { class: 'muted' }, 'None: every key, model and URL is available.'));
      return;
    }
    const cols = [{ label: 'Scope' }, { label: 'What' }, { label: 'Reason' }, { label: 'Strikes', num: true }, { label: 'Ends in', num: true }, { label: '' }];
    put(cdBox, table(`Cooldowns of ${name}`, cols, c.cooldowns.map((d) => [
      d.scope, h('td', { class: 'mono' }, d.key || d.model || d.url || name),
      `${d.kind}${d.reason ? `: ${d.reason}` : ''}`, String(d.strikes),
      h('td', { class: 'num', dataset: { until: d.until }, title: `until ${fmtTime(d.until)}` }, fmtSeconds(d.seconds_left)),
      h('td', {}, h('button', { type: 'button', class: 'btn small', onclick: () => clear(d), 'aria-label': `Clear the ${d.scope} cooldown of ${name}` }, 'Clear')),
    ])), c.cooldowns.length > 1 ? h('p', {}, h('button', { type: 'button', class: 'btn small', onclick: () => clear(null) }, `Clear all ${c.cooldowns.length}`)) : null);
  }

  return { el, update };
}

// detectedChip is what protocol detection learned for one client family on
// a URL without protocols: "openai → anthropic" means Chat requests are
// sent there as Anthropic; "none" that no family answered until retry_at.
function detectedChip(d) {
  if (d.protocol) {
    return h('span', { class: 'chip', title: `detected: ${d.client} requests are sent as ${d.protocol}` }, `${d.client} → ${d.protocol}`);
  }
  return h('span', { class: 'chip', title: `detected: no protocol answered; probed again at ${fmtTime(d.retry_at)}` }, `${d.client} → none`);
}
