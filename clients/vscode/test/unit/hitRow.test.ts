import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ariaLabel,
  correctionText,
  escapeIcons,
  highlight,
  highlightStyle,
  hitRow,
  messageRow,
  normaliseRanges,
  partialNote,
  spokenTime,
  unbold,
} from '../../src/core/hitRow';
import { shortenPath } from '../../src/core/render';
import { NOW, hit } from './fixtures';

/** Mathematical Alphanumeric Symbols and zero-width / invisible format characters. */
const UNREADABLE = /[\u{1D400}-\u{1D7FF}\u200B-\u200F\u2060-\u2064\uFEFF]/u;

describe('spokenTime', () => {
  it('uses whole words', () => {
    assert.equal(spokenTime('2026-05-01T11:59:50Z', NOW), 'just now');
    assert.equal(spokenTime('2026-05-01T11:59:00Z', NOW), '1 minute ago');
    assert.equal(spokenTime('2026-05-01T11:55:00Z', NOW), '5 minutes ago');
    assert.equal(spokenTime('2026-05-01T10:00:00Z', NOW), '2 hours ago');
    assert.equal(spokenTime('2026-04-30T12:00:00Z', NOW), '1 day ago');
    assert.equal(spokenTime('2026-05-03T12:00:00Z', NOW), 'in 2 days');
    assert.equal(spokenTime('2024-05-01T12:00:00Z', NOW), '2 years ago');
    assert.equal(spokenTime(null, NOW), '');
    assert.equal(spokenTime('yesterday', NOW), '');
  });
});

describe('highlight', () => {
  it('marks code point ranges in the opt-in styles only', () => {
    assert.equal(highlight('abc def', [[4, 7]], 'brackets'), 'abc ⟦def⟧');
    assert.equal(highlight('abc def', [[4, 7]], 'none'), 'abc def');
    assert.equal(highlight('abc def', [[4, 7]], 'native'), 'abc def');
    assert.equal(unbold(highlight('abc Def 42', [[4, 10]], 'bold')), 'abc Def 42');
    assert.match(highlight('abc def', [[0, 3]], 'bold'), UNREADABLE);
  });
  it('counts code points, not UTF-16 units', () => {
    assert.equal(highlight('😀 fix it', [[2, 5]], 'brackets'), '😀 ⟦fix⟧ it');
  });
  it('merges, clamps and ignores bad ranges', () => {
    assert.deepEqual(normaliseRanges([[5, 9], [0, 2], [1, 3], [8, 100], [4, 4], [7, 2]], 10), [[0, 3], [5, 10]]);
    assert.equal(highlight('abc', undefined, 'brackets'), 'abc');
  });
  it('defaults to native for unknown settings', () => {
    assert.equal(highlightStyle(undefined), 'native');
    assert.equal(highlightStyle('sparkles'), 'native');
    assert.equal(highlightStyle('bold'), 'bold');
  });
});

describe('hitRow', () => {
  it('says a partial hit is partial, with the words it lacks, right after its kind', () => {
    const r = hitRow(hit({ matched: ['npm', 'enoent'], missing: ['bug'] }), { now: NOW, style: 'native' });
    assert.equal(r.description, 'Tool result: bash (error), partial, missing bug, 2 hours ago, fix the build (/home/u/proj)');
    assert.equal(hitRow(hit({ matched: ['npm'], missing: [] }), { now: NOW, style: 'native' }).description, 'Tool result: bash (error), 2 hours ago, fix the build (/home/u/proj)');
    assert.equal(partialNote({ missing: ['bug', '"after sleep"'] }), 'partial, missing bug, "after sleep"');
    assert.equal(partialNote({}), '', 'an older server sends no missing: a full hit');
  });

  it('names a corrected word', () => {
    assert.equal(correctionText({ didYouMean: { query: 'websocket reconnect', corrections: [{ word: 'recconect', suggestion: 'reconnect' }] } }), 'Searched for "websocket reconnect": no event holds "recconect"');
    assert.equal(correctionText({ didYouMean: null }), '');
    assert.equal(correctionText({}), '');
  });

  it('reads kind, time, session, then the snippet', () => {
    const r = hitRow(hit(), { now: NOW, style: 'native' });
    assert.equal(r.label, '');
    assert.equal(r.icon, 'error');
    assert.equal(r.description, 'Tool result: bash (error), 2 hours ago, fix the build (/home/u/proj)');
    assert.equal(r.detail, "npm ERR! ENOENT: no such file or directory, open 'package.json'");
    assert.equal(
      ariaLabel(r),
      "Tool result: bash (error), 2 hours ago, fix the build (/home/u/proj), npm ERR! ENOENT: no such file or directory, open 'package.json'",
    );
  });
  it('has no unreadable characters unless bold is chosen', () => {
    for (const style of ['native', 'brackets', 'none'] as const) {
      const r = hitRow(hit({ snippet: 'Zebra 42 zz', matches: [[0, 11]] }), { now: NOW, style });
      assert.doesNotMatch(`${r.label}${r.description}${r.detail}${ariaLabel(r)}`, UNREADABLE, style);
    }
    assert.match(hitRow(hit(), { now: NOW, style: 'bold' }).detail, UNREADABLE);
  });
  it('falls back to the cwd and says which branch', () => {
    const r = hitRow(hit({ sessionName: null, branchState: 'alternate', selectionState: 'not-selected', isError: false }), {
      now: NOW,
      style: 'none',
      shorten: (p) => shortenPath(p, ['/home/u/proj'], '/home/u'),
    });
    assert.equal(r.description, 'Tool result: bash, 2 hours ago, proj, alternate branch, not selected');
    assert.equal(r.icon, 'output');
  });
  it('keeps snippets on one line and out of the icon syntax', () => {
    const r = hitRow(hit({ snippet: 'echo $(whoami)\n$(date +%s)', matches: [], sessionName: '$(x) s' }), { now: NOW, style: 'none' });
    assert.equal(r.detail, 'echo \\$(whoami) $(date +%s)');
    assert.ok(r.description.includes('\\$(x) s'));
    assert.equal(escapeIcons('$(bug~spin) and $(not an icon)'), '\\$(bug~spin) and $(not an icon)');
  });
  it('gives every row the same (empty) label so that VS Code cannot reorder them', () => {
    const rows = [hitRow(hit(), { now: NOW, style: 'native' }), messageRow('ellipsis', 'More results…')];
    assert.deepEqual(rows.map((r) => r.label), ['', '']);
    assert.equal(ariaLabel(rows[1]), 'More results…');
  });
});
