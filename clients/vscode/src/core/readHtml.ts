/**
 * The rendered read and trace views: one event, or the tree around it, as an HTML page for a
 * webview. Every recorded string is
 * untrusted and goes through `esc`; the page runs only its own nonce'd script under a CSP that
 * forbids everything else, and it acts through messages to the extension (no command: links,
 * no inline handlers). Pure: no vscode import.
 */
import { type Fragment, type Node, type Omitted, type ReadResult, type TraceResult, isVisible } from './protocol';
import { contextEditText, formatBytes, hasMore, kindTag, kindTitle, relativeTime, stepTarget, traceEntries } from './render';

/** What the page asks of the extension (webview.postMessage from its script). */
export type ReadMessage =
  | { type: 'open'; ref: string; order: 'append' | 'branch' }
  | { type: 'step'; direction: 'previous' | 'next'; order: 'append' | 'branch' }
  | { type: 'action'; action: 'trace' | 'source' | 'copy' | 'more' | 'markdown' }
  | { type: 'file'; path: string };

export function isReadMessage(value: unknown): value is ReadMessage {
  const m = value as Partial<Record<string, unknown>> | null;
  if (!m || typeof m !== 'object') return false;
  const order = m.order === 'append' || m.order === 'branch';
  if (m.type === 'open') return typeof m.ref === 'string' && order;
  if (m.type === 'step') return (m.direction === 'previous' || m.direction === 'next') && order;
  if (m.type === 'file') return typeof m.path === 'string';
  return m.type === 'action' && ['trace', 'source', 'copy', 'more', 'markdown'].includes(String(m.action));
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** HTML-escapes text for element content and quoted attribute values. */
export function esc(text: string | null | undefined): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

export interface PageOptions {
  now: number;
  /** A fresh random value per render: the only script and style allowed carry it. */
  nonce: string;
  /** webview.cspSource */
  cspSource: string;
}

function number(n: number): string {
  return n.toLocaleString('en-US');
}

function fact(name: string, valueHtml: string): string {
  return `<dt>${esc(name)}</dt><dd>${valueHtml}</dd>`;
}

function fragmentHtml(f: Fragment, index: number): string {
  const end = f.offset + Array.from(f.text).length;
  const windowed = f.truncated || f.offset > 0 || end < f.totalLength;
  const range = windowed ? ` <span class="muted">(characters ${number(f.offset)}–${number(end)} of ${number(f.totalLength)})</span>` : '';
  const cut = end < f.totalLength ? '<p class="muted">Cut here: <button type="button" data-action="more">Show more</button></p>' : '';
  return (
    `<section class="fragment" aria-labelledby="f${index}"><h3 id="f${index}">${esc(f.fragmentId)}${range}</h3>` +
    `<pre tabindex="0" aria-label="${esc(f.fragmentId)}"><code>${esc(f.text)}</code></pre>${cut}</section>`
  );
}

function omittedHtml(o: Omitted): string {
  const bits = [o.reason, o.mimeType ?? '', formatBytes(o.bytes)].filter(Boolean).map(esc).join(', ');
  return `<li><code>${esc(o.field)}</code>: ${bits}</li>`;
}

function nodeHtml(node: Node, order: 'append' | 'branch', now: number): string {
  if (!isVisible(node)) return '<li class="muted">An event you cannot see</li>';
  const when = relativeTime(node.timestamp, now, true);
  const state = node.branchState && node.branchState !== 'selected' ? `${node.branchState} branch` : '';
  const about = [kindTag(node.kind, null, null), when, state].filter(Boolean).map(esc).join(' · ');
  const preview = node.preview ? ` — <span class="preview">${esc(node.preview)}</span>` : '';
  return `<li><a href="#" data-ref="${esc(node.ref)}" data-order="${order}">${esc(node.ref)}</a> <span class="muted">${about}</span>${preview}</li>`;
}

function nodeList(title: string, id: string, nodes: Node[], order: 'append' | 'branch', now: number, empty: string): string {
  const items = nodes.length ? nodes.map((n) => nodeHtml(n, order, now)).join('') : `<li class="muted">${esc(empty)}</li>`;
  return `<h3 id="${id}">${esc(title)}</h3><ul aria-labelledby="${id}">${items}</ul>`;
}

function navButton(direction: 'previous' | 'next', target: string | undefined, order: 'append' | 'branch'): string {
  const label = direction === 'previous' ? 'Previous' : 'Next';
  const keys = direction === 'previous' ? 'Alt+ArrowUp' : 'Alt+ArrowDown';
  const title = target ? `${label} event in ${order} order (${keys.replace('Arrow', '')}): ${target}` : `No ${direction} event in ${order} order`;
  const arrow = direction === 'previous' ? '↑ ' : '';
  const after = direction === 'next' ? ' ↓' : '';
  return `<button type="button" id="${direction}" data-step="${direction}" data-order="${order}" aria-keyshortcuts="${keys}" title="${esc(title)}"${target ? '' : ' disabled'}>${arrow}${label}${after}</button>`;
}

const STYLE = `
:root { color-scheme: light dark; }
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground);
  background: var(--vscode-editor-background); line-height: 1.5; margin: 0; padding: 0 1.5rem 2rem; max-width: 60rem; }
nav { position: sticky; top: 0; display: flex; flex-wrap: wrap; gap: .4rem; padding: .6rem 0; background: var(--vscode-editor-background);
  border-bottom: 1px solid var(--vscode-panel-border, transparent); }
button { font: inherit; color: var(--vscode-button-secondaryForeground, var(--vscode-button-foreground));
  background: var(--vscode-button-secondaryBackground, var(--vscode-button-background)); border: 1px solid var(--vscode-button-border, transparent);
  border-radius: 2px; padding: .15rem .6rem; cursor: pointer; }
button:hover:not(:disabled) { background: var(--vscode-button-secondaryHoverBackground, var(--vscode-button-hoverBackground)); }
button:disabled { opacity: .5; cursor: default; }
button#previous, button#next { color: var(--vscode-button-foreground); background: var(--vscode-button-background); }
:focus-visible { outline: 1px solid var(--vscode-focusBorder); outline-offset: 2px; }
a { color: var(--vscode-textLink-foreground); }
a:hover, a:active { color: var(--vscode-textLink-activeForeground); }
h1 { font-size: 1.5em; margin: 1rem 0 .2rem; }
h2 { font-size: 1.2em; margin-top: 1.6rem; border-bottom: 1px solid var(--vscode-panel-border, transparent); }
h3 { font-size: 1em; margin: 1rem 0 .3rem; }
code, pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
pre { background: var(--vscode-textCodeBlock-background); padding: .6rem .8rem; overflow-x: auto; white-space: pre-wrap;
  overflow-wrap: anywhere; border-radius: 3px; }
pre code { background: none; padding: 0; border-radius: 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .8rem 0; }
dl.facts dt { color: var(--vscode-descriptionForeground); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.muted { color: var(--vscode-descriptionForeground); }
.ref { margin: 0; }
ul { padding-left: 1.2rem; }
li { margin: .2rem 0; }
`;

/** The page's behaviour: clicks and keys become messages; nothing else runs. */
const SCRIPT = `
const vscode = acquireVsCodeApi();
document.addEventListener('click', (e) => {
  const el = e.target instanceof Element ? e.target.closest('[data-ref],[data-step],[data-action],[data-file]') : null;
  if (!el || el.disabled) return;
  e.preventDefault();
  if (el.dataset.file) vscode.postMessage({ type: 'file', path: el.dataset.file });
  else if (el.dataset.ref) vscode.postMessage({ type: 'open', ref: el.dataset.ref, order: el.dataset.order });
  else if (el.dataset.step) vscode.postMessage({ type: 'step', direction: el.dataset.step, order: el.dataset.order });
  else vscode.postMessage({ type: 'action', action: el.dataset.action });
});
document.addEventListener('keydown', (e) => {
  if (!e.altKey || e.ctrlKey || e.metaKey) return;
  const order = document.body.dataset.order;
  const steps = { ArrowUp: ['previous', order], ArrowDown: ['next', order], ArrowLeft: ['previous', 'branch'], ArrowRight: ['next', 'branch'] };
  const step = steps[e.key];
  if (!step) return;
  e.preventDefault();
  vscode.postMessage({ type: 'step', direction: step[0], order: step[1] });
});
`;

/** The whole page for one read result. */
export function readHtml(r: ReadResult, opts: PageOptions): string {
  const e = r.event;
  const order = r.neighbours.order === 'branch' ? 'branch' : 'append';
  const kinds = e.kinds?.length ? e.kinds : [];
  const title = kindTitle(kinds[0] ?? e.entryType ?? 'event', e.toolName, e.isError);
  const when = e.timestamp ? `${esc(e.timestamp)}${relativeTime(e.timestamp, opts.now, true) ? ` <span class="muted">(${esc(relativeTime(e.timestamp, opts.now, true))})</span>` : ''}` : 'unknown';
  const session = e.sessionName ? `${esc(e.sessionName)} <code>${esc(e.sessionId)}</code>` : `<code>${esc(e.sessionId)}</code>`;
  const entry = [e.entryType, e.role, e.toolName].filter((x): x is string => !!x).map((x) => `<code>${esc(x)}</code>`).join(' · ');
  const parent = e.parentId ? ` · parent <code>${esc(e.parentId)}</code>` : '';
  const states = [e.branchState ? `branch ${e.branchState}` : '', e.contextRole ? `context ${e.contextRole}` : '', e.selectionState ? `selection ${e.selectionState}` : ''].filter(Boolean);
  const facts = [
    fact('Time', when),
    fact('Session', session),
    e.cwd ? fact('Working directory', `<code>${esc(e.cwd)}</code>`) : '',
    fact('Entry', `<code>${esc(e.entryId)}</code>${entry ? ` · ${entry}` : ''}${parent}`),
    kinds.length ? fact('Kinds', esc(kinds.join(', '))) : '',
    states.length ? fact('State', esc(states.join(' · '))) : '',
    e.contextEdit ? fact('Context edit', esc(contextEditText(e.contextEdit))) : '',
    fact('Source', `<a href="#" data-action="source" title="Open the JSONL line">${esc(`${r.source.path}:${r.source.line}`)}</a>`),
  ].join('');
  const fragments = r.fragments.length ? r.fragments.map(fragmentHtml).join('') : '<p class="muted">No searchable content.</p>';
  const omitted = r.omitted.length ? `<section aria-labelledby="omitted"><h2 id="omitted">Omitted</h2><ul>${r.omitted.map(omittedHtml).join('')}</ul></section>` : '';
  const n = r.neighbours;
  const alternatives = n.alternatives?.length
    ? nodeList(`Alternatives${n.stoppedAtFork ? ' (unresolved fork)' : ''}`, 'n-alt', n.alternatives, order, opts.now, '')
    : '';
  const more = hasMore(r) ? '<button type="button" data-action="more">Show more</button>' : '';
  return `${head(title, order, opts)}
<nav aria-label="Event">
${navButton('previous', stepTarget(r, 'previous'), order)}
${navButton('next', stepTarget(r, 'next'), order)}
<button type="button" data-action="trace">Trace</button>
<button type="button" data-action="copy">Copy reference</button>
<button type="button" data-action="markdown">Markdown source</button>
${more}
</nav>
<main>
<header><h1>${esc(title)}</h1><p class="ref"><code>${esc(e.ref)}</code></p><dl class="facts">${facts}</dl></header>
<section aria-labelledby="content"><h2 id="content">Content</h2>${fragments}</section>
${omitted}
<section aria-labelledby="neighbours"><h2 id="neighbours">Neighbours <span class="muted">(${order} order)</span></h2>
${nodeList('Before', 'n-before', n.before, order, opts.now, 'None')}
${nodeList('After', 'n-after', n.after, order, opts.now, n.stoppedAtFork ? 'Stopped at a fork: see the alternatives' : 'None')}
${alternatives}
</section>
</main>
${tail(opts)}`;
}

/** The document's head (CSP, title, style) and the body's opening tag. */
function head(title: string, order: 'append' | 'branch', opts: PageOptions): string {
  const csp = `default-src 'none'; img-src ${opts.cspSource}; style-src 'nonce-${opts.nonce}'; script-src 'nonce-${opts.nonce}';`;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style nonce="${opts.nonce}">${STYLE}</style>
</head><body data-order="${order}">`;
}

function tail(opts: PageOptions): string {
  return `<script nonce="${opts.nonce}">${SCRIPT}</script>
</body></html>`;
}

/** The trace page: the event, its parent, children, siblings, relations, files and lineage. */
export function traceHtml(t: TraceResult, ref: string, opts: PageOptions): string {
  const sections: { name: string; items: string[] }[] = [];
  for (const entry of traceEntries(t, opts.now)) {
    if (sections.at(-1)?.name !== entry.section) sections.push({ name: entry.section, items: [] });
    const about = entry.description ? ` <span class="muted">${esc(entry.description)}</span>` : '';
    let item: string;
    if (entry.ref) item = `<a href="#" data-ref="${esc(entry.ref)}" data-order="append">${esc(entry.label)}</a>${about} <code class="muted">${esc(entry.ref)}</code>`;
    else if (entry.path) item = `<a href="#" data-file="${esc(entry.path)}">${esc(entry.label)}</a>${about}`;
    else item = `<span class="muted">${esc(entry.label)}</span>${about}`;
    sections.at(-1)?.items.push(`<li>${item}</li>`);
  }
  const body = sections
    .map((sec, i) => `<section aria-labelledby="t${i}"><h2 id="t${i}">${esc(sec.name)}</h2><ul>${sec.items.join('')}</ul></section>`)
    .join('\n');
  const title = `Trace of ${ref}`;
  return `${head(title, 'append', opts)}
<nav aria-label="Trace">
<button type="button" data-ref="${esc(ref)}" data-order="append">Read this event</button>
<button type="button" data-action="copy">Copy reference</button>
</nav>
<main>
<header><h1>Trace</h1><p class="ref"><code>${esc(ref)}</code></p></header>
${body}
</main>
${tail(opts)}`;
}

/** A page for a read that failed. */
export function errorHtml(ref: string, message: string, opts: PageOptions): string {
  const csp = `default-src 'none'; style-src 'nonce-${opts.nonce}';`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${csp}">
<title>${esc(ref)}</title><style nonce="${opts.nonce}">${STYLE}</style></head>
<body><main><h1>${esc(ref)}</h1><p role="alert">Could not read this event: ${esc(message)}</p></main></body></html>`;
}
