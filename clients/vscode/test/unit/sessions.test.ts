import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ariaLabel } from '../../src/core/hitRow';
import { groupRow, kindCounts, matchCount, mergeGroups, sessionTitle, sessionTooltip, shortDate } from '../../src/core/sessions';
import { NOW, group, hit, sessionInfo } from './fixtures';

describe('sessionTitle', () => {
  it('is the name, else the first prompt, else the id, on one line', () => {
    assert.equal(sessionTitle(group()), 'fix the build');
    assert.equal(sessionTitle(group({ name: null })), 'the build fails on main, look at ci.yml');
    assert.equal(sessionTitle(group({ name: '  ', firstPrompt: 'a\nb\tc' })), 'a b c');
    assert.equal(sessionTitle(group({ name: null, firstPrompt: null })), `session ${group().sessionId}`);
  });

  it('cuts a long title at 120 code points with an ellipsis', () => {
    const title = sessionTitle(group({ name: '😀'.repeat(300) }));
    assert.equal(Array.from(title).length, 120);
    assert.ok(title.endsWith('…'));
  });
});

describe('groupRow', () => {
  it('reads: session, matches, updated time, cwd; then the top event and its snippet', () => {
    const row = groupRow(group(), { now: NOW, style: 'native', shorten: (p) => p.replace('/home/u/', '~/') });
    assert.equal(row.label, '');
    assert.equal(row.icon, 'comment-discussion');
    assert.equal(row.description, 'fix the build, 7 of 143 events match, updated 58 minutes ago, ~/proj');
    assert.equal(row.detail, "Tool result: bash (error): npm ERR! ENOENT: no such file or directory, open 'package.json'");
    assert.equal(
      ariaLabel(row),
      "fix the build, 7 of 143 events match, updated 58 minutes ago, ~/proj, Tool result: bash (error): npm ERR! ENOENT: no such file or directory, open 'package.json'",
    );
  });

  it('marks the top snippet in the chosen style and says one match in the singular', () => {
    const row = groupRow(group({ matches: 1, events: 1 }), { now: NOW, style: 'brackets' });
    assert.match(row.description, /1 of 1 event matches/);
    assert.match(row.detail, /npm ERR! ⟦ENOENT⟧/);
  });

  it('keeps recorded text plain: icons escaped, markup left as typed, one line', () => {
    const row = groupRow(
      group({ name: '$(zap) <b>bold</b> **not bold**\nline two', top: hit({ snippet: '<img src=x onerror=alert(1)> $(bug)', matches: [] }) }),
      { now: NOW, style: 'native' },
    );
    assert.ok(row.description.startsWith('\\$(zap) <b>bold</b> **not bold** line two, '), row.description);
    assert.ok(row.detail.endsWith('<img src=x onerror=alert(1)> \\$(bug)'), row.detail);
  });

  it('marks a forked session and falls back to the top event time', () => {
    const row = groupRow(group({ parentSession: '/p.jsonl', updated: null, cwd: null }), { now: NOW, style: 'none' });
    assert.equal(row.icon, 'repo-forked');
    assert.equal(row.description, 'fix the build, 7 of 143 events match, updated 2 hours ago');
  });
});

describe('mergeGroups', () => {
  it('appends a page, never repeating a session', () => {
    const a = group({ sessionId: 'a' });
    const b = group({ sessionId: 'b' });
    const c = group({ sessionId: 'c' });
    const b2 = group({ sessionId: 'b', matches: 99 });
    const merged = mergeGroups([a, b], [b2, c]);
    assert.deepEqual(merged.map((g) => g.sessionId), ['a', 'b', 'c']);
    assert.equal(merged[1].matches, 7);
  });
});

describe('counts and dates', () => {
  it('names the kinds in a fixed order, unknown ones last', () => {
    assert.equal(kindCounts(sessionInfo().kinds), '12 user messages, 30 assistant messages, 40 tool calls, 40 tool results, 2 bash commands');
    assert.equal(kindCounts({ 'tool.call': 1, 'x.y': 2, 'user.text': 0 }), '1 tool call, 2 x.y');
    assert.equal(kindCounts(undefined), '');
    assert.equal(matchCount(3, 1), '3 of 1 event match');
  });

  it('writes a local date', () => {
    assert.match(shortDate('2026-05-01T10:00:00.000Z'), /^2026-05-0[12] \d\d:\d\d$/);
    assert.equal(shortDate('soon'), '');
    assert.equal(shortDate(null), '');
  });

  it('gives a tooltip of plain lines', () => {
    assert.equal(sessionTooltip(sessionInfo({ kinds: {} })).split('\n')[3], '143 events');
    const tip = sessionTooltip({ ...group({ parentSession: '/home/u/parent.jsonl' }), kinds: { 'user.text': 1 } }, (p) => p.replace('/home/u', '~'));
    const lines = tip.split('\n');
    assert.equal(lines[0], 'fix the build');
    assert.equal(lines[1], 'First prompt: the build fails on main, look at ci.yml');
    assert.equal(lines[2], 'Working directory: ~/proj');
    assert.match(lines[3], /^2026-05-0\d \d\d:\d\d → 2026-05-0\d \d\d:\d\d$/);
    assert.equal(lines[4], '7 of 143 events match');
    assert.equal(lines[5], '1 user message');
    assert.equal(lines[6], 'Forked from ~/parent.jsonl');
    assert.equal(lines[7], `Session ${group().sessionId}`);
    assert.ok(lines[8].endsWith('.jsonl'));
  });
});
