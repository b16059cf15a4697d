// Drives code-server (with the .vsix installed) in headless Chromium through the user-visible
// steps of the extension and writes what it saw to a JSON file; tests/vscode/test_vscode_e2e.py
// builds the workspace, starts code-server, runs this script and asserts on the observations.
//
// Usage: node drive.mjs <config.json>
// config: { url, chromium, shots, result, log, query, noteName, noteLine, noteColumn, mode? }
// mode: 'notInstalled' (only the error message), 'install' (accept the install offer first),
// 'secrets' (search cfg.query, then read each of cfg.refs: what the views show of credentials)
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  launch,
  activeTab,
  clickNotificationButton,
  finish,
  notification,
  notificationButtons,
  quickPickRows,
  recordFailure,
  runCommand,
  screenshots,
  sleep,
  statusBarTexts,
  stepLog,
  until,
} from './workbench.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
mkdirSync(cfg.shots, { recursive: true });
const out = { steps: [], errors: [], console: [] };
const logEvents = stepLog(cfg.log);
const shot = screenshots(cfg.shots, out.steps);

/** Rows that stay the same for 300 ms and satisfy `ok` (the list re-renders asynchronously). */
async function stableRows(page, what, ok, timeout = 10000) {
  let previous = '';
  return until(what, async () => {
    const rows = await quickPickRows(page);
    const key = JSON.stringify(rows);
    const stable = key === previous;
    previous = key;
    return stable && ok(rows) ? rows : undefined;
  }, timeout, 300);
}

async function editorText(page) {
  return page.locator('.editor-group-container.active .monaco-editor .view-lines').first().innerText();
}

async function searchFor(page, query) {
  const before = logEvents('search').length;
  await runCommand(page, 'Pi Events: Search');
  await until('the search picker', async () => (await page.locator('.quick-input-widget .quick-input-title').innerText()).includes('Pi Events: Search'), 10000);
  await page.keyboard.type(query, { delay: 40 });
  const logged = await until(`search results for "${query}"`, async () => {
    const done = logEvents('search').slice(before).filter((e) => e.query === query);
    return done.length ? done[done.length - 1] : undefined;
  });
  const rows = await stableRows(page, 'rendered rows', (r) => r.length >= Math.min(logged.rows.length, 5));
  return { logged, rows };
}

const { browser, page } = await launch(cfg, { width: 1400, height: 900 });
page.on('console', (m) => {
  if (m.type() === 'error') out.console.push(m.text().slice(0, 300));
});

try {
  const t0 = Date.now();
  await page.goto(cfg.url);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  out.steps.push({ workbench: Date.now() - t0 });

  if (cfg.mode === 'notInstalled') {
    // The server is not installed for the configured interpreter: a clear message with a fix.
    out.toast = await notification(page, 'the not-installed message', 'not installed', 60000);
    out.buttons = await notificationButtons(page);
    out.statusTexts = await statusBarTexts(page);
    await shot(page, 'not-installed');
  } else flow: {

  if (cfg.mode === 'install') {
    // 0. No server anywhere: the extension offers to install its own; accept, wait for it.
    out.offer = await notification(page, 'the install offer', 'Install pi-event-search', 60000);
    out.offerButtons = await notificationButtons(page);
    out.steps.push({ offer: Date.now() - t0 });
    await shot(page, 'install-offer');
    const clicked = Date.now();
    await clickNotificationButton(page, 'Install Server');
    out.progress = await notification(page, 'the install progress', 'installing server', 30000).catch(() => '');
    out.statusWhileInstalling = await until('the status bar while installing', async () =>
      (await statusBarTexts(page)).find((t) => t.includes('installing the server')), 10000).catch(() => '');
    await shot(page, 'install-progress');
    const done = await until('the installed server', async () => {
      const failed = logEvents('installFailed').at(-1);
      return failed ? { failed } : logEvents('install').at(-1);
    }, 540000, 500);
    if (done.failed) throw new Error(`install failed: ${done.failed.message}`);
    out.install = done;
    out.installClickToDone = Date.now() - clicked;
    out.steps.push({ installed: Date.now() - t0 });
  }

  // 1. The status bar item appears and shows counts once the server has indexed.
  out.status = await until('the status bar counts', async () => {
    const texts = await statusBarTexts(page);
    return texts.find((t) => /Pi Events: [\d.]+k? sessions/.test(t));
  }, 60000);
  out.steps.push({ ready: Date.now() - t0 });

  if (cfg.mode === 'update') {
    // A newer server is bundled than the one installed: accept the update, wait for the restart.
    out.offer = await notification(page, 'the update offer', 'Update it?', 60000);
    out.offerButtons = await notificationButtons(page);
    await shot(page, 'update-offer');
    const before = logEvents('install').length;
    const clicked = Date.now();
    await clickNotificationButton(page, 'Update Server');
    const done = await until('the updated server', async () => {
      const failed = logEvents('installFailed').at(-1);
      return failed ? { failed } : logEvents('install').slice(before)[0];
    }, 540000, 500);
    if (done.failed) throw new Error(`update failed: ${done.failed.message}`);
    out.install = done;
    out.installClickToDone = Date.now() - clicked;
    out.afterUpdate = await until('the restarted server', async () => logEvents('serverStarted').slice(-1)[0]?.time > clicked && (await statusBarTexts(page)).find((t) => /Pi Events: [\d.]+k? sessions/.test(t)), 60000);
    // The old environment goes once the new server runs (the bootstrap's --prune).
    out.pruned = await until('the old environment removed', async () => logEvents('pruned').find((e) => e.time > clicked), 60000);
  }
  if (cfg.stopAfterReady) break flow;

  if (cfg.mode === 'secrets') {
    const found = await searchFor(page, cfg.query);
    out.secrets = { rows: found.rows, logged: found.logged, reads: [] };
    await shot(page, 'secrets-search');
    await page.keyboard.press('Escape');
    for (const ref of cfg.refs) {
      const before = logEvents('read').length;
      await runCommand(page, 'Pi Events: Open Event Reference…');
      await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
      await page.locator('.quick-input-widget input').fill(ref);
      await page.keyboard.press('Enter');
      await until(`the read view of ${ref}`, async () => logEvents('read').slice(before).find((e) => e.ref === ref), 15000);
      const text = await until('its text', async () => {
        const t = await editorText(page);
        return t.includes('Content') && t.includes(ref.split('/').at(-1)) ? t : undefined;
      }, 15000);
      out.secrets.reads.push({ ref, text });
    }
    await shot(page, 'secrets-read');
    break flow;
  }

  // 1b. A query with a word most events lack: partial hits follow the full one, marked as such;
  // a word no event holds is corrected, and the title says so.
  if (cfg.partialQuery) {
    const partial = await searchFor(page, cfg.partialQuery);
    out.partial = { logged: partial.logged, rows: partial.rows };
    await shot(page, 'search-partial');
    await page.keyboard.press('Escape');
    const typo = await searchFor(page, cfg.typoQuery);
    out.typo = { logged: typo.logged, title: await page.locator('.quick-input-widget .quick-input-title').innerText() };
    await page.keyboard.press('Escape');
  }

  // 2. Search, type a two-word query: items in the server's order.
  const first = await searchFor(page, cfg.query);
  out.search = { logged: first.logged, rows: first.rows };
  await shot(page, 'search');

  // 3. Accept the first item: the read view opens.
  await page.keyboard.press('Enter');
  const readUri = await until('the read view', async () => logEvents('read').at(-1)?.uri, 15000);
  await until('the read view editor', async () => (await editorText(page)).includes('Content'), 15000);
  out.read = { uri: readUri, tab: await activeTab(page), text: await editorText(page), logged: logEvents('read').at(-1) };
  await shot(page, 'read');

  // 3b. Copy its reference; step to the previous event (append order), then back (branch order).
  await runCommand(page, 'Pi Events: Copy Reference');
  out.copy = await until('the copied reference', async () => logEvents('copy').at(-1), 10000);
  const reads = logEvents('read').length;
  const opens = logEvents('openRead').length;
  await runCommand(page, 'Pi Events: Previous Event (append order)');
  out.previous = await until('the previous event', async () => logEvents('read').slice(reads)[0], 15000);
  await until('the previous event shown', async () => logEvents('openRead').slice(opens)[0], 15000);
  await sleep(300);
  await runCommand(page, 'Pi Events: Next Event (branch order)');
  out.next = await until('the next event', async () => logEvents('read').slice(reads + 1)[0], 15000);
  await until('the next event shown', async () => logEvents('openRead').slice(opens + 1)[0], 15000);
  await sleep(300);
  await until('the read view editor', async () => (await editorText(page)).includes('Content'), 15000);

  // 4. Trace the event in the read view.
  await runCommand(page, 'Pi Events: Trace');
  await until('the trace picker', async () => (await page.locator('.quick-input-widget .quick-input-title').innerText()).includes('Pi Events: Trace'), 10000);
  await sleep(300);
  out.trace = { rows: await quickPickRows(page), logged: logEvents('trace').at(-1) ?? null };
  await shot(page, 'trace');
  await page.keyboard.press('Escape');

  // 4b. Reveal the source line of the read view.
  const sources = logEvents('openSource').length;
  await runCommand(page, 'Pi Events: Reveal Source Line');
  out.reveal = await until('the revealed source line', async () => logEvents('openSource').slice(sources)[0], 15000);
  await until('the JSONL editor tab', async () => (await activeTab(page)).includes('.jsonl'), 15000);

  // 5. Search again and open the JSONL line with the modifier key (Ctrl+O).
  const second = await searchFor(page, cfg.query);
  await page.keyboard.press('Control+O');
  const opened = await until('the JSONL file', async () => logEvents('openSource').at(-1), 15000);
  await until('the JSONL editor tab', async () => (await activeTab(page)).includes('.jsonl'), 15000);
  const line = await until('the cursor line', async () => {
    const texts = await statusBarTexts(page);
    return texts.find((t) => /Ln \d+/.test(t));
  }, 10000);
  out.jsonl = { expected: second.logged.refs[0], opened, tab: await activeTab(page), cursor: line };
  await shot(page, 'jsonl');
  // 5b. Copy Reference on that JSONL line: the server names the event at the line (piEvents/eventAt).
  const copies = logEvents('copy').length;
  await runCommand(page, 'Pi Events: Copy Reference');
  out.jsonlCopy = await until('the reference of the JSONL line', async () => logEvents('copy').slice(copies)[0], 10000);

  // 6. Hover a reference in a Markdown note.
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
  await page.keyboard.type(cfg.noteName, { delay: 20 });
  await until('the note in quick open', async () => (await quickPickRows(page)).some((r) => r.label.includes(cfg.noteName)), 10000);
  await page.keyboard.press('Enter');
  await until('the note tab', async () => (await activeTab(page)).includes(cfg.noteName), 10000);
  // Put the cursor on the reference (quick access ":line:column"), and check it is there.
  const at = `Ln ${cfg.noteLine}, Col ${cfg.noteColumn}`;
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 5000 }).catch(() => undefined);
    await input.fill(`:${cfg.noteLine}:${cfg.noteColumn}`).catch(() => undefined);
    await sleep(200);
    await page.keyboard.press('Enter');
    const ok = await until('the cursor on the reference', async () => (await statusBarTexts(page)).some((t) => t.includes(at)), 3000).catch(() => false);
    if (ok) break;
    if (attempt >= 4) throw new Error(`could not put the cursor at ${at}: ${(await statusBarTexts(page)).join(' | ')}`);
    await page.keyboard.press('Escape');
  }
  const hoverText = async () => (await page.locator('.monaco-hover-content').allInnerTexts()).join('\n').trim();
  let hover = '';
  for (let attempt = 1; attempt <= 5; attempt++) {
    await runCommand(page, 'Show or Focus Hover');
    // The link part of the hover can render before the server's part: wait for the latter.
    hover = await until('the server hover', async () => {
      const t = await hoverText();
      return t.includes('open source line') ? t : undefined;
    }, 6000).catch(hoverText);
    if (hover.includes('open source line')) break;
    await page.keyboard.press('Escape');
    await sleep(500);
  }
  out.hover = hover;
  await shot(page, 'hover');

  // 6b. Paging: this workspace asks for 3 results a page; moving onto "More results…" loads more.
  await page.keyboard.press('Escape');
  const pages = logEvents('search').length;
  await runCommand(page, 'Pi Events: Search');
  const firstPage = await until('the first page', async () =>
    logEvents('search').slice(pages).find((e) => e.query === cfg.query && !e.filters && e.nextCursor), 10000);
  await stableRows(page, 'the rendered first page', (rows) => rows.length === firstPage.rows.length);
  await page.keyboard.press('ArrowUp');
  const allPages = await until('the next page', async () =>
    logEvents('search').slice(pages).find((e) => e.query === cfg.query && e.refs.length > firstPage.refs.length), 10000);
  const pagedRows = await stableRows(page, 'the rendered next page', (rows) => rows.length >= Math.min(allPages.rows.length, 6));
  out.paging = { first: firstPage, all: allPages, rows: pagedRows };
  await shot(page, 'paging');

  // 6c. A long tool result: the read view says it was cut; Show More widens the window.
  await page.keyboard.press('Escape');
  const before6c = logEvents('read').length;
  await runCommand(page, 'Pi Events: Open Event Reference…');
  await page.locator('.quick-input-widget input').waitFor({ state: 'visible' });
  await page.locator('.quick-input-widget input').fill(cfg.longRef);
  await page.keyboard.press('Enter');
  out.long = await until('the long event', async () => logEvents('read').slice(before6c).find((e) => e.ref === cfg.longRef), 15000);
  await until('the long event shown', async () => (await activeTab(page)) !== '' && (await editorText(page)).includes('Content'), 15000);
  await sleep(300);
  await runCommand(page, 'Pi Events: Show More of This Event');
  out.longer = await until('the wider window', async () =>
    logEvents('read').slice(before6c).find((e) => e.ref === cfg.longRef && e.uri.includes('length=')), 15000);

  // 7. Reindex from the palette.
  await page.keyboard.press('Escape');
  await runCommand(page, 'Pi Events: Reindex');
  out.reindex = await until('the reindex answer', async () => logEvents('reindex').at(-1), 20000);
  out.reindexToast = await notification(page, 'the reindex notification', 'reindexed', 10000).catch(() => '');

  // 7b. The Filters picker: kind tool.call on the empty query, then clear it again.
  const toggleKind = async (kind) => {
    await page.locator('.quick-input-widget .action-label[aria-label^="Filters"]').first().click();
    await until('the filters picker', async () => (await page.locator('.quick-input-widget .quick-input-title').innerText()).includes('Search filters'), 10000);
    const row = page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: kind }).first();
    await row.locator('label.quick-input-list-label').click();
    await sleep(200);
    await page.keyboard.press('Enter');
    // 'Pi Events: Search filters' starts the same way: wait until the filters picker is gone.
    await until('the search picker again', async () => {
      const title = await page.locator('.quick-input-widget .quick-input-title').innerText();
      return title.startsWith('Pi Events: Search') && !title.includes('Search filters');
    }, 10000);
  };
  await runCommand(page, 'Pi Events: Search');
  await until('the search picker', async () => (await page.locator('.quick-input-widget .quick-input-title').innerText()).includes('Pi Events: Search'), 10000);
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await until('the empty query', async () => (logEvents('search').at(-1)?.query === '' ? true : undefined), 10000);
  await toggleKind('tool.call');
  out.kindFilter = await until('tool.call results', async () => {
    const e = logEvents('search').at(-1);
    return e && e.query === '' && e.filters?.kind?.[0] === 'tool.call' ? e : undefined;
  }, 10000);
  out.kindTitle = await until('the kind in the title', async () => {
    const title = await page.locator('.quick-input-widget .quick-input-title').innerText();
    return title.includes('kind:') ? title : undefined;
  }, 10000).catch(async () => page.locator('.quick-input-widget .quick-input-title').innerText());
  await shot(page, 'kind-filter');
  await toggleKind('tool.call');
  await until('no filters again', async () => {
    const e = logEvents('search').at(-1);
    return e && e.query === '' && !e.filters ? e : undefined;
  }, 10000);
  await page.keyboard.press('Escape');

  // 8. Errors-only filter (title bar toggle) on the empty query: the newest failed events.
  await runCommand(page, 'Pi Events: Search');
  await until('the search picker', async () => (await page.locator('.quick-input-widget .quick-input-title').innerText()).includes('Pi Events: Search'), 10000);
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await until('the empty query', async () => (logEvents('search').at(-1)?.query === '' ? true : undefined), 10000);
  await page.locator('.quick-input-widget .action-label[aria-label^="Errors only"]').first().click();
  out.errorsOnly = await until('errors-only results', async () => {
    const e = logEvents('search').at(-1);
    return e && e.query === '' && e.filters?.errors === true ? e : undefined;
  }, 10000);
  out.errorsTitle = await page.locator('.quick-input-widget .quick-input-title').innerText();
  await sleep(300);
  await shot(page, 'errors');

  // 9. Open that failure, then search again over it (errors off) for the README screenshot.
  await page.keyboard.press('Enter');
  await until('the failure read view', async () => (logEvents('read').at(-1)?.ref === out.errorsOnly.refs[0] ? true : undefined), 15000);
  await until('the read view editor', async () => (await editorText(page)).includes('Content'), 15000);
  await runCommand(page, 'Pi Events: Search');
  await until('the search picker', async () => (await page.locator('.quick-input-widget .quick-input-title').innerText()).includes('errors only'), 10000);
  await page.locator('.quick-input-widget .action-label[aria-label^="Errors only"]').first().click();
  const before = logEvents('search').length;
  await page.locator('.quick-input-widget input').focus();
  await page.keyboard.type(cfg.query, { delay: 30 });
  await until('results for the README', async () => logEvents('search').slice(before).find((e) => e.query === cfg.query && !e.filters), 10000);
  await page.mouse.move(1300, 850);
  await sleep(800);
  await page.screenshot({ path: join(cfg.shots, 'readme.png'), clip: { x: 0, y: 0, width: 1400, height: 620 } });
  await page.keyboard.press('Escape');
  }
} catch (err) {
  await recordFailure(out.errors, err, () => shot(page, 'failure'));
} finally {
  await finish(cfg.result, out, browser);
}
