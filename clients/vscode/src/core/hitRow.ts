/**
 * The rows of the search picker. Each row reads the way a person would say it: kind, time,
 * session (the description), then the snippet (the detail); a screen reader gets the same
 * words, because VS Code builds a row's aria-label from label, description and detail.
 *
 * The label is empty (the kind's icon is the item's `iconPath`): VS Code's QuickPick moves
 * items whose label matches the typed text to the top and sorts them, and an extension cannot
 * turn that off (`sortByLabel` is proposed API in VS Code 1.100). An empty label matches
 * nothing, and all empty labels compare equal, so the server's order is kept as sent.
 * Pure: no vscode import.
 */
import { type DidYouMean, type Hit } from './protocol';
import { kindIcon, kindTitle, relativeTime } from './render';

/**
 * How the matched text is shown. `native`: VS Code marks where the typed text occurs in the
 * snippet (matchOnDetail), plain characters only. `brackets`: ⟦…⟧ around the server's matches.
 * `bold`: Mathematical Sans-Serif Bold letters (opt-in: screen readers spell them out).
 */
export type HighlightStyle = 'native' | 'brackets' | 'bold' | 'none';

export const HIGHLIGHT_STYLES: readonly HighlightStyle[] = ['native', 'brackets', 'bold', 'none'];

export function highlightStyle(value: unknown): HighlightStyle {
  return HIGHLIGHT_STYLES.includes(value as HighlightStyle) ? (value as HighlightStyle) : 'native';
}

export interface Row {
  /** Always empty: see the module comment. */
  label: '';
  /** A codicon name, for `iconPath: new ThemeIcon(icon)`. */
  icon: string;
  description: string;
  detail: string;
}

// ---------------------------------------------------------------------------------------------
// Time, in words a screen reader says well ("3 hours ago", not "3 h ago")

export function spokenTime(timestamp: string | null | undefined, now: number): string {
  return relativeTime(timestamp, now, true);
}

// ---------------------------------------------------------------------------------------------
// Highlights

function boldChar(ch: string): string {
  const c = ch.codePointAt(0) ?? 0;
  if (c >= 0x41 && c <= 0x5a) return String.fromCodePoint(0x1d5d4 + c - 0x41); // sans-serif bold A-Z
  if (c >= 0x61 && c <= 0x7a) return String.fromCodePoint(0x1d5ee + c - 0x61); // a-z
  if (c >= 0x30 && c <= 0x39) return String.fromCodePoint(0x1d7ec + c - 0x30); // 0-9
  return ch;
}

/** Maps the bold letters of `highlight(.., 'bold')` back to ASCII. */
export function unbold(text: string): string {
  return Array.from(text)
    .map((ch) => {
      const c = ch.codePointAt(0) ?? 0;
      if (c >= 0x1d5d4 && c < 0x1d5d4 + 26) return String.fromCharCode(0x41 + c - 0x1d5d4);
      if (c >= 0x1d5ee && c < 0x1d5ee + 26) return String.fromCharCode(0x61 + c - 0x1d5ee);
      if (c >= 0x1d7ec && c < 0x1d7ec + 10) return String.fromCharCode(0x30 + c - 0x1d7ec);
      return ch;
    })
    .join('');
}

/** Normalised, sorted, merged, clamped code point ranges. */
export function normaliseRanges(matches: readonly [number, number][] | undefined, length: number): [number, number][] {
  const ranges = (matches ?? [])
    .filter((m) => Array.isArray(m) && m.length === 2 && Number.isInteger(m[0]) && Number.isInteger(m[1]))
    .map(([s, e]): [number, number] => [Math.max(0, Math.min(s, length)), Math.max(0, Math.min(e, length))])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}

/** The snippet with its `matches` (code point ranges) marked in the chosen style. */
export function highlight(snippet: string, matches: readonly [number, number][] | undefined, style: HighlightStyle): string {
  const chars = Array.from(snippet);
  const ranges = normaliseRanges(matches, chars.length);
  if (style === 'none' || style === 'native' || !ranges.length) return snippet;
  let out = '';
  let pos = 0;
  for (const [s, e] of ranges) {
    out += chars.slice(pos, s).join('');
    const part = chars.slice(s, e);
    out += style === 'bold' ? part.map(boldChar).join('') : `⟦${part.join('')}⟧`;
    pos = e;
  }
  return out + chars.slice(pos).join('');
}

/**
 * Keeps `$(name)` in free text from being drawn as an icon: VS Code's own escape (a backslash,
 * which it does not draw). Only what VS Code would take for an icon is touched.
 */
export function escapeIcons(text: string): string {
  return text.replace(/\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g, '\\$($1)');
}

/** One line of text: newlines and tabs become spaces (the picker shows one line per field). */
function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, ' ');
}

// ---------------------------------------------------------------------------------------------
// Rows

export interface RowOptions {
  now: number;
  style: HighlightStyle;
  /** Shortens the cwd for display (see render `shortenPath`). */
  shorten?: (path: string) => string;
}

/**
 * A partial hit (it lacks some query words: ranked relaxation) says so right after its kind, in
 * words: "partial, missing bug". Empty for a hit holding every word.
 */
export function partialNote(hit: Pick<Hit, 'missing'>): string {
  const missing = hit.missing ?? [];
  return missing.length ? `partial, missing ${missing.join(', ')}` : '';
}

/** The picker's word on a corrected query: "searched for reconnect (no event holds recconect)". */
export function correctionText(result: { didYouMean?: DidYouMean | null }): string {
  const d = result.didYouMean;
  if (!d?.corrections.length) return '';
  return `Searched for "${d.query}": no event holds ${d.corrections.map((c) => `"${c.word}"`).join(', ')}`;
}

/** "Tool result: bash (error), 3 hours ago, fix the build (proj), alternate branch". */
export function hitRow(hit: Hit, opts: RowOptions): Row {
  const short = (p: string): string => (opts.shorten ? opts.shorten(p) : p);
  const cwd = hit.cwd ? short(hit.cwd) : '';
  const session = hit.sessionName ? `${hit.sessionName}${cwd ? ` (${cwd})` : ''}` : cwd || hit.sessionId;
  const parts = [kindTitle(hit.kind, hit.toolName, hit.isError), partialNote(hit), spokenTime(hit.timestamp, opts.now), session];
  if (hit.branchState && hit.branchState !== 'selected') parts.push(`${hit.branchState} branch`);
  if (hit.selectionState && hit.selectionState !== 'direct' && hit.selectionState !== 'not-applicable') {
    parts.push(hit.selectionState.replace(/-/g, ' '));
  }
  return {
    label: '',
    icon: kindIcon(hit.kind, hit.isError),
    description: escapeIcons(oneLine(parts.filter(Boolean).join(', '))),
    detail: escapeIcons(oneLine(highlight(hit.snippet ?? '', hit.matches, opts.style))),
  };
}

/** A row that is not a hit ("More results…", "No events match", an error). */
export function messageRow(icon: string, text: string): Row {
  return { label: '', icon, description: escapeIcons(oneLine(text)), detail: '' };
}

/** What VS Code gives a row as its aria-label (label, description, detail; empty ones left out). */
export function ariaLabel(row: { label: string; description?: string; detail?: string }): string {
  return [row.label, row.description ?? '', row.detail ?? '']
    .map((s) => s.replace(/\$\((.*?)\)/g, (_m, name: string) => ` ${name} `).trim())
    .filter(Boolean)
    .join(', ');
}
