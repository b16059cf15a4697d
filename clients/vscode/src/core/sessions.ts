/**
 * Sessions (issue 32): the wire shapes of `piEvents/search` with `groupBy: "session"` and of
 * `piEvents/sessions` (docs/protocol.md), and the words shown for them in the search picker's
 * sessions mode. Every text here comes from the server already masked; it is shown as plain
 * text only (picker fields with `$(…)` escaped, tree labels and string tooltips), never as
 * Markdown or HTML. Pure: no vscode, no I/O.
 */
import type { DidYouMean, Hit, IndexingState, Node, SearchFilters, SearchParams } from './protocol';
import { type Row, type RowOptions, escapeIcons, highlight, partialNote, spokenTime } from './hitRow';
import { kindTitle } from './render';

export const SESSION_METHODS = {
  sessions: 'piEvents/sessions',
} as const;

/** One session of a grouped search: its strongest event (`top`) and how many of its events match. */
export interface SessionGroup {
  sessionId: string;
  path: string;
  uri?: string;
  cwd?: string | null;
  name?: string | null;
  firstPrompt?: string | null;
  started?: string | null;
  updated?: string | null;
  /** Indexed events of the session. */
  events: number;
  /** Its matching events in the whole result, not only this page. */
  matches: number;
  top: Hit;
  parentSession?: string | null;
}

export interface GroupedSearchParams extends SearchParams {
  groupBy: 'session';
}

export interface GroupedSearchResult {
  sessions: SessionGroup[];
  nextCursor: string | null;
  didYouMean?: DidYouMean | null;
  indexing?: IndexingState | null;
}

/** One entry of the sessions list. */
export interface SessionInfo {
  sessionId: string;
  path: string;
  uri?: string;
  cwd?: string | null;
  name?: string | null;
  firstPrompt?: string | null;
  started?: string | null;
  updated?: string | null;
  events: number;
  /** Event counts by kind (an event counts once per kind it holds). */
  kinds?: Record<string, number>;
  parentSession?: string | null;
  /** The session's first event in branch order: opening the session reads it. */
  first?: Node | null;
}

export interface SessionsParams {
  limit?: number;
  cursor?: string | null;
  filters?: SearchFilters;
}

export interface SessionsResult {
  sessions: SessionInfo[];
  nextCursor: string | null;
}

/** What both shapes share, for the words shown. */
export type SessionLike = Pick<SessionInfo, 'sessionId' | 'name' | 'firstPrompt' | 'cwd' | 'updated' | 'started' | 'events' | 'parentSession' | 'path'>;

/** One line: newlines and tabs become spaces. */
export function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, ' ');
}

const TITLE_MAX = 120;

/** The session's name, else its first prompt, else its id; one line, at most 120 characters. */
export function sessionTitle(s: Pick<SessionLike, 'sessionId' | 'name' | 'firstPrompt'>): string {
  const text = oneLine((s.name ?? '').trim() || (s.firstPrompt ?? '').trim() || `session ${s.sessionId}`).trim();
  const chars = Array.from(text);
  return chars.length > TITLE_MAX ? `${chars.slice(0, TITLE_MAX - 1).join('')}…` : text;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** "7 of 143 events match", "1 of 1 event matches". */
export function matchCount(matches: number, events: number): string {
  return `${matches} of ${plural(events, 'event')} ${matches === 1 ? 'matches' : 'match'}`;
}

/**
 * A grouped search result as a picker row: the session (title, matches, updated time, cwd) in
 * the description, the top event's snippet in the detail. The label stays empty, as in hitRow,
 * so VS Code keeps the server's order.
 */
export function groupRow(group: SessionGroup, opts: RowOptions): Row {
  const short = (p: string): string => (opts.shorten ? opts.shorten(p) : p);
  const updated = spokenTime(group.updated ?? group.top.timestamp, opts.now);
  const parts = [sessionTitle(group), matchCount(group.matches, group.events), updated ? `updated ${updated}` : '', group.cwd ? short(group.cwd) : ''];
  const top = group.top;
  const snippet = highlight(top.snippet ?? '', top.matches, opts.style);
  return {
    label: '',
    icon: group.parentSession ? 'repo-forked' : 'comment-discussion',
    description: escapeIcons(oneLine(parts.filter(Boolean).join(', '))),
    detail: escapeIcons(oneLine(`${[kindTitle(top.kind, top.toolName, top.isError), partialNote(top)].filter(Boolean).join(', ')}: ${snippet}`)),
  };
}

/** The sessions of `more` that `have` does not hold yet, appended (pages never repeat one; if one did, the first stays). */
export function mergeGroups<T extends { sessionId: string }>(have: readonly T[], more: readonly T[]): T[] {
  const seen = new Set(have.map((g) => g.sessionId));
  const out = [...have];
  for (const g of more) {
    if (seen.has(g.sessionId)) continue;
    seen.add(g.sessionId);
    out.push(g);
  }
  return out;
}

const KIND_WORDS: [kind: string, one: string, many: string][] = [
  ['user.text', 'user message', 'user messages'],
  ['assistant.text', 'assistant message', 'assistant messages'],
  ['tool.call', 'tool call', 'tool calls'],
  ['tool.result', 'tool result', 'tool results'],
  ['bash.command', 'bash command', 'bash commands'],
  ['bash.output', 'bash output', 'bash outputs'],
  ['summary.compaction', 'compaction', 'compactions'],
  ['summary.branch', 'branch summary', 'branch summaries'],
  ['custom.message', 'custom message', 'custom messages'],
  ['custom.entry', 'custom entry', 'custom entries'],
  ['session.name', 'name change', 'name changes'],
  ['context.edit', 'context edit', 'context edits'],
  ['system.prompt', 'system prompt', 'system prompts'],
  ['python.code', 'Python cell', 'Python cells'],
  ['python.output', 'Python output', 'Python outputs'],
  ['file.mention', 'mentioned file', 'mentioned files'],
  ['ttsr.rules', 'rule injection', 'rule injections'],
  ['session.task', 'subagent task', 'subagent tasks'],
];

/** "12 user messages, 30 assistant messages, 1 tool call": known kinds in a fixed order, then the rest. */
export function kindCounts(kinds: Record<string, number> | undefined): string {
  if (!kinds) return '';
  const known = new Set(KIND_WORDS.map(([k]) => k));
  const parts = KIND_WORDS.filter(([k]) => (kinds[k] ?? 0) > 0).map(([k, one, many]) => plural(kinds[k] ?? 0, one, many));
  for (const [k, n] of Object.entries(kinds).sort(([a], [b]) => a.localeCompare(b))) {
    if (!known.has(k) && n > 0) parts.push(`${n} ${k}`);
  }
  return parts.join(', ');
}

/** A local "2026-05-01 10:00" for a tooltip; '' when missing or bad. */
export function shortDate(timestamp: string | null | undefined): string {
  if (!timestamp) return '';
  const t = new Date(timestamp);
  if (Number.isNaN(t.getTime())) return '';
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${pad(t.getHours())}:${pad(t.getMinutes())}`;
}

/**
 * A session's facts as plain text lines (a tree item's tooltip, given as a string so that
 * nothing in it is read as Markdown): title, first prompt, cwd, times, counts, parent, file.
 */
export function sessionTooltip(s: SessionLike & { kinds?: Record<string, number>; matches?: number }, shorten: (p: string) => string = (p) => p): string {
  const lines = [sessionTitle(s)];
  if (s.name && s.firstPrompt) lines.push(`First prompt: ${oneLine(s.firstPrompt)}`);
  if (s.cwd) lines.push(`Working directory: ${shorten(s.cwd)}`);
  const started = shortDate(s.started);
  const updated = shortDate(s.updated);
  if (started || updated) lines.push(`${started || '?'} → ${updated || '?'}`);
  lines.push(s.matches !== undefined ? matchCount(s.matches, s.events) : plural(s.events, 'event'));
  const kinds = kindCounts(s.kinds);
  if (kinds) lines.push(kinds);
  if (s.parentSession) lines.push(`Forked from ${shorten(s.parentSession)}`);
  lines.push(`Session ${s.sessionId}`, s.path);
  return lines.join('\n');
}
