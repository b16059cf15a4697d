/**
 * The steps the extension takes that a user would see (a search answered, an event read, a
 * reference copied ...), announced for whoever follows them. The product itself never follows:
 * the end-to-end test does, through the one sink below, attached at activation when
 * PI_EVENTS_E2E_LOG names a file. This module is the extension's only test seam.
 */
import { appendFileSync } from 'node:fs';

export type Step = 'search' | 'read' | 'readError' | 'openRead' | 'openSource' | 'copy' | 'trace' | 'reindex'
  | 'codeLens' | 'fileHistory' | 'lineOrigin' | 'install' | 'installFailed'
  | 'serverStarted' | 'pruned' | 'sessions' | 'sessionEvents';

type Follower = (step: Step, data: Record<string, unknown>) => void;

let follower: Follower | undefined;

/** Announce a step: free when nobody follows. */
export function announceStep(step: Step, data: Record<string, unknown>): void {
  follower?.(step, data);
}

/** The end-to-end test's sink: one JSON line per step, appended to `file`. */
export function writeStepsTo(file: string): { dispose(): void } {
  follower = (step, data) => {
    try {
      appendFileSync(file, `${JSON.stringify({ event: step, time: Date.now(), ...data })}\n`);
    } catch {
      // a test aid must never break the extension
    }
  };
  return { dispose: () => (follower = undefined) };
}
