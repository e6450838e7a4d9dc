// Shared setup of the dashboard's browser tests: the real bin/ccload
// (`make build`) serving a temporary config against `ccload mock-upstream`,
// both as child processes on loopback ports they pick themselves; client
// traffic sent with fetch; headless Debian chromium driven by
// playwright-core.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = resolve(here, '..', '..');
export const bin = join(repo, 'bin', 'ccload');
export const artifacts = join(here, 'artifacts');

// Secrets of the test config: no response of the dashboard or the admin
// API may contain any of them.
export const secrets = {
  adminPassword: 'e2e-admin-password-7f3a9c21',
  alice: 'sk-e2e-alice-token-4b1d2e8f9a',
  bob: 'sk-e2e-bob-token-9c0a1f7e3d',
  ci: 'sk-e2e-ci-token-expired-5e6f',
  keyMain1: 'sk-e2e-upstream-main-key-0001',
  keyMain2: 'sk-e2e-upstream-main-key-0002',
  keyOpenAI: 'sk-e2e-upstream-openai-key-0003',
  keyFlaky: 'sk-e2e-upstream-flaky-key-0004',
  keyArchive: 'sk-e2e-upstream-archive-key-0005',
  urlQuery: 'e2e-url-query-secret-0006',
  rewrite: 'e2e-rewrite-header-secret-0007',
  proxyPass: 'e2e-proxy-password-0008',
};

// secretKey seals the seeded subscription accounts (start({accounts: true})).
export const secretKey = 'e2e0'.repeat(16);

export function config(mockURL, db, { accounts = false } = {}) {
  const s = secrets;
  return `version: 1
server: {admin_password: "${s.adminPassword}", max_body_bytes: 1MiB${accounts ? `, secret_key: "${secretKey}"` : ''}}
storage: {driver: sqlite, dsn: "${db}", log_retention: 30d}
routing:
  cooldown: {server: 10m, min: 10s, max: 30m, fallback: false}
  max_attempts: 3
  unpriced: allow # the mock's *-mock-* models have no price; serve them, flagged
channels:
  - name: main
    priority: 10
    weight: 2
    urls: [{url: "${mockURL}", protocols: [anthropic]}]
    keys: ["${s.keyMain1}", "${s.keyMain2}"]
    models:
      - claude-sonnet-4-6
      - {name: claude-opus-4-8, upstream: claude-opus-4-6}
      - claude-sonnet-4-6-mock-slow
    rpm_limit: 600
    max_concurrency: 16
    rewrite:
      headers: [{action: override, name: X-Relay-Auth, value: "${s.rewrite}"}]
  - name: openai
    priority: 10
    urls: [{url: "${mockURL}", protocols: [openai]}]
    keys: ["${s.keyOpenAI}"]
    models: [gpt-5, gpt-5-mini]
    debug: true # its requests keep their upstream traffic (Logs row details)
  - name: flaky
    priority: 5
    urls: [{url: "${mockURL}", protocols: [anthropic]}]
    keys: ["${s.keyFlaky}"]
    models: [claude-haiku-4-5-mock-fail-500]
    daily_cost_limit: 5
  - name: archive
    priority: 1
    urls: [{url: "${mockURL}/gemini?key=${s.urlQuery}", protocols: [gemini]}]
    keys: ["${s.keyArchive}"]
    models: [gemini-3.5-flash-lite]
    proxy: "http://relay:${s.proxyPass}@127.0.0.1:9"
    enabled: false
${accounts ? `  - name: chatgpt
    oauth: codex
    accounts: [alice, bob, carol, dave]
    urls: ["${mockURL}"]
    oauth_issuer: "${mockURL}"
    models: [gpt-5.4]
` : ''}tokens:
  - name: alice
    token: "${s.alice}"
  - name: bob
    token: "${s.bob}"
    models: ["claude-*", "gpt-5*"]
    channels: {deny: [archive]}
    cost_limit: 50
    max_concurrency: 8
    rpm_limit: 600
    expires: 2030-01-01
  - name: ci
    token: "${s.ci}"
    expires: 2024-01-01
`;
}

/** spawnReady starts bin with args and resolves with the first match of re in its stderr. */
function spawnReady(args, re, label) {
  return new Promise((resolvePromise, reject) => {
    const p = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${label} did not start in 15 s:\n${err}`)), 15000);
    p.stderr.on('data', (d) => {
      err += d;
      const m = err.match(re);
      if (m) { clearTimeout(timer); resolvePromise({ proc: p, match: m, stderr: () => err }); }
    });
    p.stdout.on('data', () => {});
    p.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${label} exited with ${code}:\n${err}`)); });
  });
}

/**
 * start runs a mock upstream and a gateway on a fresh temporary config.
 * seedRows > 0 fills the database with that many synthetic log rows over
 * the last span first (webui/e2e/seed); accounts adds the codex channel
 * chatgpt and seeds its accounts (webui/e2e/seed/accounts.go). Returns
 * {base, mockURL, dir, cfg, stop}.
 */
export async function start({ seedRows = 0, span = '24h', accounts = false } = {}) {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run make build`);
  const dir = mkdtempSync(join(tmpdir(), 'ccload-e2e-'));
  const db = join(dir, 'ccload.db');
  if (seedRows > 0 || accounts) {
    const seed = join(dir, 'seed');
    execFileSync('go', ['build', '-o', seed, './webui/e2e/seed'], { cwd: repo, stdio: 'inherit' });
    const extra = accounts ? ['-accounts', 'chatgpt', '-secret-key', secretKey] : [];
    execFileSync(seed, ['-db', db, '-n', String(seedRows), '-span', span, ...extra], { stdio: 'inherit' });
  }
  const mock = await spawnReady(['mock-upstream', '--listen', '127.0.0.1:0'], /listening on (\S+)/, 'mock upstream');
  const mockURL = mock.match[1];
  const cfg = join(dir, 'ccload.yaml');
  writeFileSync(cfg, config(mockURL, db, { accounts }));
  let gw;
  try {
    gw = await spawnReady(['serve', '-c', cfg, '--listen', '127.0.0.1:0', '--grace', '2s'], /ccload serving.*?addr=(\S+)/, 'gateway');
  } catch (e) {
    mock.proc.kill();
    throw e;
  }
  const base = `http://${gw.match[1]}`;
  const stop = async () => {
    for (const p of [gw.proc, mock.proc]) {
      if (p.exitCode !== null) continue;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (p.exitCode === null) p.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { base, mockURL, dir, cfg, stop, gatewayLog: gw.stderr };
}

/** messages sends one Anthropic Messages request as token and returns {status, text}. */
export async function messages(base, token, model, { stream = false } = {}) {
  const res = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': token, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 64, stream, messages: [{ role: 'user', content: 'Hello from the e2e test' }] }),
  });
  return { status: res.status, text: await res.text() };
}

/** chat sends one OpenAI Chat request as token. */
export async function chat(base, token, model, { stream = false } = {}) {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Hello from the e2e test' }] }),
  });
  return { status: res.status, text: await res.text() };
}

/** admin calls the admin API with the password as a Bearer token. */
export async function admin(base, path, init = {}) {
  const res = await fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${secrets.adminPassword}`, ...(init.headers || {}) } });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return text;
}

/** waitFor polls fn until it returns a truthy value or ms pass. */
export async function waitFor(fn, ms = 10000, what = 'condition') {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-quic', '--disable-sync'];

/** browser launches Debian's chromium headless. */
export function browser() {
  mkdirSync(artifacts, { recursive: true });
  return chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: chromiumArgs, headless: true });
}

/** login logs page in through the login form and waits for the overview. */
export async function login(page, base, password = secrets.adminPassword) {
  await page.goto(`${base}/web/`);
  await page.waitForURL(/\/web\/login/);
  await page.fill('#password', password);
  await page.click('button[type=submit]');
  await page.waitForSelector('main[data-ready="overview"]');
}
