/**
 * The Sessions view's rows and requests (issue 32), as plain data: src/sessionsView.ts turns a
 * row into a vscode.TreeItem. Two modes: the sessions list (`piEvents/sessions`; a session's
 * children are its events in file order, from `piEvents/read` of its first event) and the last
 * search made by session (`groupBy: "session"`; a session's children are its matching events,
 * the same search narrowed to it). Labels are plain text (a tree shows `$(…)`, `**` and `<b>` as
 * typed) and tooltips are strings, never Markdown. Pure: no vscode, no I/O.
 */
import type { Hit, ReadParams, SearchFilters, SearchParams, VisibleNode } from './protocol';
import { spokenTime } from './hitRow';
import { kindIcon, kindTitle } from './render';
import { type GroupedSearchParams, type SessionGroup, type SessionInfo, type SessionsParams, matchCount, oneLine, sessionTitle, sessionTooltip } from './sessions';

/** A search shown by session: what the picker searched. */
export interface SessionSearch {
  query: string;
  filters?: SearchFilters;
  prefixLast?: boolean;
  /** The filters in words ("errors only · kind: tool.call"), for the view's description. */
  summary?: string;
}

export type ViewMode = { kind: 'list' } | { kind: 'search'; search: SessionSearch };

export type RowContext = 'piEvents.session' | 'piEvents.event' | 'piEvents.more' | 'piEvents.message';

export interface TreeRow {
  /** Stable across refreshes, so VS Code keeps what was expanded. */
  id: string;
  label: string;
  /** [start, end) in UTF-16 units of `label` (what TreeItemLabel.highlights takes). */
  highlights?: [number, number][];
  description: string;
  tooltip: string;
  /** What a screen reader says for the row. */
  aria: string;
  /** A codicon name. */
  icon: string;
  expandable: boolean;
  context: RowContext;
  /** The event a click opens (events), or that "Open" opens (sessions: the first or the top event). */
  ref?: string;
}

export interface TreeRowOptions {
  now: number;
  shorten?: (path: string) => string;
}

/** Events asked per page of a session's children (piEvents/read allows at most 50 neighbours). */
export const EVENTS_PAGE = 50;
export const SESSIONS_PAGE = 50;

const LABEL_MAX = 160;

function clip(text: string): string {
  const chars = Array.from(oneLine(text).trim());
  return chars.length > LABEL_MAX ? `${chars.slice(0, LABEL_MAX - 1).join('')}…` : chars.join('');
}

/**
 * Code point ranges (the server's `matches`) as UTF-16 ranges of the same text, merged, clamped
 * and sorted; text past `LABEL_MAX` code points is not marked.
 */
export function utf16Ranges(text: string, ranges: readonly [number, number][] | undefined): [number, number][] {
  if (!ranges?.length) return [];
  const chars = Array.from(text);
  const offsets = [0];
  for (const ch of chars) offsets.push(offsets[offsets.length - 1] + ch.length);
  const limit = Math.min(chars.length, LABEL_MAX - 1);
  const out: [number, number][] = [];
  const sorted = ranges
    .filter((r) => Array.isArray(r) && Number.isInteger(r[0]) && Number.isInteger(r[1]))
    .map(([s, e]): [number, number] => [Math.max(0, Math.min(s, limit)), Math.max(0, Math.min(e, limit))])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0]);
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    const from = offsets[s];
    const to = offsets[e];
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

function shortener(opts: TreeRowOptions): (p: string) => string {
  return opts.shorten ?? ((p) => p);
}

function rootId(mode: ViewMode['kind'], sessionId: string): string {
  return `${mode}:${sessionId}`;
}

/** A session of the sessions list. */
export function sessionRow(s: SessionInfo, opts: TreeRowOptions): TreeRow {
  const title = sessionTitle(s);
  const updated = spokenTime(s.updated, opts.now);
  const cwd = s.cwd ? shortener(opts)(s.cwd) : '';
  const events = `${s.events} ${s.events === 1 ? 'event' : 'events'}`;
  const first = s.first && s.first.masked !== true ? s.first.ref : undefined;
  return {
    id: rootId('list', s.sessionId),
    label: title,
    description: [updated, events].filter(Boolean).join(' · '),
    tooltip: sessionTooltip(s, shortener(opts)),
    aria: [title, updated ? `updated ${updated}` : '', events, cwd].filter(Boolean).join(', '),
    icon: s.parentSession ? 'repo-forked' : 'comment-discussion',
    expandable: s.events > 0,
    context: 'piEvents.session',
    ...(first ? { ref: first } : {}),
  };
}

/** A session of a search by session: its title and how many of its events match. */
export function groupTreeRow(g: SessionGroup, opts: TreeRowOptions): TreeRow {
  const title = sessionTitle(g);
  const updated = spokenTime(g.updated ?? g.top.timestamp, opts.now);
  const count = matchCount(g.matches, g.events);
  const cwd = g.cwd ? shortener(opts)(g.cwd) : '';
  return {
    id: rootId('search', g.sessionId),
    label: title,
    description: [count, updated].filter(Boolean).join(' · '),
    tooltip: `${sessionTooltip({ ...g, matches: g.matches }, shortener(opts))}\nStrongest match: ${oneLine(g.top.snippet ?? '')}`,
    aria: [title, count, updated ? `updated ${updated}` : '', cwd].filter(Boolean).join(', '),
    icon: g.parentSession ? 'repo-forked' : 'comment-discussion',
    expandable: true,
    context: 'piEvents.session',
    ref: g.top.ref,
  };
}

function stateWords(branchState?: string | null): string {
  return branchState && branchState !== 'selected' && branchState !== 'unknown' ? `${branchState} branch` : '';
}

/** A matching event under its session: the snippet, marked where it matched. */
export function hitTreeRow(hit: Hit, parentId: string, opts: TreeRowOptions): TreeRow {
  const label = clip(hit.snippet ?? '') || kindTitle(hit.kind, hit.toolName, hit.isError);
  const what = kindTitle(hit.kind, hit.toolName, hit.isError);
  const when = spokenTime(hit.timestamp, opts.now);
  const facts = [what, when, stateWords(hit.branchState)].filter(Boolean);
  return {
    id: `${parentId}/${hit.entryId}`,
    label,
    highlights: label === oneLine(hit.snippet ?? '').trim() ? utf16Ranges(label, hit.matches) : [],
    description: facts.join(' · '),
    tooltip: [facts.join(', '), oneLine(hit.snippet ?? ''), hit.ref].filter(Boolean).join('\n'),
    aria: [...facts, label].join(', '),
    icon: kindIcon(hit.kind, hit.isError),
    expandable: false,
    context: 'piEvents.event',
    ref: hit.ref,
  };
}

/** "Model change" for `model_change`: an entry without a searchable kind, in words. */
export function entryTitle(entryType: string | null | undefined): string {
  const words = (entryType ?? '').replace(/[_-]+/g, ' ').trim();
  return words ? words[0].toUpperCase() + words.slice(1) : 'Event';
}

/** An event of the session in file order (a neighbour Node from piEvents/read). */
export function nodeTreeRow(node: VisibleNode, parentId: string, opts: TreeRowOptions): TreeRow {
  const what = node.kind ? kindTitle(node.kind, null, null) : entryTitle(node.entryType);
  const preview = clip(node.preview ?? '');
  // An entry without text previews as its bare type ("model_change"): the type in words says it.
  const hasText = preview !== '' && preview !== node.entryType;
  const label = hasText ? preview : what;
  const facts = [what, spokenTime(node.timestamp, opts.now), stateWords(node.branchState)].filter(Boolean);
  return {
    id: `${parentId}/${node.entryId}`,
    label,
    // The description never repeats the label.
    description: (hasText ? facts : facts.slice(1)).join(' · '),
    tooltip: [facts.join(', '), hasText ? oneLine(node.preview ?? '') : '', node.ref].filter(Boolean).join('\n'),
    aria: (hasText ? [...facts, label] : facts).join(', '),
    icon: kindIcon(node.kind, null),
    expandable: false,
    context: 'piEvents.event',
    ref: node.ref,
  };
}

/** "More sessions…" / "More events…": loads the next page into the same parent. */
export function moreRow(parentId: string, what: 'sessions' | 'events' | 'matches'): TreeRow {
  const label = what === 'matches' ? 'More matching events…' : `More ${what}…`;
  return { id: `${parentId}/more`, label, description: '', tooltip: label, aria: label, icon: 'ellipsis', expandable: false, context: 'piEvents.more' };
}

/** A row that says something (an error, "no sessions"). */
export function messageTreeRow(parentId: string, icon: string, text: string): TreeRow {
  const label = clip(text);
  return { id: `${parentId}/message`, label, description: '', tooltip: text, aria: label, icon, expandable: false, context: 'piEvents.message' };
}

/** The search by session the view shows (the picker's, first page or a later one). */
export function groupParams(search: SessionSearch, limit: number, cursor: string | null): GroupedSearchParams {
  const params: GroupedSearchParams = { query: search.query, limit, groupBy: 'session' };
  if (search.prefixLast) params.prefixLast = true;
  if (search.filters && Object.keys(search.filters).length) params.filters = { ...search.filters };
  if (cursor) params.cursor = cursor;
  return params;
}

/** The same search, event by event, narrowed to one session: that session's matching events in rank order. */
export function sessionHitsParams(search: SessionSearch, sessionId: string, limit: number, cursor: string | null): SearchParams {
  const params: SearchParams = { query: search.query, limit, filters: { ...(search.filters ?? {}), sessionId } };
  if (search.prefixLast) params.prefixLast = true;
  if (cursor) params.cursor = cursor;
  return params;
}

/** The sessions list, first page or a later one. */
export function listParams(limit: number, cursor: string | null): SessionsParams {
  return cursor ? { limit, cursor } : { limit };
}

/**
 * A session's events in file order: its first event and the `EVENTS_PAGE` after it; for a later
 * page (`after` = the last ref shown), the ones after that. Content is not wanted: a 1-character window.
 */
export function eventsParams(ref: string, later: boolean): ReadParams {
  return { ref, before: 0, after: later ? EVENTS_PAGE : EVENTS_PAGE - 1, order: 'append', length: 1 };
}

/** The view's title and description for a mode (a search says its query). */
export function viewTitle(mode: ViewMode): { title: string; description: string } {
  if (mode.kind === 'list') return { title: 'Pi Sessions', description: '' };
  const q = oneLine(mode.search.query).trim();
  return {
    title: q ? `Pi Sessions matching “${q}”` : 'Pi Sessions with matching events',
    description: mode.search.summary ?? '',
  };
}

/** The text above the rows, when there is something to say (nothing found, indexing). */
export function viewMessage(mode: ViewMode, count: number, indexingPercent: number | null): string {
  const indexing = indexingPercent !== null ? `Indexing: ${indexingPercent}% of the session files so far. ` : '';
  if (count > 0) return indexing.trim();
  if (mode.kind === 'list') return `${indexing}No Pi sessions recorded in this workspace.`;
  const q = oneLine(mode.search.query).trim();
  return `${indexing}No session has events matching ${q ? `“${q}”` : 'these filters'}.`;
}
