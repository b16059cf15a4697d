import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { cleaned, stripControls } from '../../src/core/untrusted';

interface Case {
  name: string;
  in: string;
  out: string;
}

/** The control-byte cases the server, the Neovim and the Pi clients run too. */
const CASES = (JSON.parse(readFileSync(resolve(__dirname, '../../../../tests/data/control-vectors.json'), 'utf8')) as {
  cases: Case[];
}).cases;

describe('the shared control-byte rule', () => {
  it('has the shared cases', () => assert.ok(CASES.length >= 30));
  for (const c of CASES) {
    it(c.name, () => assert.equal(stripControls(c.in), c.out));
  }
  it('cleans every string of an answer, keys included', () => {
    assert.deepEqual(cleaned({ 'a\x1b[2J': ['x\x07', { toolName: 'ba\x9dsh', n: 3 }], ok: null }), {
      a: ['x', { toolName: 'bash', n: 3 }],
      ok: null,
    });
  });
});
