import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StatusResult, TraceResult } from '../../src/core/protocol';
import {
  compactNumber,
  escapeMarkdown,
  kindIcon,
  kindTag,
  readMarkdown,
  relativeTime,
  hasMore,
  shortenPath,
  statusBarText,
  stepTarget,
  traceEntries,
} from '../../src/core/render';
import { NOW, S, READ } from './fixtures';

describe('relativeTime', () => {
  it('speaks in the largest unit, short or spoken', () => {
    const cases: [time: string, short: string, spoken: string][] = [
      ['2026-05-01T11:59:50Z', 'just now', 'just now'],
      ['2026-05-01T11:59:00Z', '1 min ago', '1 minute ago'],
      ['2026-05-01T11:55:00Z', '5 min ago', '5 minutes ago'],
      ['2026-05-01T09:00:00Z', '3 h ago', '3 hours ago'],
      ['2026-04-29T12:00:00Z', '2 days ago', '2 days ago'],
      ['2026-04-30T12:00:00Z', '1 day ago', '1 day ago'],
      ['2026-02-01T12:00:00Z', '3 months ago', '3 months ago'],
      ['2024-05-01T12:00:00Z', '2 years ago', '2 years ago'],
      ['2026-05-05T12:00:00Z', 'in 4 days', 'in 4 days'],
    ];
    for (const [time, short, spoken] of cases) {
      assert.equal(relativeTime(time, NOW), short, time);
      assert.equal(relativeTime(time, NOW, true), spoken, time);
    }
  });
  it('is empty for missing or bad timestamps', () => {
    assert.equal(relativeTime(null, NOW), '');
    assert.equal(relativeTime('yesterday', NOW), '');
  });
});

describe('kinds', () => {
  it('maps kinds to icons and tags', () => {
    assert.equal(kindIcon('user.text'), 'account');
    assert.equal(kindIcon('tool.result', true), 'error');
    assert.equal(kindIcon('tool.result', false), 'output');
    assert.equal(kindIcon('weird'), 'circle-small');
    assert.equal(kindTag('tool.result', 'bash', true), 'result! bash');
    assert.equal(kindTag('tool.call', 'read'), 'call read');
    assert.equal(kindTag('summary.branch'), 'branch summary');
    assert.equal(kindTag('context.edit'), 'context edit');
    assert.equal(kindTag('system.prompt'), 'system');
    assert.equal(kindTag('python.output', 'python', true), 'python-out!');
    assert.equal(kindIcon('python.code', true), 'error');
    assert.equal(kindTag('file.mention'), 'mention');
  });
});

describe('readMarkdown', () => {
  const md = readMarkdown(READ, { now: NOW });
  it('has the metadata', () => {
    assert.match(md, /^# Tool result: bash \(error\)$/m);
    assert.match(md, /\*\*Session:\*\* fix the build \(`019f/);
    assert.match(md, /\*\*Entry:\*\* `5e6f7081` · `message` · `toolResult` · `bash` · parent `4d5e6f70`/);
    assert.match(md, /branch selected · context conversation · selection direct/);
    assert.match(md, /`\/s\/x\.jsonl:6`/);
  });
  it('names the Pi 1.x context edit that decides the entry, and only then', () => {
    assert.doesNotMatch(md, /Context edit/);
    const edited = { ...READ, event: { ...READ.event, selectionState: 'edited-out', contextEdit: { ref: 'pi-event:S/e9', replacement: 'removed' } } };
    const out = readMarkdown(edited, { now: NOW });
    assert.match(out, /selection edited-out/);
    assert.match(out, /\*\*Context edit:\*\* removed from the model context by pi-event:S\/e9 \(the content shown is the original\)/);
  });
  it('fences content that contains backticks and says what is outside the window', () => {
    assert.match(md, /### tool\.result:0 \(characters 0–17 of 5,242,880\)/);
    assert.match(md, /````text\nline 1\n```\nline 3\n````/);
  });
  it('says when a fragment was cut', () => {
    assert.match(md, /cut here: \*\*Pi Events: Show More of This Event\*\*/);
    assert.ok(hasMore(READ));
    assert.ok(!hasMore({ ...READ, fragments: [{ ...READ.fragments[0], totalLength: 17, truncated: false }] }));
  });
  it('lists what was omitted', () => {
    assert.match(md, /- `message\.content\[1\]`: image, image\/png, 79\.3 KB/);
    assert.match(md, /- `message\.content\[0\]\.thinking`: thinking, 1\.2 KB/);
  });
  it('lists neighbours as references, masks hidden ones, explains forks', () => {
    assert.match(md, /## Neighbours \(branch order\)/);
    assert.match(md, new RegExp(`- \`pi-event:${S}/4d5e6f70\` · call · 2 h ago — npm \\\\\\*test\\\\\\*`));
    assert.match(md, /stopped at a fork/);
    assert.match(md, /\*\*Alternatives \(unresolved fork\):\*\*\n\n- \*\(an event you cannot see\)\*/);
  });
  it('steps to neighbours', () => {
    assert.equal(stepTarget(READ, 'previous'), `pi-event:${S}/4d5e6f70`);
    assert.equal(stepTarget(READ, 'next'), undefined);
  });
  it('escapes markdown in free text', () => {
    assert.equal(escapeMarkdown('a*b_[c]\nd'), 'a\\*b\\_\\[c\\] d');
  });
});

describe('traceEntries', () => {
  const node = (id: string, preview = id) => ({ ref: `pi-event:${S}/${id}`, sessionId: S, entryId: id, kind: 'user.text', preview });
  const t: TraceResult = {
    event: node('e'),
    parent: node('p'),
    children: [node('c1'), node('c2')],
    siblings: [{ masked: true }],
    towardLeaf: 'child',
    towardLeafRef: `pi-event:${S}/c2`,
    relations: [
      { type: 'parent', direction: 'out', label: 'recorded', node: node('p') },
      { type: 'tool-result-for', direction: 'in', label: 'recorded', node: node('r') },
      { type: 'file-read', direction: 'out', label: 'derived', path: '/p/src/ws.ts' },
    ],
    files: [{ op: 'read', path: '/p/src/ws.ts', label: 'derived' }],
    lineage: [{ relation: 'session-parent', sessionId: 'S0', path: '/s/0.jsonl', forkAnchor: node('f') }, { relation: 'session-parent', masked: true }],
    labels: ['start'],
  };
  const entries = traceEntries(t, NOW);
  it('groups into sections in order, skipping tree and file relations shown elsewhere', () => {
    assert.deepEqual(
      entries.map((e) => `${e.section}:${e.ref?.split('/').pop() ?? e.path ?? e.label}`),
      [
        'Event:e',
        'Parent:p',
        'Children:c1',
        'Children:c2',
        'Siblings:(an event you cannot see)',
        'Relations:r',
        'Files:/p/src/ws.ts',
        'Lineage:/s/0.jsonl',
        'Lineage:f',
        'Lineage:(a session you cannot see)',
      ],
    );
  });
  it('describes relations and the way to the leaf', () => {
    assert.match(entries[0].description, /labels: start/);
    assert.match(entries[3].description, /toward leaf/);
    assert.match(entries[5].description, /← tool-result-for \(recorded\)/);
  });
});

describe('status bar', () => {
  const status: StatusResult = {
    index: { path: '/c/i.sqlite3', bytes: 1048576, schemaVersion: 1, generation: 42, indexing: false },
    sessions: 12,
    events: 3400,
    fragments: 5100,
    stale: [{ path: '/x', error: 'header unreadable' }],
    unavailable: [],
    duplicates: [],
    skipped: [],
    sessionDirs: ['/h/.pi/agent/sessions'],
    roots: ['/h/proj'],
  };
  it('shows counts, progress and trouble', () => {
    assert.equal(statusBarText({ kind: 'ready', status }).text, '$(history) Pi Events: 12 sessions · 3.4k events $(warning) 1');
    assert.match(statusBarText({ kind: 'ready', status }).tooltip, /generation 42/);
    assert.equal(statusBarText({ kind: 'indexing', message: '12/40 files' }).text, '$(sync~spin) Pi Events: indexing 12/40 files');
    assert.equal(statusBarText({ kind: 'indexing', percentage: 30 }).text, '$(sync~spin) Pi Events: indexing 30%');
    assert.equal(statusBarText({ kind: 'installing' }).text, '$(loading~spin) Pi Events: installing the server');
    assert.match(statusBarText({ kind: 'stopped', reason: 'server not installed' }).tooltip, /not installed/);
  });
  it('names the agents that wrote the sessions when Oh My Pi wrote some', () => {
    assert.doesNotMatch(statusBarText({ kind: 'ready', status: { ...status, sessionsBySource: { pi: 12 } } }).tooltip, /sessions:/);
    const both = statusBarText({ kind: 'ready', status: { ...status, sessionsBySource: { omp: 2, pi: 10 } } }).tooltip;
    assert.match(both, /^sessions: Oh My Pi 2, Pi 10$/m);
  });
  it('names each session directory, its layout and why it is read', () => {
    const dirs: StatusResult = {
      ...status,
      directories: [
        { path: '/h/.pi/agent/sessions', layout: 'per-project', origin: 'default', live: true, exists: true, sessions: 10 },
        { path: '/h/pi-sessions', layout: 'flat', origin: 'sessionDir in /h/.pi/agent/settings.json', live: true, exists: false, sessions: 2 },
      ],
    };
    const { tooltip } = statusBarText({ kind: 'ready', status: dirs });
    assert.match(tooltip, /session dir: \/h\/\.pi\/agent\/sessions \(per-project, default\): 10 sessions/);
    assert.match(tooltip, /session dir: \/h\/pi-sessions \(flat, sessionDir in \/h\/\.pi\/agent\/settings\.json, does not exist yet\): 2 sessions/);
    assert.match(statusBarText({ kind: 'ready', status }).tooltip, /session dirs: \/h\/\.pi\/agent\/sessions/); // an older server
  });
  it('abbreviates numbers', () => {
    assert.deepEqual([5, 999, 1000, 1500, 12_345, 2_500_000].map(compactNumber), ['5', '999', '1k', '1.5k', '12k', '2.5M']);
  });
});

describe('shortenPath', () => {
  it('names workspace folders, abbreviates home, leaves the rest', () => {
    const folders = ['/work/proj', '/srv/other/'];
    assert.equal(shortenPath('/work/proj', folders, '/home/me'), 'proj');
    assert.equal(shortenPath('/work/proj/sub/dir/', folders, '/home/me'), 'proj/sub/dir');
    assert.equal(shortenPath('/srv/other/x', folders, '/home/me'), 'other/x');
    assert.equal(shortenPath('/work/project2', folders, '/home/me'), '/work/project2');
    assert.equal(shortenPath('/home/me/code', folders, '/home/me'), '~/code');
    assert.equal(shortenPath('/home/meow', folders, '/home/me'), '/home/meow');
    assert.equal(shortenPath('/', folders, '/'), '/');
  });
});
