/**
 * Presentation of server answers: kinds, times and paths, the read view's Markdown, trace
 * entries and the status bar text (the search picker's rows are in hitRow.ts). Pure: no vscode import (codicons are `$(name)` strings).
 */
import {
  type Fragment,
  type Node,
  type Omitted,
  type ReadResult,
  type StatusResult,
  type TraceResult,
  isVisible,
} from './protocol';

// ---------------------------------------------------------------------------------------------
// Time

const UNITS: [name: string, short: string, seconds: number][] = [
  ['year', 'year', 365 * 24 * 3600],
  ['month', 'month', 30 * 24 * 3600],
  ['day', 'day', 24 * 3600],
  ['hour', 'h', 3600],
  ['minute', 'min', 60],
];

/**
 * How long ago, in the largest unit: "just now", "5 min ago", "3 h ago", "2 days ago", "in 4 days";
 * `spoken` writes every unit out ("3 hours ago"), which a screen reader says well. '' for a
 * missing or bad timestamp.
 */
export function relativeTime(timestamp: string | null | undefined, now: number, spoken = false): string {
  if (!timestamp) return '';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '';
  const seconds = Math.round((now - t) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return 'just now';
  const [name, short, size] = UNITS.find(([, , s]) => abs >= s) ?? UNITS[UNITS.length - 1];
  const n = Math.max(1, Math.round(abs / size));
  const words = spoken || short === name ? `${n} ${name}${n === 1 ? '' : 's'}` : `${n} ${short}`;
  return seconds >= 0 ? `${words} ago` : `in ${words}`;
}

// ---------------------------------------------------------------------------------------------
// Kinds

const ICONS: Record<string, string> = {
  'user.text': 'account',
  'assistant.text': 'hubot',
  'tool.call': 'tools',
  'tool.result': 'output',
  'bash.command': 'terminal',
  'bash.output': 'debug-console',
  'summary.compaction': 'fold',
  'summary.branch': 'git-branch',
  'custom.message': 'extensions',
  'custom.entry': 'extensions',
  'session.name': 'tag',
  'context.edit': 'edit',
  'system.prompt': 'settings-gear',
  'python.code': 'terminal',
  'python.output': 'debug-console',
  'file.mention': 'file',
  'ttsr.rules': 'law',
  'session.task': 'tasklist',
};

/** What a Pi 1.x context edit did to the entry's part of the model context, or '' without one. */
export function contextEditText(edit: { ref: string; replacement: string } | undefined): string {
  if (!edit) return '';
  const what = edit.replacement === 'removed' ? 'removed from the model context' : 'content replaced in the model context';
  return `${what} by ${edit.ref} (the content shown is the original)`;
}

const SOURCES: Record<string, string> = { pi: 'Pi', omp: 'Oh My Pi' };

/** "sessions: Oh My Pi 2, Pi 10" when another agent than Pi wrote some, else nothing. */
export function bySource(counts: Record<string, number> | undefined): string {
  const entries = Object.entries(counts ?? {});
  if (!entries.some(([source]) => source !== 'pi')) return '';
  return `sessions: ${entries.map(([source, n]) => `${SOURCES[source] ?? source} ${number(n)}`).join(', ')}`;
}

/** The codicon name for an event kind; failed results and runs get `error`. */
export function kindIcon(kind: string | null | undefined, isError?: boolean | null): string {
  if (isError && (kind === 'tool.result' || kind === 'bash.output' || kind === 'bash.command' || kind === 'python.code' || kind === 'python.output')) return 'error';
  return (kind && ICONS[kind]) || 'circle-small';
}

/** Short words for a kind, with the tool: "result! bash", "call read", "user". */
export function kindTag(kind: string | null | undefined, toolName?: string | null, isError?: boolean | null): string {
  switch (kind) {
    case 'user.text':
      return 'user';
    case 'assistant.text':
      return 'assistant';
    case 'tool.call':
      return toolName ? `call ${toolName}` : 'call';
    case 'tool.result':
      return `result${isError ? '!' : ''}${toolName ? ` ${toolName}` : ''}`;
    case 'bash.command':
      return 'bash';
    case 'bash.output':
      return isError ? 'bash-out!' : 'bash-out';
    case 'summary.compaction':
      return 'compaction';
    case 'summary.branch':
      return 'branch summary';
    case 'custom.message':
      return 'custom';
    case 'custom.entry':
      return 'entry';
    case 'session.name':
      return 'name';
    case 'context.edit':
      return 'context edit';
    case 'system.prompt':
      return 'system';
    case 'python.code':
      return 'python';
    case 'python.output':
      return isError ? 'python-out!' : 'python-out';
    case 'file.mention':
      return 'mention';
    case 'ttsr.rules':
      return 'rules';
    case 'session.task':
      return 'task';
    default:
      return kind ?? 'event';
  }
}

const TITLES: Record<string, string> = {
  'user.text': 'User message',
  'assistant.text': 'Assistant message',
  'tool.call': 'Tool call',
  'tool.result': 'Tool result',
  'bash.command': 'Bash command',
  'bash.output': 'Bash output',
  'summary.compaction': 'Compaction summary',
  'summary.branch': 'Branch summary',
  'custom.message': 'Custom message',
  'custom.entry': 'Custom entry',
  'session.name': 'Session name',
  'context.edit': 'Context edit',
  'system.prompt': 'System prompt',
  'python.code': 'Python cell',
  'python.output': 'Python output',
  'file.mention': 'Mentioned file',
  'ttsr.rules': 'Injected rules',
  'session.task': 'Subagent task',
};

/** A heading for an event: "Tool result: bash (error)", "User message". */
export function kindTitle(kind: string | null | undefined, toolName?: string | null, isError?: boolean | null): string {
  const base = (kind && TITLES[kind]) || kind || 'Event';
  return `${base}${toolName && kind?.startsWith('tool.') ? `: ${toolName}` : ''}${isError ? ' (error)' : ''}`;
}

// ---------------------------------------------------------------------------------------------
// Paths

/**
 * A cwd for display: a workspace folder by its name (`proj`, `proj/sub`), else `~/...` under the
 * home directory, else unchanged.
 */
export function shortenPath(path: string, folders: readonly string[], home: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  for (const f of folders) {
    const folder = f.length > 1 ? f.replace(/\/+$/, '') : f;
    const name = folder.split('/').pop() || folder;
    if (trimmed === folder) return name;
    if (trimmed.startsWith(`${folder}/`)) return `${name}/${trimmed.slice(folder.length + 1)}`;
  }
  if (home && home !== '/' && (trimmed === home || trimmed.startsWith(`${home}/`))) return `~${trimmed.slice(home.length)}`;
  return trimmed;
}

// ---------------------------------------------------------------------------------------------
// Read view (Markdown)

function fence(text: string): string {
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  return '`'.repeat(longest + 1);
}

function code(text: string): string {
  const ticks = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const f = '`'.repeat(ticks + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${f}${pad}${text}${pad}${f}`;
}

/** Escapes Markdown inline syntax in free text (previews, names). */
export function escapeMarkdown(text: string): string {
  return text.replace(/([\\`*_[\]<>|~])/g, '\\$1').replace(/\n/g, ' ');
}

export function formatBytes(n: number | undefined): string {
  if (n === undefined || n === null || !Number.isFinite(n)) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function number(n: number): string {
  return n.toLocaleString('en-US');
}

/** One line for a neighbour / trace node: `` `ref` `` kind · time — preview. */
export function nodeLine(node: Node, now: number): string {
  if (!isVisible(node)) return '*(an event you cannot see)*';
  const parts = [code(node.ref), kindTag(node.kind, null, null)];
  const when = relativeTime(node.timestamp, now);
  if (when) parts.push(when);
  if (node.branchState && node.branchState !== 'selected') parts.push(`${node.branchState} branch`);
  const preview = node.preview ? ` — ${escapeMarkdown(node.preview)}` : '';
  return `${parts.join(' · ')}${preview}`;
}

function fragmentSection(f: Fragment): string[] {
  const end = f.offset + Array.from(f.text).length;
  const window =
    f.truncated || f.offset > 0 || end < f.totalLength
      ? ` (characters ${number(f.offset)}–${number(end)} of ${number(f.totalLength)})`
      : '';
  const body = f.text;
  const ticks = fence(body);
  const more = end < f.totalLength ? ['', '*(cut here: **Pi Events: Show More of This Event** widens the window)*', ''] : [''];
  return [`### ${f.fragmentId}${window}`, '', `${ticks}text`, body, ticks, ...more];
}

function omittedLine(o: Omitted): string {
  const bits = [o.reason];
  if (o.mimeType) bits.push(o.mimeType);
  const size = formatBytes(o.bytes);
  if (size) bits.push(size);
  return `- ${code(o.field)}: ${bits.join(', ')}`;
}

export interface ReadOptions {
  now: number;
  /** Reference of the event shown, as the URI path gives it. */
}

/** The read view document: metadata, bounded content, what was omitted, neighbours. */
export function readMarkdown(r: ReadResult, opts: ReadOptions): string {
  const e = r.event;
  const kinds = e.kinds?.length ? e.kinds : [];
  const mainKind = kinds[0] ?? e.entryType ?? 'event';
  const lines: string[] = [];
  lines.push(`# ${escapeMarkdown(kindTitle(mainKind, e.toolName, e.isError))}`, '');
  lines.push(`${code(e.ref)}`, '');
  const when = e.timestamp ? `${e.timestamp}${relativeTime(e.timestamp, opts.now) ? ` (${relativeTime(e.timestamp, opts.now)})` : ''}` : 'unknown';
  lines.push(`- **Time:** ${when}`);
  const session = e.sessionName ? `${escapeMarkdown(e.sessionName)} (${code(e.sessionId)})` : code(e.sessionId);
  lines.push(`- **Session:** ${session}`);
  if (e.cwd) lines.push(`- **Working directory:** ${code(e.cwd)}`);
  const entry = [e.entryType, e.role, e.toolName].filter((x): x is string => !!x).map(code).join(' · ');
  lines.push(`- **Entry:** ${code(e.entryId)}${entry ? ` · ${entry}` : ''}${e.parentId ? ` · parent ${code(e.parentId)}` : ''}`);
  if (kinds.length) lines.push(`- **Kinds:** ${kinds.join(', ')}`);
  const states = [
    e.branchState ? `branch ${e.branchState}` : '',
    e.contextRole ? `context ${e.contextRole}` : '',
    e.selectionState ? `selection ${e.selectionState}` : '',
  ].filter(Boolean);
  if (states.length) lines.push(`- **State:** ${states.join(' · ')}`);
  const edit = contextEditText(e.contextEdit);
  if (edit) lines.push(`- **Context edit:** ${escapeMarkdown(edit)}`);
  lines.push(`- **Source:** ${code(`${r.source.path}:${r.source.line}`)}`);
  lines.push('');
  lines.push('## Content', '');
  if (!r.fragments.length) lines.push('*(no searchable content)*', '');
  for (const f of r.fragments) lines.push(...fragmentSection(f));
  if (r.omitted.length) {
    lines.push('## Omitted', '');
    for (const o of r.omitted) lines.push(omittedLine(o));
    lines.push('');
  }
  const n = r.neighbours;
  lines.push(`## Neighbours (${n.order} order)`, '');
  lines.push('**Before:**', '');
  if (!n.before.length) lines.push('- *(none)*');
  for (const node of n.before) lines.push(`- ${nodeLine(node, opts.now)}`);
  lines.push('', '**After:**', '');
  if (!n.after.length) lines.push(n.stoppedAtFork ? '- *(stopped at a fork: see the alternatives)*' : '- *(none)*');
  for (const node of n.after) lines.push(`- ${nodeLine(node, opts.now)}`);
  if (n.alternatives?.length) {
    lines.push('', `**Alternatives${n.stoppedAtFork ? ' (unresolved fork)' : ''}:**`, '');
    for (const node of n.alternatives) lines.push(`- ${nodeLine(node, opts.now)}`);
  }
  lines.push('');
  return lines.join('\n');
}

/** Whether some fragment was cut at the end of its window (more can be read). */
export function hasMore(r: ReadResult): boolean {
  return r.fragments.some((f) => f.offset + Array.from(f.text).length < f.totalLength);
}

/** The neighbour to step to: the last `before` or the first `after`. */
export function stepTarget(r: ReadResult, direction: 'previous' | 'next'): string | undefined {
  const list = direction === 'previous' ? [...r.neighbours.before].reverse() : r.neighbours.after;
  const node = list.find((x) => isVisible(x));
  return isVisible(node) ? node.ref : undefined;
}

// ---------------------------------------------------------------------------------------------
// Trace

export interface TraceEntry {
  section: string;
  icon: string;
  label: string;
  description: string;
  ref?: string;
  /** A file path to open (files touched by the event). */
  path?: string;
  line?: number;
  uri?: string;
}

function nodeEntry(section: string, node: Node, now: number, extra = ''): TraceEntry {
  if (!isVisible(node)) {
    return { section, icon: 'lock', label: '(an event you cannot see)', description: extra };
  }
  const when = relativeTime(node.timestamp, now);
  const desc = [kindTag(node.kind, null, null), when, node.branchState && node.branchState !== 'selected' ? `${node.branchState} branch` : '', extra]
    .filter(Boolean)
    .join(' · ');
  return {
    section,
    icon: kindIcon(node.kind),
    label: node.preview || node.ref,
    description: desc,
    ref: node.ref,
    line: node.source?.line,
    uri: node.source?.uri,
  };
}

/** Flattens a trace into sections: Event, Parent, Children, Siblings, Relations, Files, Lineage. */
export function traceEntries(t: TraceResult, now: number): TraceEntry[] {
  const out: TraceEntry[] = [];
  out.push(nodeEntry('Event', t.event, now, t.labels?.length ? `labels: ${t.labels.join(', ')}` : ''));
  if (t.parent) out.push(nodeEntry('Parent', t.parent, now, t.towardLeaf === 'parent' ? 'toward leaf' : ''));
  for (const c of t.children ?? []) {
    const toward = isVisible(c) && t.towardLeafRef === c.ref ? 'toward leaf' : '';
    out.push(nodeEntry('Children', c, now, toward));
  }
  for (const s of t.siblings ?? []) out.push(nodeEntry('Siblings', s, now));
  for (const r of t.relations ?? []) {
    if (r.type === 'parent' || r.type === 'child' || r.type === 'sibling') continue;
    // file-* relations name a file, not an event: the Files section lists them.
    if (!r.node) continue;
    const arrow = r.direction === 'out' ? '→' : '←';
    out.push(nodeEntry('Relations', r.node, now, `${arrow} ${r.type} (${r.label})`));
  }
  for (const f of t.files ?? []) {
    out.push({ section: 'Files', icon: 'file', label: f.path, description: `${f.op} (${f.label})`, path: f.path });
  }
  for (const l of t.lineage ?? []) {
    if (l.masked) {
      out.push({ section: 'Lineage', icon: 'lock', label: '(a session you cannot see)', description: l.relation });
      continue;
    }
    out.push({
      section: 'Lineage',
      icon: 'repo-forked',
      label: l.sessionId ?? l.path ?? '',
      description: l.relation,
      path: l.path,
    });
    if (l.forkAnchor) out.push(nodeEntry('Lineage', l.forkAnchor, now, 'fork anchor'));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Status bar

export function compactNumber(n: number): string {
  if (n < 1000) return String(n);
  if (n < 10_000) return `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k`;
  if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, '')}M`;
}

export type ServerState =
  | { kind: 'starting' }
  | { kind: 'installing' }
  | { kind: 'stopped'; reason?: string }
  | { kind: 'indexing'; message?: string; percentage?: number }
  | { kind: 'ready'; status: StatusResult };

export function statusBarText(state: ServerState, revealing = false): { text: string; tooltip: string } {
  switch (state.kind) {
    case 'starting':
      return { text: '$(loading~spin) Pi Events', tooltip: 'Pi Events: starting the server' };
    case 'installing':
      return { text: '$(loading~spin) Pi Events: installing the server', tooltip: 'Pi Events: installing the server into its private environment' };
    case 'stopped':
      return { text: '$(error) Pi Events', tooltip: `Pi Events: server not running${state.reason ? ` (${state.reason})` : ''}` };
    case 'indexing': {
      const pct = state.percentage !== undefined ? ` ${Math.round(state.percentage)}%` : '';
      const msg = state.message ? ` ${state.message}` : '';
      return { text: `$(sync~spin) Pi Events: indexing${msg || pct}`, tooltip: 'Pi Events: indexing Pi sessions' };
    }
    case 'ready': {
      const s = state.status;
      const issues = (s.stale?.length ?? 0) + (s.unavailable?.length ?? 0);
      const text = `$(history) Pi Events: ${compactNumber(s.sessions)} sessions · ${compactNumber(s.events)} events${issues ? ` $(warning) ${issues}` : ''}`;
      const tooltip = [
        `${number(s.sessions)} sessions, ${number(s.events)} events, ${number(s.fragments)} fragments visible`,
        bySource(s.sessionsBySource),
        s.secretEvents ? `${number(s.secretEvents)} events held credentials (masked${revealing ? '; read views show them: piEvents.revealSecrets' : ''})` : '',
        `index: ${s.index.path} (${formatBytes(s.index.bytes)}, generation ${s.index.generation})`,
        `roots: ${(s.roots ?? []).join(', ') || '(none: nothing is visible)'}`,
        ...(s.directories?.length
          ? s.directories.map((d) => `session dir: ${d.path} (${d.layout}, ${d.origin}${d.exists ? '' : ', does not exist yet'})${d.sessions === null ? '' : `: ${number(d.sessions)} sessions`}`)
          : [`session dirs: ${(s.sessionDirs ?? []).join(', ')}`]),
        s.stale?.length ? `stale: ${s.stale.length}` : '',
        s.unavailable?.length ? `unavailable: ${s.unavailable.length}` : '',
        'Click to reindex.',
      ].filter(Boolean);
      return { text, tooltip: tooltip.join('\n') };
    }
  }
}
