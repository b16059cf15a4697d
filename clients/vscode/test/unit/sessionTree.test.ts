import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  EVENTS_PAGE,
  entryTitle,
  eventsParams,
  groupParams,
  groupTreeRow,
  hitTreeRow,
  listParams,
  messageTreeRow,
  moreRow,
  nodeTreeRow,
  sessionHitsParams,
  sessionRow,
  utf16Ranges,
  viewMessage,
  viewTitle,
} from '../../src/core/sessionTree';
import type { VisibleNode } from '../../src/core/protocol';
import { NOW, S, group, hit, sessionInfo } from './fixtures';

const opts = { now: NOW, shorten: (p: string) => p.replace('/home/u/', '~/') };

describe('utf16Ranges', () => {
  it('turns code point ranges into UTF-16 ranges', () => {
    assert.deepEqual(utf16Ranges('abc def', [[4, 7]]), [[4, 7]]);
    // '😀' is one code point and two UTF-16 units.
    assert.deepEqual(utf16Ranges('😀 abc', [[2, 5]]), [[3, 6]]);
    assert.deepEqual(utf16Ranges('😀😀 x', [[0, 1], [1, 2], [3, 4]]), [[0, 4], [5, 6]]);
  });

  it('drops empty, reversed and malformed ranges and clamps to the text', () => {
    assert.deepEqual(utf16Ranges('abc', [[2, 2], [3, 1], [1, 99]]), [[1, 3]]);
    assert.deepEqual(utf16Ranges('abc', undefined), []);
    assert.deepEqual(utf16Ranges('abc', [[0.5, 2] as [number, number]]), []);
  });
});

describe('sessionRow (the sessions list)', () => {
  it('shows the title, updated time and event count; opens the first event', () => {
    const row = sessionRow(sessionInfo(), opts);
    assert.equal(row.id, `list:${S}`);
    assert.equal(row.label, 'the build fails on main, look at ci.yml');
    assert.equal(row.description, '58 minutes ago · 143 events');
    assert.equal(row.aria, 'the build fails on main, look at ci.yml, updated 58 minutes ago, 143 events, ~/proj');
    assert.equal(row.ref, `pi-event:${S}/1a2b3c4d`);
    assert.equal(row.expandable, true);
    assert.equal(row.context, 'piEvents.session');
    assert.match(row.tooltip, /12 user messages, 30 assistant messages/);
  });

  it('has nothing to open or expand without a visible first event or any event', () => {
    const row = sessionRow(sessionInfo({ first: { masked: true }, events: 0 }), opts);
    assert.equal(row.ref, undefined);
    assert.equal(row.expandable, false);
  });
});

describe('groupTreeRow (a search by session)', () => {
  it('shows how many events match; opens the strongest', () => {
    const row = groupTreeRow(group(), opts);
    assert.equal(row.id, `search:${S}`);
    assert.equal(row.label, 'fix the build');
    assert.equal(row.description, '7 of 143 events match · 58 minutes ago');
    assert.equal(row.ref, group().top.ref);
    assert.ok(row.tooltip.endsWith("Strongest match: npm ERR! ENOENT: no such file or directory, open 'package.json'"));
  });

  it('keeps markup as typed (a tree label is plain text)', () => {
    const row = groupTreeRow(group({ name: '<b>x</b> **y** $(zap)' }), opts);
    assert.equal(row.label, '<b>x</b> **y** $(zap)');
  });
});

describe('event rows', () => {
  it('a hit: its snippet marked where it matched, kind and time beside it; a click opens it', () => {
    const row = hitTreeRow(hit({ snippet: '😀 ENOENT here', matches: [[2, 8]] }), `search:${S}`, opts);
    assert.equal(row.id, `search:${S}/5e6f7081`);
    assert.equal(row.label, '😀 ENOENT here');
    assert.deepEqual(row.highlights, [[3, 9]]);
    assert.equal(row.description, 'Tool result: bash (error) · 2 hours ago');
    assert.equal(row.aria, 'Tool result: bash (error), 2 hours ago, 😀 ENOENT here');
    assert.equal(row.context, 'piEvents.event');
    assert.equal(row.ref, `pi-event:${S}/5e6f7081`);
  });

  it('a hit off the selected branch says so; a long snippet is cut and not marked past the cut', () => {
    const long = `${'x'.repeat(300)} ENOENT`;
    const row = hitTreeRow(hit({ snippet: long, matches: [[301, 307]], branchState: 'alternate' }), 'p', opts);
    assert.equal(Array.from(row.label).length, 160);
    assert.deepEqual(row.highlights, []);
    assert.match(row.description, /alternate branch$/);
  });

  it('a node of the session in file order: its preview, else its kind', () => {
    const node: VisibleNode = { ref: `pi-event:${S}/e1`, sessionId: S, entryId: 'e1', kind: 'assistant.text', timestamp: '2026-05-01T11:00:00Z', preview: 'Looking\nat it' };
    const row = nodeTreeRow(node, `list:${S}`, opts);
    assert.equal(row.id, `list:${S}/e1`);
    assert.equal(row.label, 'Looking at it');
    assert.equal(row.description, 'Assistant message · 1 hour ago');
    assert.equal(row.aria, 'Assistant message, 1 hour ago, Looking at it');
    assert.equal(row.icon, 'hubot');
    const bare = nodeTreeRow({ ...node, preview: null }, 'p', opts);
    assert.equal(bare.label, 'Assistant message');
    assert.equal(bare.description, '1 hour ago');
    assert.equal(bare.aria, 'Assistant message, 1 hour ago');
  });

  it('an entry without a kind is named by its type in words', () => {
    const node: VisibleNode = { ref: `pi-event:${S}/m1`, sessionId: S, entryId: 'm1', entryType: 'model_change', kind: null, preview: 'model_change', timestamp: '2026-05-01T11:00:00Z' };
    const row = nodeTreeRow(node, 'p', opts);
    assert.equal(row.label, 'Model change');
    assert.equal(row.description, '1 hour ago');
    assert.equal(row.tooltip, `Model change, 1 hour ago\npi-event:${S}/m1`);
    assert.equal(entryTitle('thinking_level_change'), 'Thinking level change');
    assert.equal(entryTitle(undefined), 'Event');
  });

  it('more and message rows', () => {
    assert.equal(moreRow('root', 'sessions').label, 'More sessions…');
    assert.equal(moreRow('list:x', 'matches').label, 'More matching events…');
    assert.equal(moreRow('list:x', 'events').id, 'list:x/more');
    assert.equal(messageTreeRow('root', 'error', 'boom\nthere').label, 'boom there');
  });
});

describe('requests', () => {
  const search = { query: 'npm err', prefixLast: true, filters: { errors: true } };

  it('a search by session, and the same search narrowed to one session', () => {
    assert.deepEqual(groupParams(search, 50, null), { query: 'npm err', limit: 50, groupBy: 'session', prefixLast: true, filters: { errors: true } });
    assert.deepEqual(groupParams({ query: '' }, 20, 'c1'), { query: '', limit: 20, groupBy: 'session', cursor: 'c1' });
    assert.deepEqual(sessionHitsParams(search, S, 50, null), { query: 'npm err', limit: 50, prefixLast: true, filters: { errors: true, sessionId: S } });
    assert.deepEqual(sessionHitsParams({ query: 'x' }, S, 50, 'c2'), { query: 'x', limit: 50, filters: { sessionId: S }, cursor: 'c2' });
    assert.deepEqual(search.filters, { errors: true }); // not changed in place
  });

  it('the list, and a session read in file order without content', () => {
    assert.deepEqual(listParams(50, null), { limit: 50 });
    assert.deepEqual(listParams(50, 'c'), { limit: 50, cursor: 'c' });
    assert.deepEqual(eventsParams('pi-event:s/e', false), { ref: 'pi-event:s/e', before: 0, after: EVENTS_PAGE - 1, order: 'append', length: 1 });
    assert.equal(eventsParams('pi-event:s/e', true).after, EVENTS_PAGE);
    assert.ok(EVENTS_PAGE <= 50); // piEvents/read allows at most 50 neighbours
  });
});

describe('view title and message', () => {
  it('the list: a plain title; a search: its query in the title, filters beside it', () => {
    assert.deepEqual(viewTitle({ kind: 'list' }), { title: 'Pi Sessions', description: '' });
    assert.deepEqual(viewTitle({ kind: 'search', search: { query: ' npm\nerr ', summary: 'errors only' } }), {
      title: 'Pi Sessions matching “npm err”',
      description: 'errors only',
    });
    assert.equal(viewTitle({ kind: 'search', search: { query: '', filters: { errors: true } } }).title, 'Pi Sessions with matching events');
  });

  it('says when nothing is found, and how far indexing is', () => {
    assert.equal(viewMessage({ kind: 'list' }, 3, null), '');
    assert.equal(viewMessage({ kind: 'list' }, 0, null), 'No Pi sessions recorded in this workspace.');
    assert.equal(viewMessage({ kind: 'search', search: { query: 'x' } }, 0, 40), 'Indexing: 40% of the session files so far. No session has events matching “x”.');
    assert.equal(viewMessage({ kind: 'search', search: { query: 'x' } }, 2, 40), 'Indexing: 40% of the session files so far.');
  });
});
