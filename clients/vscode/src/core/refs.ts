/**
 * `pi-event:` references (docs/protocol.md, "Event references"): parse, format, find in text.
 * Pure: no vscode import. Tested against the shared vectors in tests/data/ref-vectors.json.
 */

export interface EventRef {
  sessionId: string;
  entryId: string;
  fragmentId?: string;
}

export const SCHEME = 'pi-event';

const SESSION = '[A-Za-z0-9][A-Za-z0-9._-]*';
const ENTRY = '[A-Za-z0-9][A-Za-z0-9._~-]*';
const FRAGMENT = '[a-z.]+:[0-9]+';

const EXACT = new RegExp(`^${SCHEME}:(${SESSION})/(${ENTRY})(?:#(${FRAGMENT}))?$`);
/** References inside free text: not glued to an id character before them (`xpi-event:` is a word). */
const IN_TEXT = new RegExp(`(?<![A-Za-z0-9._~-])${SCHEME}:(${SESSION})/(${ENTRY})(?:#(${FRAGMENT}))?`, 'g');

/** Trailing `.`, `-` and `~` are sentence punctuation, not part of an id ("see pi-event:S/E."). */
function trimSentenceEnd(id: string): string {
  return id.replace(/[.~-]+$/, '');
}

export function parseRef(text: string): EventRef | undefined {
  const m = EXACT.exec(text.trim());
  if (!m) return undefined;
  const ref: EventRef = { sessionId: m[1], entryId: m[2] };
  if (m[3]) ref.fragmentId = m[3];
  return ref;
}

export function formatRef(ref: EventRef, withFragment = false): string {
  const base = `${SCHEME}:${ref.sessionId}/${ref.entryId}`;
  return withFragment && ref.fragmentId ? `${base}#${ref.fragmentId}` : base;
}

export interface FoundRef extends EventRef {
  /** UTF-16 offsets into the searched text, [start, end). */
  start: number;
  end: number;
  text: string;
}

export function findRefs(text: string): FoundRef[] {
  const found: FoundRef[] = [];
  for (const m of text.matchAll(IN_TEXT)) {
    const start = m.index ?? 0;
    let entryId = m[2];
    const fragmentId = m[3];
    let raw = m[0];
    if (!fragmentId) {
      const trimmed = trimSentenceEnd(entryId);
      if (trimmed !== entryId) {
        raw = raw.slice(0, raw.length - (entryId.length - trimmed.length));
        entryId = trimmed;
      }
    }
    const ref: FoundRef = { sessionId: m[1], entryId, start, end: start + raw.length, text: raw };
    if (fragmentId) ref.fragmentId = fragmentId;
    found.push(ref);
  }
  return found;
}

/** The reference covering `column` (UTF-16) in `line`, if any (the end position counts). */
export function refAt(line: string, column: number): FoundRef | undefined {
  return findRefs(line).find((r) => column >= r.start && column <= r.end);
}
