// Drives code-server (with the .vsix installed) in headless Chromium through sessions (issue 32):
// the Sessions view's list, the search picker's "Group by session" toggle (one row per session;
// Enter opens the strongest event; the choice is remembered), the Sessions view showing that
// search (the query in its title, a session's matching events under it, a click opens one), and
// back to every session (a session's events in file order; a session's Open button reads its first
// event). Writes what it saw to a JSON file;
// tests/vscode/test_vscode_sessions_e2e.py asserts on it.
//
// Usage: node drive-sessions.mjs <config.json>
// config: { url, chromium, shots, result, log, query, sessionCount, expand, expandList }
//   expand / expandList: the session id to open in the search / in the list.
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { launch, finish, quickPickRows, recordFailure, runCommand, screenshots, sleep, statusBarTexts, stepLog, until } from './workbench.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
mkdirSync(cfg.shots, { recursive: true });
const out = { steps: [], errors: [] };
const logEvents = stepLog(cfg.log);
const shot = screenshots(cfg.shots, out.steps);
const title = async (page) => page.locator('.quick-input-widget .quick-input-title').innerText();

/** The Sessions view's pane (its title starts with "Pi Sessions", whatever it shows). */
const pane = (page) => page.locator('.pane').filter({ has: page.locator('.pane-header', { hasText: 'Pi Sessions' }) }).first();

/** The view's title as shown, and its rows: what a person sees and what a screen reader says. */
async function viewState(page) {
  const p = pane(page);
  const header = await p.locator('.pane-header').first().evaluate((h) => ({
    title: h.querySelector('.title')?.textContent ?? '',
    description: h.querySelector('.description')?.textContent ?? '',
  }));
  const message = (await p.locator('.message').allInnerTexts().catch(() => [])).join(' ').trim();
  const rows = await p.locator('.monaco-list-row').evaluateAll((rs) =>
    rs
      .map((r) => ({
        index: Number(r.getAttribute('data-index')),
        level: Number(r.getAttribute('aria-level')),
        expanded: r.getAttribute('aria-expanded'),
        aria: r.getAttribute('aria-label') ?? '',
        label: r.querySelector('.label-name')?.textContent ?? '',
        description: r.querySelector('.label-description')?.textContent ?? '',
        highlights: Array.from(r.querySelectorAll('.label-name .highlight'), (h) => h.textContent ?? ''),
        // Recorded text is plain: no element a renderer of HTML or Markdown would have made.
        markup: r.querySelectorAll('.label-name b, .label-name strong, .label-name em, .label-name img, .label-name a, .label-name code').length,
      }))
      .sort((a, b) => a.index - b.index),
  );
  return { ...header, message, rows };
}

/** Rows that stay the same for 300 ms and satisfy `ok`. */
async function stableView(page, what, ok, timeout = 20000) {
  let previous = '';
  return until(what, async () => {
    const state = await viewState(page);
    const key = JSON.stringify(state);
    const stable = key === previous;
    previous = key;
    return stable && ok(state) ? state : undefined;
  }, timeout, 300);
}

async function stablePicker(page, what, ok, timeout = 10000) {
  let previous = '';
  return until(what, async () => {
    const rows = await quickPickRows(page);
    const key = JSON.stringify(rows);
    const stable = key === previous;
    previous = key;
    return stable && ok(rows) ? rows : undefined;
  }, timeout, 300);
}

/** Clicks a row of the view (found by its aria-label) and returns the read it opened. */
async function openFromView(page, aria) {
  const reads = logEvents('read').length;
  const opens = logEvents('openRead').length;
  await pane(page).locator(`.monaco-list-row[aria-label="${aria.replace(/"/g, '\\"')}"]`).first().click();
  const read = await until('the read view of the clicked event', async () => logEvents('read').slice(reads)[0], 15000);
  await until('the read view shown', async () => logEvents('openRead').slice(opens)[0], 15000);
  return read;
}

/** Expands a session's row (a click on a row without a command toggles it); its events, as logged. */
async function expand(page, mode, sessionId, aria) {
  const before = logEvents('sessionEvents').length;
  await pane(page).locator(`.monaco-list-row[aria-label="${aria.replace(/"/g, '\\"')}"]`).first().click();
  return until(`the events of ${sessionId}`, async () =>
    logEvents('sessionEvents').slice(before).find((e) => e.sessionId === sessionId && e.mode === mode), 15000);
}

/** Drags the sash right of the side bar by `dx` pixels (a wider view shows more of each row). */
async function widenSideBar(page, dx) {
  const box = await page.locator('.part.sidebar').first().boundingBox();
  if (!box) return;
  const x = box.x + box.width;
  const y = box.y + box.height / 2;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + dx, y, { steps: 8 });
  await page.mouse.up();
}

const { browser, page } = await launch(cfg, { width: 1600, height: 900 });

try {
  await page.goto(cfg.url);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  await until('the status bar counts', async () => (await statusBarTexts(page)).find((t) => /Pi Events: [\d.]+k? sessions/.test(t)), 60000);

  // 1. The Sessions view lists every session of the workspace, newest first. (The folder's
  // section is folded first, so that the view has the Explorer's height.)
  const folders = page.locator('.pane').filter({ has: page.locator('.explorer-folders-view') }).locator('.pane-header').first();
  if ((await folders.getAttribute('aria-expanded')) === 'true') await folders.click();
  await widenSideBar(page, 145);
  await runCommand(page, 'Pi Events: Show Sessions');
  out.list = await until('the sessions list', async () =>
    logEvents('sessions').filter((e) => e.mode === 'list' && e.sessions.length >= cfg.sessionCount).at(-1), 30000);
  out.listView = await stableView(page, 'the list in the view', (s) => s.rows.length >= out.list.rows.length);
  await shot(page, 'sessions-list');

  // 2. The search picker, events first; then the toggle: one row per session.
  const searches = logEvents('search').length;
  await runCommand(page, 'Pi Events: Search');
  await until('the search picker', async () => (await title(page)).includes('Pi Events: Search'), 10000);
  await page.keyboard.type(cfg.query, { delay: 40 });
  out.events = await until('the events', async () =>
    logEvents('search').slice(searches).filter((e) => e.query === cfg.query && e.mode === 'events').at(-1), 20000);
  const toggle = page.locator('.quick-input-widget .action-label[aria-label^="Group by session"]').first();
  out.toggleLabel = await toggle.getAttribute('aria-label');
  await toggle.click();
  out.grouped = await until('the sessions', async () =>
    logEvents('search').slice(searches).filter((e) => e.query === cfg.query && e.mode === 'sessions').at(-1), 20000);
  out.groupedRows = await stablePicker(page, 'the session rows', (r) => r.length === out.grouped.rows.length);
  out.groupedTitle = await title(page);
  out.toggleLabelOn = await page.locator('.quick-input-widget .action-label[aria-label^="Group by session"]').first().getAttribute('aria-label');
  await shot(page, 'sessions-picker');

  // 3. Enter opens the first session's strongest event.
  const reads = logEvents('read').length;
  const opens = logEvents('openRead').length;
  await page.keyboard.press('Enter');
  out.groupedRead = await until('the read view of the top event', async () => logEvents('read').slice(reads)[0], 15000);
  // The editor takes the focus once shown: only then can the palette keep it.
  await until('the read view shown', async () => logEvents('openRead').slice(opens)[0], 15000);

  // 4. Opened again, the picker is still by session (remembered for the window).
  await runCommand(page, 'Pi Events: Search');
  await until('the picker again', async () => (await title(page)).includes('Pi Events: Search'), 10000);
  await sleep(300);
  out.rememberedTitle = await title(page);
  await page.keyboard.press('Escape');

  // 5. The Sessions view shows that search: the query in its title, its sessions in rank order.
  await runCommand(page, 'Pi Events: Show Sessions');
  out.searchView = await stableView(page, 'the search in the view', (s) => s.title.includes(cfg.query) && s.rows.length >= out.grouped.rows.length);
  out.searchLogged = logEvents('sessions').filter((e) => e.mode === 'search').at(-1);
  const target = out.searchLogged.sessions.indexOf(cfg.expand);
  if (target < 0) throw new Error(`session ${cfg.expand} is not in the search by session`);
  out.searchEvents = await expand(page, 'search', cfg.expand, out.searchLogged.rows[target]);
  out.searchExpanded = await stableView(page, 'its matching events', (s) => s.rows.filter((r) => r.level === 2).length >= out.searchEvents.rows.length);
  await shot(page, 'sessions-view');
  const child = out.searchEvents.rows[Math.min(1, out.searchEvents.rows.length - 1)];
  out.childClicked = child;
  out.childRead = await openFromView(page, child);
  await sleep(500);
  await shot(page, 'sessions-view-read');
  // The README's picture: the picker by session over the view showing the same search.
  await runCommand(page, 'Pi Events: Search');
  await until('the picker by session', async () => (await title(page)).includes('by session'), 10000);
  await stablePicker(page, 'its rows', (r) => r.length === out.grouped.rows.length);
  await page.screenshot({ path: join(cfg.shots, 'readme-sessions.png'), clip: { x: 0, y: 0, width: 1600, height: 330 } });
  await page.keyboard.press('Escape');

  // 6. Back to every session; a session's events in file order; a click opens one.
  await pane(page).hover();
  const lists = logEvents('sessions').length;
  await pane(page).locator('.actions .action-label[aria-label^="Show Every Session"]').first().click();
  out.back = await until('the list again', async () => logEvents('sessions').slice(lists).find((e) => e.mode === 'list'), 20000);
  out.backView = await stableView(page, 'the list in the view again', (s) => s.title === 'Pi Sessions' && s.rows.length >= out.back.rows.length);
  const at = out.back.sessions.indexOf(cfg.expandList);
  if (at < 0) throw new Error(`session ${cfg.expandList} is not in the list`);
  out.listEvents = await expand(page, 'list', cfg.expandList, out.back.rows[at]);
  out.listExpanded = await stableView(page, 'its events', (s) => s.rows.filter((r) => r.level === 2).length >= Math.min(out.listEvents.rows.length, 3));
  out.listChildClicked = out.listEvents.rows[2];
  out.listChildRead = await openFromView(page, out.listChildClicked);
  await shot(page, 'sessions-list-events');

  // 7. A session's Open button (inline, on hover) reads its first event.
  const row = pane(page).locator(`.monaco-list-row[aria-label="${out.back.rows[at].replace(/"/g, '\\"')}"]`).first();
  await row.hover();
  const before = logEvents('read').length;
  await row.locator('.actions .action-label[aria-label="Open"]').first().click();
  out.sessionOpened = { sessionId: cfg.expandList, ref: out.back.refs[at] };
  out.sessionRead = await until('the read view of the first event', async () => logEvents('read').slice(before)[0], 15000);
} catch (err) {
  await recordFailure(out.errors, err, () => shot(page, 'sessions-failure'));
} finally {
  await finish(cfg.result, out, browser);
}
