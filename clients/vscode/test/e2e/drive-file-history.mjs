// Drives code-server (with the .vsix installed) in headless Chromium through the file history
// features (issue 18): the CodeLens at the top of a file Pi changed, "Pi Events: History of This
// File", and "Pi Events: Which Event Wrote This Line" from the editor's context menu, on a line
// Pi wrote and on a line nobody wrote. Writes what it saw to a JSON file;
// tests/vscode/test_vscode_file_history_e2e.py asserts on it.
//
// Usage: node drive-file-history.mjs <config.json>
// config: { url, chromium, shots, result, log, fileName, writtenLine, handLine } (lines 1-based)
import { readFileSync, mkdirSync } from 'node:fs';
import { launch, activeTab, finish, quickPickRows, recordFailure, runCommand, screenshots, sleep, statusBarTexts, stepLog, until } from './workbench.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
mkdirSync(cfg.shots, { recursive: true });
const out = { steps: [], errors: [] };
const logEvents = stepLog(cfg.log);
const shot = screenshots(cfg.shots, out.steps);

const input = (page) => page.locator('.quick-input-widget input');
const title = async (page) => page.locator('.quick-input-widget .quick-input-title').innerText();
const toasts = async (page) => page.locator('.notifications-toasts .notification-list-item-message').allInnerTexts();

/** Opens the workspace file and puts the cursor at the start of a (1-based) line. */
async function cursorOn(page, line) {
  const tab = page.locator('.tabs-container .tab').filter({ hasText: cfg.fileName }).first();
  if (!(await activeTab(page)).includes(cfg.fileName) && (await tab.count())) {
    await tab.click();
    await until('the file tab', async () => (await activeTab(page)).includes(cfg.fileName), 10000);
  } else if (!(await activeTab(page)).includes(cfg.fileName)) {
    await page.keyboard.press('Control+P');
    await input(page).waitFor({ state: 'visible' });
    await page.keyboard.type(cfg.fileName, { delay: 20 });
    await until('the file in quick open', async () => (await quickPickRows(page)).some((r) => r.label.includes(cfg.fileName)), 10000);
    await page.keyboard.press('Enter');
    await until('the file tab', async () => (await activeTab(page)).includes(cfg.fileName), 10000);
  }
  const at = `Ln ${line}, Col 1`;
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Control+G');
    await input(page).waitFor({ state: 'visible', timeout: 5000 }).catch(() => undefined);
    await input(page).fill(`:${line}:1`).catch(() => undefined);
    await sleep(200);
    await page.keyboard.press('Enter');
    const ok = await until('the cursor', async () => (await statusBarTexts(page)).some((t) => t.includes(at)), 3000).catch(() => false);
    if (ok) return;
    if (attempt >= 4) throw new Error(`could not put the cursor at ${at}`);
    await page.keyboard.press('Escape');
  }
}

/** "Which Event Wrote This Line" from the editor's context menu (right click on the cursor line). */
async function lineOriginFromMenu(page) {
  const cursor = page.locator('.editor-group-container.active .monaco-editor .cursor').first();
  const box = await cursor.boundingBox();
  await page.mouse.click(box.x + 2, box.y + box.height / 2, { button: 'right' });
  const item = page.locator('.context-view .action-item').filter({ hasText: 'Which Event Wrote This Line' }).first();
  await item.waitFor({ state: 'visible', timeout: 10000 });
  out.menuHasItem = true;
  await item.click();
  // On a loaded machine the click can land while the menu is still settling: the item stays
  // highlighted and the menu open. Enter then runs the highlighted item.
  await sleep(800);
  if (await item.isVisible().catch(() => false)) await page.keyboard.press('Enter');
}

const { browser, page } = await launch(cfg, { width: 1400, height: 900 });

try {
  await page.goto(cfg.url);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  await until('the status bar counts', async () => (await statusBarTexts(page)).find((t) => /Pi Events: [\d.]+k? sessions/.test(t)), 60000);

  // 1. The CodeLens at the top of the file Pi changed.
  await cursorOn(page, 1);
  out.lens = await until('the CodeLens', async () => {
    const t = await page.locator('.editor-group-container.active .codelens-decoration').allInnerTexts();
    return t.find((x) => x.startsWith('Pi:'));
  }, 30000);
  await shot(page, 'file-lens');

  // 2. History of This File: the picker, then Enter opens the first event's read view.
  const before = logEvents('fileHistory').length;
  await runCommand(page, 'Pi Events: History of This File');
  out.history = await until('the history answer', async () => logEvents('fileHistory').slice(before).at(-1), 15000);
  await until('the history picker', async () => (await title(page)).includes('History of'), 10000);
  await sleep(400);
  out.historyTitle = await title(page);
  out.historyRows = await quickPickRows(page);
  await shot(page, 'file-history');
  const reads = logEvents('read').length;
  const opens = logEvents('openRead').length;
  await page.keyboard.press('Enter');
  out.historyRead = await until('the read view', async () => logEvents('read').slice(reads)[0], 15000);
  await until('the read view shown', async () => logEvents('openRead').slice(opens)[0], 15000);
  await until('the read view tab', async () => !(await activeTab(page)).includes(cfg.fileName), 15000);

  // 3. Which Event Wrote This Line, on a line Pi wrote: the event opens.
  await cursorOn(page, cfg.writtenLine);
  const origins = logEvents('lineOrigin').length;
  const opens2 = logEvents('openRead').length;
  await lineOriginFromMenu(page);
  out.origin = await until('the line origin', async () => logEvents('lineOrigin').slice(origins)[0], 15000);
  out.originRead = await until('its read view', async () => logEvents('openRead').slice(opens2)[0], 15000);
  await until('its read view tab', async () => !(await activeTab(page)).includes(cfg.fileName), 15000);
  await sleep(300);
  await shot(page, 'line-origin');

  // 4. On a line nobody wrote: said plainly.
  await cursorOn(page, cfg.handLine);
  await lineOriginFromMenu(page);
  out.noOrigin = await until('the line origin', async () => logEvents('lineOrigin').slice(origins + 1)[0], 15000);
  out.noOriginToast = await until('the message', async () => (await toasts(page)).find((t) => t.includes('no Pi event')), 10000);
  await shot(page, 'line-origin-none');

  // 5. History of This File from the Explorer's context menu.
  await page.keyboard.press('Escape');
  const before5 = logEvents('fileHistory').length;
  const row = page.locator('.explorer-folders-view .monaco-list-row').filter({ hasText: cfg.fileName }).first();
  await row.click({ button: 'right' });
  const entry = page.locator('.context-view .action-item').filter({ hasText: 'History of This File' }).first();
  await entry.waitFor({ state: 'visible', timeout: 10000 });
  out.explorerMenuHasItem = true;
  await entry.hover();
  await sleep(300);
  await page.keyboard.press('Enter');
  out.explorerHistory = await until('the history from the explorer', async () => logEvents('fileHistory').slice(before5)[0], 15000);
  await page.keyboard.press('Escape');
} catch (err) {
  await recordFailure(out.errors, err, () => shot(page, 'file-failure'));
} finally {
  await finish(cfg.result, out, browser);
}
