// Drives code-server (with the .vsix installed) in headless Chromium through the rendered read
// view (piEvents.read.view = "rendered"): opens an event by reference, reads the page's DOM inside
// the webview's iframes (headings, landmarks, facts, fragments, links, the CSP), follows a
// neighbour's link, steps back with Alt+Up and forward with the Next button. Writes what it saw to
// a JSON file; tests/vscode/test_vscode_read_view_e2e.py asserts on it.
//
// Usage: node drive-read-view.mjs <config.json>
// config: { url, chromium, shots, screenshot, result, log, ref }
import { readFileSync, mkdirSync } from 'node:fs';
import { launch, finish, recordFailure, runCommand, screenshots, statusBarTexts, stepLog, until } from './workbench.mjs';

const cfg = JSON.parse(readFileSync(process.argv[2], 'utf8'));
mkdirSync(cfg.shots, { recursive: true });
const out = { steps: [], errors: [], pages: [] };
const logEvents = stepLog(cfg.log);
const shot = screenshots(cfg.shots, out.steps);

/** The page inside the webview: VS Code puts it in an iframe inside an iframe. */
const view = (page) => page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');

/** What a person (and a screen reader) gets from the page shown now. */
async function readPage(page) {
  const v = view(page);
  await v.locator('main h1').waitFor({ state: 'visible', timeout: 15000 });
  return v.locator('html').evaluate((html) => {
    const doc = html.ownerDocument;
    const text = (el) => (el?.textContent ?? '').replace(/\s+/g, ' ').trim();
    const style = getComputedStyle(doc.body);
    return {
      title: doc.title,
      lang: html.getAttribute('lang'),
      csp: doc.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? '',
      scripts: Array.from(doc.querySelectorAll('script'), (s) => ({
        nonce: !!s.nonce || s.hasAttribute('nonce'), src: s.getAttribute('src'), text: (s.textContent ?? '').slice(0, 400) })),
      inlineHandlers: Array.from(doc.querySelectorAll('*')).flatMap((el) => el.getAttributeNames().filter((a) => a.startsWith('on'))),
      headings: Array.from(doc.querySelectorAll('h1, h2, h3'), (h) => `${h.tagName.toLowerCase()} ${text(h)}`),
      landmarks: Array.from(doc.querySelectorAll('nav, main, header, section[aria-labelledby]'), (el) =>
        `${el.tagName.toLowerCase()}${el.getAttribute('aria-label') ? `:${el.getAttribute('aria-label')}` : ''}`),
      ref: text(doc.querySelector('header .ref code')),
      facts: Object.fromEntries(Array.from(doc.querySelectorAll('dl.facts dt'), (dt) => [text(dt), text(dt.nextElementSibling)])),
      fragments: Array.from(doc.querySelectorAll('section.fragment pre'), (pre) => ({
        text: pre.textContent, font: getComputedStyle(pre).fontFamily, focusable: pre.tabIndex === 0 })),
      links: Array.from(doc.querySelectorAll('a[data-ref]'), (a) => ({ ref: a.dataset.ref, order: a.dataset.order,
        list: a.closest('ul')?.getAttribute('aria-labelledby') ?? '' })),
      buttons: Array.from(doc.querySelectorAll('nav button'), (b) => ({ label: text(b), disabled: b.disabled,
        keys: b.getAttribute('aria-keyshortcuts') ?? '' })),
      tabOrder: Array.from(doc.querySelectorAll('button, a[href], pre[tabindex="0"]'), (el) => el.id || el.dataset.action || el.dataset.ref || el.tagName.toLowerCase()),
      colours: {
        background: style.backgroundColor,
        themeBackground: style.getPropertyValue('--vscode-editor-background').trim(),
        foreground: style.color,
        link: doc.querySelector('a') ? getComputedStyle(doc.querySelector('a')).color : '',
        themeLink: style.getPropertyValue('--vscode-textLink-foreground').trim(),
      },
    };
  });
}

/** The next rendered read of `ref` after `since` in the extension's step log. */
const readOf = (ref, since) => until(`the read view of ${ref}`, async () =>
  logEvents('read').slice(since).find((e) => e.view === 'rendered' && e.ref === ref), 20000);

const { browser, page } = await launch(cfg, { width: 1200, height: 800 });

try {
  await page.goto(cfg.url);
  await page.waitForSelector('.monaco-workbench', { timeout: 60000 });
  await until('the status bar counts', async () => (await statusBarTexts(page)).find((t) => /Pi Events: [\d.]+k? sessions/.test(t)), 60000);

  // 1. Open the event by its reference: the page shows.
  let since = logEvents('read').length;
  await runCommand(page, 'Pi Events: Open Event Reference');
  const input = page.locator('.quick-input-widget input');
  await input.fill(cfg.ref);
  await page.keyboard.press('Enter');
  await readOf(cfg.ref, since);
  out.first = await readPage(page);
  out.tab = await page.locator('.tabs-container .tab.active').first().getAttribute('aria-label');
  await page.screenshot({ path: cfg.screenshot });
  await shot(page, 'read-view');

  // 2. A neighbour's link opens that event's page.
  const after = out.first.links.find((l) => l.list === 'n-after');
  if (!after) throw new Error('no neighbour after the event');
  since = logEvents('read').length;
  await view(page).locator(`a[data-ref="${after.ref}"]`).first().click();
  out.linkRead = await readOf(after.ref, since);
  out.second = await readPage(page);

  // 3. Alt+Up in the page steps back to the previous event (the first one).
  since = logEvents('read').length;
  await view(page).locator('main h1').click();
  await page.keyboard.press('Alt+ArrowUp');
  out.keyRead = await readOf(cfg.ref, since);
  out.third = await readPage(page);

  // 4. The Next button steps forward again.
  since = logEvents('read').length;
  await view(page).locator('button#next').click();
  out.buttonRead = await readOf(after.ref, since);
  await shot(page, 'read-view-next');

  // 5. The page's Trace button shows the trace page in the same panel; its Parent opens that event.
  const traces = logEvents('trace').length;
  await view(page).locator('nav button[data-action="trace"]').click();
  out.traced = await until('the trace page', async () => logEvents('trace').slice(traces).find((e) => e.view === 'rendered'), 20000);
  await until('the trace page shown', async () => (await view(page).locator('main h1').innerText()) === 'Trace', 15000);
  out.trace = await view(page).locator('html').evaluate((html) => {
    const doc = html.ownerDocument;
    return {
      headings: Array.from(doc.querySelectorAll('h1, h2'), (h) => `${h.tagName.toLowerCase()} ${(h.textContent ?? '').trim()}`),
      parent: doc.querySelector('section[aria-labelledby] h2 + ul a[data-ref]') && Array.from(doc.querySelectorAll('section'))
        .find((sec) => sec.querySelector('h2')?.textContent === 'Parent')?.querySelector('a[data-ref]')?.getAttribute('data-ref'),
    };
  });
  await shot(page, 'trace-view');
  since = logEvents('read').length;
  await view(page).locator(`section a[data-ref="${out.trace.parent}"]`).first().click();
  out.parentRead = await readOf(out.trace.parent, since);
} catch (err) {
  await recordFailure(out.errors, err, () => shot(page, 'read-view-failure'));
}
await finish(cfg.result, out, browser);
