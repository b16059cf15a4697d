import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { findRefs, formatRef, parseRef, refAt } from '../../src/core/refs';

interface Vector {
  name: string;
  text: string;
  refs: { line: number; start: number; end: number; sessionId: string; entryId: string; fragmentId?: string }[];
}

interface Whole {
  text: string;
  ref: { sessionId: string; entryId: string; fragmentId?: string } | null;
}

/** The tables the server and the Neovim client are tested against too (columns in code points). */
const TABLES = JSON.parse(readFileSync(resolve(__dirname, '../../../../tests/data/ref-vectors.json'), 'utf8')) as {
  vectors: Vector[];
  whole: Whole[];
};
const VECTORS = TABLES.vectors;

/** A code point column of `line` as VS Code counts it (UTF-16 units). */
function utf16(line: string, column: number): number {
  return Array.from(line).slice(0, column).join('').length;
}

const S = '019f0000-aaaa-7bbb-8ccc-000000000001';

describe('parseRef', () => {
  it('parses session/entry and an optional fragment', () => {
    assert.deepEqual(parseRef(`pi-event:${S}/5e6f7081`), { sessionId: S, entryId: '5e6f7081' });
    assert.deepEqual(parseRef(`pi-event:${S}/5e6f7081#tool.result:0`), {
      sessionId: S,
      entryId: '5e6f7081',
      fragmentId: 'tool.result:0',
    });
    assert.deepEqual(parseRef('pi-event:custom.id_1/v1~3'), { sessionId: 'custom.id_1', entryId: 'v1~3' });
  });

  it('rejects malformed references', () => {
    for (const bad of ['', 'pi-event:', `pi-event:${S}`, `pi-event:${S}/`, `pi-event:-x/abc`, `pi-event:${S}/~1`, `pi:${S}/abc`, `pi-event:${S}/abc#Tool:1`]) {
      assert.equal(parseRef(bad), undefined, bad);
    }
  });

  it('formats with and without the fragment', () => {
    const ref = { sessionId: S, entryId: 'abc', fragmentId: 'tool.call:1' };
    assert.equal(formatRef(ref), `pi-event:${S}/abc`);
    assert.equal(formatRef(ref, true), `pi-event:${S}/abc#tool.call:1`);
  });
});

describe('parseRef on the shared table', () => {
  for (const w of TABLES.whole) {
    it(JSON.stringify(w.text), () => assert.deepEqual(parseRef(w.text) ?? null, w.ref));
  }
});

describe('findRefs on the shared vectors', () => {
  it('has the table', () => assert.ok(VECTORS.length >= 40));
  for (const v of VECTORS) {
    it(v.name, () => {
      const lines = v.text.split(/\r\n|\n/);
      const found = lines.flatMap((line, n) =>
        findRefs(line).map((r) => ({
          line: n,
          start: r.start,
          end: r.end,
          sessionId: r.sessionId,
          entryId: r.entryId,
          ...(r.fragmentId ? { fragmentId: r.fragmentId } : {}),
        })),
      );
      const want = v.refs.map((r) => ({ ...r, start: utf16(lines[r.line], r.start), end: utf16(lines[r.line], r.end) }));
      assert.deepEqual(found, want);
    });
  }
});

describe('findRefs', () => {
  it('finds every reference with its offsets', () => {
    const text = `See pi-event:${S}/5e6f7081 and (pi-event:abc/def#tool.call:1).`;
    const refs = findRefs(text);
    assert.equal(refs.length, 2);
    assert.equal(text.slice(refs[0].start, refs[0].end), `pi-event:${S}/5e6f7081`);
    assert.equal(refs[1].fragmentId, 'tool.call:1');
    assert.equal(text.slice(refs[1].start, refs[1].end), 'pi-event:abc/def#tool.call:1');
  });

  it('drops a trailing full stop, keeps inner dots', () => {
    const [r] = findRefs('read pi-event:sess.1/a.b.');
    assert.equal(r.entryId, 'a.b');
    assert.equal(r.text, 'pi-event:sess.1/a.b');
  });

  it('ignores references glued to a word', () => {
    assert.equal(findRefs('xpi-event:a/b').length, 0);
    assert.equal(findRefs('[link](pi-event:a/b)').length, 1);
  });
});

describe('refAt', () => {
  const line = `note: pi-event:${S}/5e6f7081 done`;
  it('finds the reference under the cursor, ends included', () => {
    const start = line.indexOf('pi-event');
    assert.equal(refAt(line, start)?.entryId, '5e6f7081');
    assert.equal(refAt(line, start + 20)?.entryId, '5e6f7081');
    assert.equal(refAt(line, line.indexOf(' done'))?.entryId, '5e6f7081');
    assert.equal(refAt(line, 2), undefined);
  });
});
