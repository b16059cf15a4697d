// What both end-to-end drivers (drive.mjs, drive-file-history.mjs) do with VS Code's workbench in
// the browser: wait for a condition, read the extension's step log, take screenshots, run a
// palette command, read quick pick rows, the active tab and the status bar.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

/** Headless Debian chromium (cfg.chromium) and one page of the given size. */
export async function launch(cfg, viewport) {
  const browser = await chromium.launch({
    executablePath: cfg.chromium,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  return { browser, page: await browser.newPage({ viewport }) };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `fn()`'s first truthy value, polled every `every` ms; throws naming `what` after `timeout`. */
export async function until(what, fn, timeout = 30000, every = 200) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(every);
  }
  throw new Error(`timed out waiting for ${what} (last: ${String(last)})`);
}

/** A reader of the steps the extension wrote to `file` (src/steps.ts), optionally of one kind. */
export function stepLog(file) {
  return (kind) => {
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((e) => !kind || e.event === kind);
  };
}

/** A screenshot taker: `<dir>/<name>.png`, each recorded in `steps`. */
export function screenshots(dir, steps) {
  return async (page, name) => {
    const path = join(dir, `${name}.png`);
    await page.screenshot({ path });
    steps.push({ screenshot: path });
  };
}

export async function runCommand(page, title) {
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 1; ; attempt++) {
    if (await input.isVisible()) {
      await page.keyboard.press('Escape');
      await input.waitFor({ state: 'hidden', timeout: 3000 }).catch(() => undefined);
    }
    await page.keyboard.press('F1');
    try {
      await input.waitFor({ state: 'visible', timeout: 3000 });
      break;
    } catch (err) {
      if (attempt >= 4) throw err;
    }
  }
  await input.fill(`>${title}`);
  await until(`command "${title}" in the palette`, async () => {
    const labels = await page.locator('.quick-input-widget .monaco-list-row .label-name').allInnerTexts();
    return labels.some((l) => l.replace(/\s+/g, ' ').includes(title));
  }, 10000);
  await page.keyboard.press('Enter');
}

export async function quickPickRows(page) {
  return page.$$eval('.quick-input-widget .monaco-list-row', (rows) =>
    rows
      .map((r) => ({
        index: Number(r.getAttribute('data-index')),
        label: r.querySelector('.label-name')?.textContent ?? '',
        description: r.querySelector('.label-description')?.textContent ?? '',
        text: r.textContent ?? '',
        aria: r.getAttribute('aria-label') ?? '',
        separator: r.querySelector('.quick-input-list-separator')?.textContent ?? '',
        highlights: Array.from(r.querySelectorAll('.highlight'), (h) => h.textContent ?? ''),
      }))
      .sort((a, b) => a.index - b.index),
  );
}

export async function activeTab(page) {
  const tab = page.locator('.tabs-container .tab.active');
  return (await tab.count()) ? ((await tab.first().getAttribute('aria-label')) ?? '') : '';
}

export const statusBarTexts = async (page) => page.locator('.statusbar-item').allInnerTexts();

const TOAST = '.notifications-toasts .notification-list-item';

/** The first notification message that includes `text`, once one shows (throws after `timeout`). */
export async function notification(page, what, text, timeout) {
  return until(what, async () => {
    const messages = await page.locator(`${TOAST}-message`).allInnerTexts();
    return messages.find((m) => m.includes(text));
  }, timeout);
}

/** The labels of the buttons of the notifications shown. */
export const notificationButtons = async (page) => page.locator(`${TOAST} .monaco-button`).allInnerTexts();

export async function clickNotificationButton(page, label) {
  await page.locator(`${TOAST} .monaco-button`, { hasText: label }).first().click();
}

/** A failed drive: the error into `errors`, and a screenshot when the page still takes one. */
export async function recordFailure(errors, err, screenshot) {
  errors.push(String(err?.stack ?? err));
  try {
    await screenshot();
  } catch {
    // the page is gone: the error says enough
  }
}

/** The end of a drive: what it saw written to `resultFile` as JSON, the browser closed. */
export async function finish(resultFile, out, browser) {
  writeFileSync(resultFile, JSON.stringify(out, null, 2));
  await browser.close();
}
