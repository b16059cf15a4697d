/**
 * Test side channel: when PI_EVENTS_E2E_LOG names a file, the extension appends one JSON line per
 * observable step (search results in the server's order, opened views). Off otherwise.
 */
import { appendFileSync } from 'node:fs';

const file = process.env.PI_EVENTS_E2E_LOG;

export function e2eLog(event: string, data: Record<string, unknown>): void {
  if (!file) return;
  try {
    appendFileSync(file, `${JSON.stringify({ event, time: Date.now(), ...data })}\n`);
  } catch {
    // a test aid must never break the extension
  }
}
