// Builds the server wheel that the .vsix carries (server-wheel/pi_event_search-<version>-py3-none-any.whl);
// the extension installs it into a private venv when no server is found (src/installer.ts).
// Usage: node build-wheel.mjs   (Python: $PYTHON, else python3; the build backend, hatchling, comes
// from the package index through pip's build isolation unless it is already cached)
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const out = join(here, 'server-wheel');
rmSync(out, { recursive: true, force: true });
mkdirSync(out);
const python = process.env.PYTHON || 'python3';
const run = spawnSync(python, ['-m', 'pip', 'wheel', '--no-deps', '--disable-pip-version-check', '-q', '-w', out, root], { stdio: 'inherit' });
if (run.status !== 0) {
  console.error(`build-wheel: ${python} -m pip wheel failed (${run.status ?? run.error})`);
  process.exit(1);
}
const wheels = readdirSync(out).filter((f) => /^pi_event_search-.*\.whl$/.test(f));
if (wheels.length !== 1) {
  console.error(`build-wheel: expected one pi_event_search wheel in ${out}, found ${wheels.join(', ') || 'none'}`);
  process.exit(1);
}
console.log(`build-wheel: ${join('server-wheel', wheels[0])}`);
