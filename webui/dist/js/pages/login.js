// Login: the admin password buys an HttpOnly, SameSite=Strict session
// cookie (POST /admin/login); the page then goes where the user was going.
import { api, h, APIError } from '../lib.js';

export const title = 'Log in';

/** safeNext keeps the redirect inside the dashboard. */
function safeNext(v) {
  return v && v.startsWith('/web/') && !v.startsWith('/web/login') ? v : '/web/';
}

export async function mount(root, ctx) {
  const next = safeNext(ctx.params.get('next'));
  const msg = h('p', { class: 'alert', role: 'alert', hidden: true });
  const pw = h('input', { type: 'password', id: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const submit = h('button', { type: 'submit', class: 'btn primary' }, 'Log in');
  const form = h('form', { onsubmit: async (e) => {
    e.preventDefault();
    submit.disabled = true;
    msg.hidden = true;
    try {
      await api('/admin/login', { method: 'POST', body: { password: pw.value } });
      ctx.navigate(next, { replace: true });
    } catch (err) {
      msg.textContent = err instanceof APIError && err.status === 401 ? 'Wrong password.' : err.message;
      msg.hidden = false;
      pw.select();
      pw.focus();
    } finally {
      submit.disabled = false;
    }
  } },
  h('label', { for: 'password' }, 'Admin password', pw), msg, submit);
  root.append(h('section', { class: 'login card' }, h('h1', {}, 'ccload'), h('p', { class: 'muted' }, 'Log in with the admin password (server.admin_password).'), form));
  pw.focus();
  ctx.ready();
}
