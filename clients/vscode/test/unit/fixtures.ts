/** What the unit tests share: one session id, a fixed "now", a hit to vary and a read answer. */
import type { Hit, ReadResult } from '../../src/core/protocol';
import type { SessionGroup, SessionInfo } from '../../src/core/sessions';

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

/** A failed bash result as piEvents/read answers it, with what was omitted and a masked alternative. */
export const READ: ReadResult = {
  event: {
    ref: `pi-event:${S}/5e6f7081`,
    sessionId: S,
    entryId: '5e6f7081',
    parentId: '4d5e6f70',
    entryType: 'message',
    role: 'toolResult',
    toolName: 'bash',
    kinds: ['tool.result'],
    timestamp: '2026-05-01T10:00:09.020Z',
    isError: true,
    cwd: '/home/u/proj',
    sessionName: 'fix the build',
    branchState: 'selected',
    contextRole: 'conversation',
    selectionState: 'direct',
  },
  source: { path: '/s/x.jsonl', uri: 'file:///s/x.jsonl', line: 6, byteOffset: 2210 },
  fragments: [
    { fragmentId: 'tool.result:0', kind: 'tool.result', text: 'line 1\n```\nline 3', offset: 0, length: 4000, totalLength: 5242880, truncated: true },
  ],
  omitted: [
    { field: 'message.content[1]', reason: 'image', mimeType: 'image/png', bytes: 81234 },
    { field: 'message.content[0].thinking', reason: 'thinking', bytes: 1200 },
  ],
  neighbours: {
    order: 'branch',
    before: [{ ref: `pi-event:${S}/4d5e6f70`, sessionId: S, entryId: '4d5e6f70', kind: 'tool.call', preview: 'npm *test*', timestamp: '2026-05-01T10:00:08Z' }],
    after: [],
    alternatives: [{ masked: true }],
    stoppedAtFork: true,
  },
};

/** A session of a search by session (spec-32's Group), its top being `hit()`; `extra` overrides. */
export function group(extra: Partial<SessionGroup> = {}): SessionGroup {
  return {
    sessionId: S,
    path: `/home/u/.pi/agent/sessions/--home-u-proj--/2026-05-01T10-00-00-000Z_${S}.jsonl`,
    uri: `file:///home/u/.pi/agent/sessions/--home-u-proj--/2026-05-01T10-00-00-000Z_${S}.jsonl`,
    cwd: '/home/u/proj',
    name: 'fix the build',
    firstPrompt: 'the build fails on main, look at ci.yml',
    started: '2026-05-01T10:00:00.000Z',
    updated: '2026-05-01T11:02:13.020Z',
    events: 143,
    matches: 7,
    top: hit(),
    parentSession: null,
    ...extra,
  };
}

/** A session of the sessions list (spec-32's SessionInfo); `extra` overrides. */
export function sessionInfo(extra: Partial<SessionInfo> = {}): SessionInfo {
  return {
    sessionId: S,
    path: `/home/u/.pi/agent/sessions/--home-u-proj--/2026-05-01T10-00-00-000Z_${S}.jsonl`,
    uri: `file:///home/u/.pi/agent/sessions/--home-u-proj--/2026-05-01T10-00-00-000Z_${S}.jsonl`,
    cwd: '/home/u/proj',
    name: null,
    firstPrompt: 'the build fails on main, look at ci.yml',
    started: '2026-05-01T10:00:00.000Z',
    updated: '2026-05-01T11:02:13.020Z',
    events: 143,
    kinds: { 'user.text': 12, 'assistant.text': 30, 'tool.call': 40, 'tool.result': 40, 'bash.command': 2 },
    parentSession: null,
    first: {
      ref: `pi-event:${S}/1a2b3c4d`, sessionId: S, entryId: '1a2b3c4d', entryType: 'message', role: 'user',
      kind: 'user.text', timestamp: '2026-05-01T10:00:01.000Z', preview: 'the build fails on main, look at ci.yml',
      branchState: 'selected', source: { path: '/s/x.jsonl', uri: 'file:///s/x.jsonl', line: 2, byteOffset: 120 },
    },
    ...extra,
  };
}
