import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReadResult, TraceResult, VisibleNode } from '../../src/core/protocol';
import { esc, isReadMessage, readHtml, traceHtml } from '../../src/core/readHtml';
import { NOW, READ, S } from './fixtures';

const HOSTILE = '</code></pre><script>alert(1)</script><img src=x onerror="alert(2)">';

/** The shared read answer with recorded text that tries to break out of the page. */
const HOSTILE_READ: ReadResult = {
  ...READ,
  event: { ...READ.event, sessionName: `name ${HOSTILE}` },
  fragments: [{ ...READ.fragments[0], text: `out ${HOSTILE}`, totalLength: 9000 }],
  omitted: [],
  neighbours: { order: 'append', before: [{ ...(READ.neighbours.before[0] as VisibleNode), preview: `npm ${HOSTILE}` }], after: [] },
};

describe('readHtml', () => {
  const html = readHtml(HOSTILE_READ, { now: NOW, nonce: 'N0NCE', cspSource: 'vscode-resource:' });
  it('escapes every recorded string', () => {
    assert.equal(html.includes('<script>alert'), false);
    assert.equal(/<img/i.test(html), false);
    assert.match(html, /out &lt;\/code&gt;&lt;\/pre&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(html, /name &lt;\/code&gt;/);
  });
  it('runs only its own nonce\'d script, under a CSP that forbids the rest, with no inline handlers', () => {
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; [^"]*script-src 'nonce-N0NCE';">/);
    assert.deepEqual(html.match(/<script[^>]*>/g), ['<script nonce="N0NCE">']);
    const tags = html.match(/<[a-z][^>]*>/gi) ?? [];
    assert.deepEqual(tags.filter((t) => /\son[a-z]+=/i.test(t)), []);
    assert.equal(html.includes('command:'), false);
  });
  it('is a page: a heading, facts, fragments in monospace, neighbours as links, previous/next', () => {
    assert.match(html, /<h1>Tool result: bash \(error\)<\/h1>/);
    assert.match(html, /<h2 id="content">Content<\/h2>/);
    assert.match(html, /<pre tabindex="0" aria-label="tool.result:0"><code>out /);
    assert.match(html, new RegExp(`<a href="#" data-ref="pi-event:${S}/4d5e6f70" data-order="append">`));
    assert.match(html, /<button type="button" id="previous" data-step="previous" data-order="append" aria-keyshortcuts="Alt\+ArrowUp"/);
    assert.match(html, /id="next"[^>]* disabled>Next/);
    assert.match(html, /data-action="more">Show more/);
    assert.match(html, /data-action="source" title="Open the JSONL line">\/s\/x.jsonl:6<\/a>/);
  });
  it('accepts only the messages the page sends', () => {
    assert.ok(isReadMessage({ type: 'open', ref: 'pi-event:a/b', order: 'branch' }));
    assert.ok(isReadMessage({ type: 'step', direction: 'next', order: 'append' }));
    assert.ok(isReadMessage({ type: 'action', action: 'trace' }));
    assert.equal(isReadMessage({ type: 'action', action: 'rm -rf' }), false);
    assert.equal(isReadMessage({ type: 'open', ref: 'x', order: 'sideways' }), false);
    assert.equal(esc(`a"b'c&`), 'a&quot;b&#39;c&amp;');
  });
});

describe('traceHtml', () => {
  const node = (id: string, preview = `p ${id}`): VisibleNode => ({ ref: `pi-event:${S}/${id}`, sessionId: S, entryId: id, kind: 'user.text', preview });
  const t: TraceResult = {
    event: node('e'),
    parent: node('p', HOSTILE),
    children: [node('c1')],
    siblings: [{ masked: true }],
    relations: [],
    files: [{ op: 'read', path: `/p/${HOSTILE}`, label: 'derived' }],
    lineage: [],
    labels: [],
  };
  const html = traceHtml(t, `pi-event:${S}/e`, { now: NOW, nonce: 'N0NCE', cspSource: 'vscode-resource:' });
  it('is a page of sections whose events link to their read pages and files to the file', () => {
    assert.deepEqual(html.match(/<h2 id="t\d">[^<]*<\/h2>/g), [
      '<h2 id="t0">Event</h2>',
      '<h2 id="t1">Parent</h2>',
      '<h2 id="t2">Children</h2>',
      '<h2 id="t3">Siblings</h2>',
      '<h2 id="t4">Files</h2>',
    ]);
    assert.match(html, new RegExp(`<a href="#" data-ref="pi-event:${S}/c1" data-order="append">p c1</a>`));
    assert.match(html, /<a href="#" data-file="\/p\/&lt;\/code&gt;/);
  });
  it('escapes what was recorded and runs only its own script', () => {
    assert.equal(html.includes('<script>alert'), false);
    assert.deepEqual(html.match(/<script[^>]*>/g), ['<script nonce="N0NCE">']);
    assert.ok(isReadMessage({ type: 'file', path: '/p/x' }));
  });
});
