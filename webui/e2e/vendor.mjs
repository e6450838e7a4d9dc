// Copies uPlot (pinned in package.json) into ../dist/vendor, the only
// third-party code the dashboard ships. Run after changing the version:
//   npm --prefix webui/e2e ci && npm --prefix webui/e2e run vendor
// The files are committed, so building ccload needs neither npm nor this
// script; vendor.test.mjs fails when the committed copy and the pinned
// package differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, 'node_modules', 'uplot');
const out = join(here, '..', 'dist', 'vendor');

/** vendored returns the files vendor.mjs writes, name -> content. */
export function vendored() {
  const { version, license } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  const header = `/*! uPlot ${version} | (c) Leon Sorokin | ${license} License, full text in uPlot.LICENSE */\n`;
  return {
    'uPlot.min.js': header + readFileSync(join(pkg, 'dist', 'uPlot.iife.min.js'), 'utf8'),
    'uPlot.min.css': header + readFileSync(join(pkg, 'dist', 'uPlot.min.css'), 'utf8'),
    'uPlot.LICENSE': readFileSync(join(pkg, 'LICENSE'), 'utf8'),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [name, text] of Object.entries(vendored())) {
    writeFileSync(join(out, name), text);
    console.log(`wrote dist/vendor/${name} (${text.length} bytes)`);
  }
}
