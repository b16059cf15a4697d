/**
 * A file's Pi history and the event that wrote a line (piEvents/fileHistory, piEvents/lineOrigin in
 * docs/protocol.md): wire shapes and the texts shown for them. Pure: no vscode, no I/O.
 */
import type { Hit } from './protocol';

export const FILE_METHODS = {
  fileHistory: 'piEvents/fileHistory',
  lineOrigin: 'piEvents/lineOrigin',
} as const;

export type FileRelation = 'file-changed' | 'file-read';

export interface FileHit extends Hit {
  relation: FileRelation;
  /** `derived` from a tool call's arguments, `recorded` in a summary's file lists. */
  label: 'recorded' | 'derived';
}

export interface FileCounts {
  changed: number;
  read: number;
}

export interface FileHistoryParams {
  uri: string;
  limit?: number;
  cursor?: string | null;
}

export interface FileHistoryResult {
  hits: FileHit[];
  nextCursor: string | null;
  counts: FileCounts;
}

export interface LineOriginResult {
  hit: FileHit | null;
  candidates: FileHit[];
  reason?: 'trivial' | 'unknown';
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The CodeLens at the top of a file Pi changed; undefined (no lens) for any other file. */
export function lensTitle(counts: FileCounts | undefined): string | undefined {
  if (!counts || counts.changed <= 0) return undefined;
  const read = counts.read > 0 ? ` · read in ${counts.read}` : '';
  return `Pi: changed in ${plural(counts.changed, 'event', 'events')}${read}`;
}

/** The history picker's title: the file and what happened to it. */
export function historyTitle(fileName: string, counts: FileCounts): string {
  if (counts.changed + counts.read === 0) return `Pi Events: History of ${fileName}`;
  const parts = [];
  if (counts.changed) parts.push(`changed in ${counts.changed}`);
  if (counts.read) parts.push(`read in ${counts.read}`);
  return `Pi Events: History of ${fileName} — ${parts.join(' · ')}`;
}

/** Section name of a history hit (the picker groups changes before reads, as the server orders). */
export function relationSection(relation: string): string {
  return relation === 'file-changed' ? 'Changed' : 'Read';
}

/** A short fact for the item's detail line: how the evidence is known. */
export function evidenceFact(hit: FileHit): string {
  const verb = hit.relation === 'file-changed' ? 'changed' : 'read';
  return hit.label === 'recorded' ? `${verb} (recorded in a summary)` : `${verb} (tool call)`;
}

/** What to say when no event is known to have written a line (plainly). */
export function noOriginMessage(result: LineOriginResult, line: number): string {
  if (result.reason === 'trivial') {
    return `Pi Events: line ${line + 1} is too short to tell (blank, a brace, or under 8 characters).`;
  }
  return `Pi Events: no Pi event is known to have written line ${line + 1}.`;
}

/** The status message after opening the event that wrote a line. */
export function originMessage(result: LineOriginResult, line: number): string {
  const older = result.candidates.length;
  const more = older ? ` (${older} older ${older === 1 ? 'event' : 'events'} wrote it too)` : '';
  return `Pi Events: line ${line + 1} was written by ${result.hit?.ref ?? 'nothing'}${more}.`;
}
