import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseReadUri, readUriString } from '../../src/core/readUri';

describe('read view URIs', () => {
  it('round-trips order, length and fragment', () => {
    const s = readUriString({ ref: { sessionId: 'S1', entryId: 'e1', fragmentId: 'tool.call:1' }, order: 'branch', length: 9000 });
    assert.equal(s, 'pi-event:S1/e1?order=branch&length=9000#tool.call:1');
    const u = new URL(s);
    assert.deepEqual(parseReadUri('pi-event', u.pathname, u.search.slice(1), u.hash.slice(1)), {
      ref: { sessionId: 'S1', entryId: 'e1', fragmentId: 'tool.call:1' },
      order: 'branch',
      length: 9000,
    });
  });
  it('keeps the plain form for defaults', () => {
    assert.equal(readUriString({ ref: { sessionId: 'S1', entryId: 'e1' }, order: 'append' }), 'pi-event:S1/e1');
    assert.deepEqual(parseReadUri('pi-event', '/S1/e1', '', ''), { ref: { sessionId: 'S1', entryId: 'e1' }, order: 'append' });
  });
  it('rejects other schemes and bad paths, clamps length', () => {
    assert.equal(parseReadUri('file', 'S1/e1', '', ''), undefined);
    assert.equal(parseReadUri('pi-event', 'S1', '', ''), undefined);
    assert.equal(parseReadUri('pi-event', 'S1/e1', 'length=999999', '')?.length, 100000);
  });
});
