// The uPlot files committed in dist/vendor are exactly what vendor.mjs makes
// from the version pinned in package.json (so an update is one command and
// nobody edits the vendored copy by hand).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { vendored } from './vendor.mjs';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'vendor');

test('dist/vendor matches the pinned uPlot', () => {
  for (const [name, want] of Object.entries(vendored())) {
    assert.ok(readFileSync(join(dir, name), 'utf8') === want, `dist/vendor/${name} differs: run npm --prefix webui/e2e run vendor`);
  }
});
