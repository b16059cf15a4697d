// Bundles the extension (dist/extension.js) and, with --tests, the unit tests (out/unit/*.test.js).
// Usage: node esbuild.mjs [--production] [--tests]
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';

const production = process.argv.includes('--production');
const tests = process.argv.includes('--tests');

if (tests) {
  const entryPoints = readdirSync('test/unit')
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/unit/${f}`);
  await build({
    entryPoints,
    outdir: 'out/unit',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    sourcemap: 'inline',
    // The unit tests cover modules that never import vscode; fail loudly if one does.
    external: [],
    logLevel: 'warning',
  });
} else {
  await build({
    entryPoints: ['src/extension.ts'],
    outfile: 'dist/extension.js',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    minify: production,
    sourcemap: !production,
    logLevel: 'warning',
  });
}
