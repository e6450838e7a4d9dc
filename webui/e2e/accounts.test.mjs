// The Channels page's subscription accounts: a codex channel whose accounts
// were sealed into the database as `ccload login` stores them (seed/
// accounts.go) — alice ok with quota windows and requests today, bob
// exhausted, carol invalid, dave signed out — shown from GET /admin/accounts
// with their states, expiry, quota and usage; and no credential anywhere in
// what the browser receives.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { start, admin, browser, login, artifacts } from './harness.mjs';

let gw;
let br;
let page;
const bodies = [];
const problems = [];

before(async () => {
  gw = await start({ accounts: true });
  br = await browser();
  const ctx = await br.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US' });
  page = await ctx.newPage();
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(`console: ${m.text()}`); });
  page.on('response', async (r) => { try { bodies.push(await r.text()); } catch { /* redirects have no body */ } });
});

after(async () => {
  await br?.close();
  await gw?.stop();
});

test('the admin API lists the seeded accounts with their states', async () => {
  const { accounts } = JSON.parse(await admin(gw.base, '/admin/accounts'));
  const by = Object.fromEntries(accounts.map((a) => [a.account, a]));
  assert.deepEqual(Object.keys(by).sort(), ['alice', 'bob', 'carol', 'dave']);
  assert.equal(by.alice.state, 'ok');
  assert.equal(by.bob.state, 'exhausted');
  assert.equal(by.carol.state, 'invalid');
  assert.equal(by.dave.state, 'signed_out');
  assert.equal(by.alice.requests_today, 3);
});

test('channels: the accounts table shows state, expiry, quota and usage', async () => {
  await login(page, gw.base);
  await page.goto(`${gw.base}/web/channels`);
  await page.waitForSelector('main[data-ready="channels"]');
  await page.waitForSelector('#accounts tr[data-account="chatgpt/dave"]');
  const rows = await page.$$eval('#accounts tbody tr', (trs) => trs.map((tr) => ({
    id: tr.dataset.account, state: tr.dataset.state, cells: [...tr.cells].map((c) => c.innerText.trim().replace(/\s+/g, ' ')),
  })));
  const by = Object.fromEntries(rows.map((r) => [r.id.split('/')[1], r]));
  assert.equal(rows.length, 4);
  const heads = await page.$$eval('#accounts thead th', (ths) => ths.map((t) => t.textContent));
  const col = (name) => heads.indexOf(name);
  for (const r of rows) {
    assert.equal(r.cells[col('Channel')], 'chatgpt');
    assert.equal(r.cells[col('Provider')], 'codex');
  }
  assert.equal(by.alice.cells[col('State')], 'ok');
  assert.match(by.alice.cells[col('Quota (5 h)')], /^42% · resets /);
  assert.match(by.alice.cells[col('Quota (week)')], /^13% · resets /);
  assert.notEqual(by.alice.cells[col('Token expires')], '');
  assert.notEqual(by.alice.cells[col('Last refresh')], '');
  assert.equal(by.alice.cells[col('Requests today')], '3');
  assert.match(by.alice.cells[col('Cost today')], /0\.0375|0\.04/);
  assert.match(by.bob.cells[col('State')], /^exhausted until \S/);
  assert.equal(by.bob.state, 'exhausted');
  assert.match(by.bob.cells[col('Quota (5 h)')], /^100%/);
  assert.equal(by.carol.cells[col('State')], 'invalid refresh_token_reused: Your refresh token has already been used');
  assert.equal(by.dave.cells[col('State')], 'signed out');
  assert.equal(by.dave.cells[col('Token expires')], '');
  assert.equal(by.dave.cells[col('Requests today')], '0');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(artifacts, 'channels-accounts.png'), fullPage: true });
});

test('no credential reaches the browser, no script error', () => {
  assert.ok(bodies.length > 0);
  for (const b of bodies) {
    assert.ok(!/e2e-(access|refresh)-/.test(b), 'a sealed token reached the browser');
    assert.ok(!/acct-(alice|bob|carol)/.test(b), 'a provider account id reached the browser');
  }
  assert.deepEqual(problems, []);
});
