import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type FileHit,
  evidenceFact,
  historyTitle,
  lensTitle,
  noOriginMessage,
  originMessage,
  relationSection,
} from '../../src/core/fileHistory';
import { S, hit } from './fixtures';

function fileHit(extra: Partial<FileHit> = {}): FileHit {
  return { ...hit({ entryId: '40207ee0', kind: 'tool.call' }), relation: 'file-changed', label: 'derived', ...extra };
}

describe('lensTitle', () => {
  it('is shown only for files Pi changed', () => {
    assert.equal(lensTitle(undefined), undefined);
    assert.equal(lensTitle({ changed: 0, read: 7 }), undefined);
    assert.equal(lensTitle({ changed: 3, read: 7 }), 'Pi: changed in 3 events · read in 7');
    assert.equal(lensTitle({ changed: 1, read: 0 }), 'Pi: changed in 1 event');
  });
});

describe('historyTitle', () => {
  it('names the file and the counts it has', () => {
    assert.equal(historyTitle('ws.ts', { changed: 0, read: 0 }), 'Pi Events: History of ws.ts');
    assert.equal(historyTitle('ws.ts', { changed: 2, read: 1 }), 'Pi Events: History of ws.ts — changed in 2 · read in 1');
    assert.equal(historyTitle('ws.ts', { changed: 0, read: 4 }), 'Pi Events: History of ws.ts — read in 4');
  });
});

describe('relations', () => {
  it('groups and describes the evidence', () => {
    assert.equal(relationSection('file-changed'), 'Changed');
    assert.equal(relationSection('file-read'), 'Read');
    assert.equal(evidenceFact(fileHit()), 'changed (tool call)');
    assert.equal(evidenceFact(fileHit({ relation: 'file-read', label: 'recorded' })), 'read (recorded in a summary)');
  });
});

describe('line origin messages', () => {
  it('says plainly when nothing is known', () => {
    assert.match(noOriginMessage({ hit: null, candidates: [], reason: 'trivial' }, 0), /line 1 is too short/);
    assert.equal(noOriginMessage({ hit: null, candidates: [], reason: 'unknown' }, 6), 'Pi Events: no Pi event is known to have written line 7.');
  });
  it('names the event and the older writers', () => {
    assert.equal(originMessage({ hit: fileHit(), candidates: [] }, 2), `Pi Events: line 3 was written by pi-event:${S}/40207ee0.`);
    assert.match(originMessage({ hit: fileHit(), candidates: [fileHit(), fileHit()] }, 2), /\(2 older events wrote it too\)\.$/);
  });
});
