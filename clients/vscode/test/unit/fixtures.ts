/** What the unit tests share: one session id, a fixed "now", and a hit to vary. */
import type { Hit } from '../../src/core/protocol';

export const S = '019f0000-aaaa-7bbb-8ccc-000000000001';
export const NOW = Date.parse('2026-05-01T12:00:00Z');

/** A failed bash result with every field a row shows; `extra` overrides (the ref follows entryId). */
export function hit(extra: Partial<Hit> = {}): Hit {
  const entryId = extra.entryId ?? '5e6f7081';
  return {
    ref: `pi-event:${S}/${entryId}`,
    sessionId: S,
    entryId,
    fragmentId: 'tool.result:0',
    kind: 'tool.result',
    toolName: 'bash',
    isError: true,
    timestamp: '2026-05-01T10:00:09.020Z',
    snippet: "npm ERR! ENOENT: no such file or directory, open 'package.json'",
    matches: [[9, 15]],
    cwd: '/home/u/proj',
    sessionName: 'fix the build',
    branchState: 'selected',
    selectionState: 'direct',
    source: { path: '/s/x.jsonl', uri: 'file:///s/x.jsonl', line: 6 },
    ...extra,
  };
}
