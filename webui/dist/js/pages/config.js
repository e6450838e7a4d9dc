// Config: the YAML as loaded, secrets masked by the server (fingerprints),
// the serving file's status and the reload history; "Reload now" is the
// same as SIGHUP.
import { api, h, put, table, badge, fmtInt, fmtTime } from '../lib.js';

export const title = 'Config';

export async function mount(root, ctx) {
  const status = h('section', { class: 'card', id: 'config-status' });
  const history = h('section', { class: 'card', id: 'reload-history' });
  const yaml = h('pre', { class: 'yaml', id: 'config-yaml', tabindex: '0', 'aria-label': 'Config as loaded, secrets masked' });
  const msg = h('p', { role: 'status', class: 'muted' });
  const reload = h('button', { type: 'button', class: 'btn', onclick: doReload }, 'Reload now');
  root.append(h('div', { class: 'toolbar' }, h('h1', { class: 'grow' }, 'Config'), reload), msg,
    h('div', { class: 'grid' }, status, history),
    h('section', {}, h('h2', {}, 'As loaded ', h('span', { class: 'muted' }, '(secrets shown as fingerprints)')), yaml));

  const load = async () => {
    const [cfg, text] = await Promise.all([api('/admin/config', { signal: ctx.signal }), api('/admin/config?format=yaml', { text: true, signal: ctx.signal })]);
    render(cfg);
    yaml.textContent = text;
  };
  await load();
  ctx.ready();

  async function doReload() {
    reload.disabled = true;
    try {
      await api('/admin/config/reload', { method: 'POST' });
      msg.textContent = 'Reloaded.';
      msg.className = 'ok';
    } catch (err) {
      msg.textContent = err.message;
      msg.className = 'error';
    } finally {
      reload.disabled = false;
      await load().catch(() => {});
    }
  }

  function render(cfg) {
    const c = cfg.status;
    put(status, h('h2', {}, 'Serving ', c.error ? badge('last reload failed', 'err') : badge('ok', 'ok')),
      c.error ? h('p', { class: 'alert', role: 'alert' }, `The last reload (${fmtTime(c.last_attempt)}) failed; the previous config keeps serving: ${c.error}`) : null,
      h('dl', { class: 'facts' },
        h('dt', {}, 'File'), h('dd', { class: 'mono' }, c.file),
        h('dt', {}, 'SHA-256'), h('dd', { class: 'mono' }, c.sha256),
        h('dt', {}, 'Loaded at'), h('dd', {}, fmtTime(c.loaded_at)),
        h('dt', {}, 'Last attempt'), h('dd', {}, fmtTime(c.last_attempt)),
        h('dt', {}, 'Reloads'), h('dd', {}, `${fmtInt(c.reloads)} ok, ${fmtInt(c.failures)} failed`),
        h('dt', {}, 'Serving'), h('dd', {}, `${fmtInt(c.channels)} channels, ${fmtInt(c.tokens)} tokens`)));
    const resultClass = { loaded: 'ok', reloaded: 'ok', failed: 'err' };
    put(history, h('h2', {}, 'Reload history'), table('Reload history, newest first',
      [{ label: 'Time' }, { label: 'Result' }, { label: 'SHA-256' }, { label: 'Error' }],
      cfg.history.map((r) => [fmtTime(r.time),
        h('td', {}, badge(r.count > 1 ? `${r.result} ×${r.count}` : r.result, resultClass[r.result] || 'muted')),
        h('td', { class: 'mono', title: r.sha256 || null }, (r.sha256 || '').slice(0, 12)), h('td', { class: 'err' }, r.error || '')]),
      'No reloads yet.'));
  }
}
