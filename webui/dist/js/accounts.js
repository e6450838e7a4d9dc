// The subscription accounts of the oauth channels (GET /admin/accounts,
// docs/accounts.md), shown on the Channels page: per account its state,
// access-token expiry, last refresh, the quota windows the provider last
// reported and today's requests and cost. No credential is in the answer.
import { api, AuthError, h, badge, table, fmtInt, fmtCost, fmtTime, fmtWhen } from './lib.js';

const stateClass = { ok: 'ok', refreshing: 'warn', exhausted: 'warn', invalid: 'err', signed_out: 'muted', undecryptable: 'err', unconfigured: 'muted' };

// What each state asks of the operator (the table in docs/accounts.md).
const stateHelp = {
  exhausted: 'The provider said the quota is used up: skipped until its reset, then used again.',
  invalid: 'The provider refused the credential for good: sign in again with ccload login.',
  signed_out: 'Named in the config, no credential stored: ccload login.',
  undecryptable: 'Stored with another server.secret_key: restore the key or sign in again.',
  unconfigured: 'Stored, but the config no longer names it: ccload logout, or add it back.',
};

/** fetchAccounts reads the accounts; a server without the route gives none. */
export async function fetchAccounts(signal) {
  try {
    return (await api('/admin/accounts', { signal })).accounts || [];
  } catch (err) {
    if (err.name === 'AbortError' || err instanceof AuthError) throw err;
    return [];
  }
}

/**
 * stateCell is the state as docs/accounts.md names it: a badge, and under
 * it "until T" for exhausted, the provider's reason for invalid.
 */
function stateCell(a) {
  const label = a.state === 'signed_out' ? 'signed out' : a.state;
  let more = null;
  if (a.state === 'exhausted' && a.exhausted_until) more = `until ${fmtTime(a.exhausted_until)}`;
  else if (a.state === 'invalid' && a.reason) more = a.reason;
  return h('td', { class: 'state' }, badge(label, stateClass[a.state] || 'muted', stateHelp[a.state]),
    more ? h('div', { class: 'muted reason' }, more) : null);
}

function windowCell(w, label) {
  if (!w) return h('td', { class: 'num muted' }, '–');
  const cls = w.used_percent >= 100 ? 'err' : w.used_percent >= 80 ? 'warn' : null;
  const span = w.window_minutes ? `${label} window of ${w.window_minutes} min` : `${label} window`;
  return h('td', { class: 'num', title: span },
    h('span', { class: cls }, `${Math.round(w.used_percent * 10) / 10}%`),
    w.resets_at ? h('span', { class: 'muted' }, ` · resets ${fmtWhen(w.resets_at)}`) : null);
}

/** accountsTable is the accounts as a table, one row per account (data-account="channel/account"). */
export function accountsTable(list) {
  const cols = [{ label: 'Channel' }, { label: 'Account' }, { label: 'Provider' }, { label: 'State' },
    { label: 'Token expires' }, { label: 'Last refresh' }, { label: 'Quota (5 h)', num: true }, { label: 'Quota (week)', num: true },
    { label: 'Requests today', num: true }, { label: 'Cost today', num: true }];
  return table('Subscription accounts', cols, list.map((a) => h('tr', { dataset: { account: `${a.channel}/${a.account}`, state: a.state } },
    h('td', {}, a.channel),
    h('td', { class: 'mono', title: a.subject ? `provider account ${a.subject}` : null }, a.account),
    h('td', {}, a.provider),
    stateCell(a),
    h('td', {}, fmtTime(a.access_expires)),
    h('td', {}, fmtWhen(a.last_refresh)),
    windowCell(a.quota && a.quota.primary, 'Primary'),
    windowCell(a.quota && a.quota.secondary, 'Secondary'),
    h('td', { class: 'num' }, fmtInt(a.requests_today)),
    h('td', { class: 'num' }, fmtCost(a.cost_today)))));
}
