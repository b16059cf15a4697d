// Drives code-server (with the .vsix installed) in headless Chromium: Pi Events: Search with a
// query of two words typed and left, the last one still a prefix. The picker answers as you
// type, then, once typing has paused (piEvents.search.settleMs), asks once more `settled` and
// shows that order. Writes what it saw to a JSON file; tests/vscode/test_vscode_e2e.py asserts.
//
// Usage: node drive-settle.mjs <config.json>
// config: { url, chromium, shots, result, log, query }
import { readFileSync, mkdirSync } from 'node:fs';
import { launch, finish, quickPickRows, recordFailure, runCommand, screenshots, statusBarTexts, stepLog, until } from './workbench.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
mkdirSync(cfg.shots, { recursive: true });
const out = { steps: [], errors: [] };
const logEvents = stepLog(cfg.log);
const shot = screenshots(cfg.shots, out.steps);
const { browser, page } = await launch(cfg, { width: 1400, height: 900 });

try {
  await page.goto(cfg.url);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  await until('the status bar counts', async () => (await statusBarTexts(page)).find((t) => /Pi Events: [\d.]+k? sessions/.test(t)), 60000);
  const before = logEvents('search').length;
  await runCommand(page, 'Pi Events: Search');
  await until('the search picker', async () => (await page.locator('.quick-input-widget .quick-input-title').innerText()).includes('Pi Events: Search'), 10000);
  await page.keyboard.type(cfg.query, { delay: 40 });
  const mine = () => logEvents('search').slice(before).filter((e) => e.query === cfg.query);
  out.typed = await until('the answer as typed', async () => mine().find((e) => !e.settled), 15000);
  out.settled = await until('the settled answer', async () => mine().find((e) => e.settled), 15000);
  // The rows shown are the settled answer's (its order), however long it waits.
  out.rows = await until('the settled rows', async () => {
    const rows = (await quickPickRows(page)).map((r) => r.aria);
    return rows.length && rows.join('\n') === out.settled.rows.join('\n') ? rows : undefined;
  }, 10000);
  out.after = mine().length;
  await shot(page, 'search-settled');
} catch (err) {
  await recordFailure(out.errors, err, () => shot(page, 'settle-failure'));
} finally {
  await finish(cfg.result, out, browser);
}
