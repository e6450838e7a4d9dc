// The dashboard shell: routes /web/<page> to a page module, gives the page
// a context (query, abort signal, timers, ready mark) and tears it down on
// navigation; shows the login when any admin call answers 401.
//
// A page module exports title and mount(root, ctx). mount renders into
// root, calls ctx.ready() once its data is on screen (tests time page
// loads from navigation to that mark) and may register cleanups.
import { api, onAuthLost, zone, h, errorBox, AuthError } from './lib.js';
import * as overview from './pages/overview.js';
import * as live from './pages/live.js';
import * as logs from './pages/logs.js';
import * as channels from './pages/channels.js';
import * as tokens from './pages/tokens.js';
import * as config from './pages/config.js';
import * as login from './pages/login.js';

const pages = { overview, live, logs, channels, tokens, config, login };
const main = document.getElementById('main');
const top = document.getElementById('top');
let current = null; // {name, ctl, cleanups}
let firstLoad = true;

/** pageOf maps /web/ to overview and /web/<name> to name (null: unknown). */
function pageOf(pathname) {
  const rest = pathname.replace(/^\/web\/?/, '').replace(/\/+$/, '');
  if (rest === '') return 'overview';
  return Object.hasOwn(pages, rest) ? rest : null;
}

function teardown() {
  if (!current) return;
  current.ctl.abort();
  for (const fn of current.cleanups.splice(0)) {
    try { fn(); } catch (e) { console.error(e); }
  }
  current = null;
}

/** navigate goes to a dashboard URL ("/web/logs?model=x") without a reload. */
export function navigate(url, { replace = false } = {}) {
  const u = new URL(url, location.href);
  if (u.href !== location.href) history[replace ? 'replaceState' : 'pushState']({}, '', u);
  show();
}

async function show() {
  teardown();
  const name = pageOf(location.pathname);
  const ctl = new AbortController();
  const cleanups = [];
  const state = { name, ctl, cleanups };
  current = state;
  main.replaceChildren();
  delete main.dataset.ready;
  top.hidden = name === 'login';
  for (const a of top.querySelectorAll('nav a')) {
    if (a.dataset.page === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (!name) {
    document.title = 'Not found · ccload';
    main.append(h('h1', {}, 'Not found'), h('p', {}, 'No dashboard page at ', h('code', {}, location.pathname), '. ',
      h('a', { href: '/web/', 'data-nav': true }, 'Go to the overview'), '.'));
    return;
  }
  const mod = pages[name];
  document.title = `${mod.title} · ccload`;
  let readyDone = false;
  const ctx = {
    params: new URLSearchParams(location.search),
    signal: ctl.signal,
    navigate,
    /** ready marks the page's data as rendered (once per navigation). */
    ready() {
      if (readyDone || current !== state) return;
      readyDone = true;
      main.dataset.ready = name;
      performance.mark(`ready:${name}`);
    },
    /** every runs fn every ms while the page is shown and the tab visible. */
    every(ms, fn) {
      const id = setInterval(() => { if (!document.hidden) fn(); }, ms);
      cleanups.push(() => clearInterval(id));
    },
    onCleanup(fn) { cleanups.push(fn); },
    /** alive reports whether this page is still the one shown. */
    alive: () => current === state,
  };
  if (!firstLoad) main.focus({ preventScroll: true });
  firstLoad = false;
  try {
    await mod.mount(main, ctx);
  } catch (err) {
    if (err instanceof AuthError || err.name === 'AbortError' || current !== state) return;
    console.error(err);
    main.append(errorBox(err));
  }
}

// Any 401: keep where the user was and show the login.
onAuthLost(() => {
  if (pageOf(location.pathname) === 'login') return;
  const next = location.pathname + location.search;
  navigate(`/web/login?next=${encodeURIComponent(next)}`, { replace: true });
});

// In-app links: plain <a href="/web/..."> without a reload.
document.addEventListener('click', (e) => {
  const a = e.target.closest('a[href^="/web/"]');
  if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey || a.target) return;
  e.preventDefault();
  navigate(a.getAttribute('href'));
});
window.addEventListener('popstate', show);

document.getElementById('zone').textContent = zone;
document.getElementById('logout').addEventListener('click', async () => {
  try { await api('/admin/logout', { method: 'POST' }); } catch { /* the session is gone either way */ }
  navigate('/web/login');
});

show();
