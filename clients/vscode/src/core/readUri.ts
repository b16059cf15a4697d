/**
 * The read view's URIs: `pi-event:<sessionId>/<entryId>[?order=branch&length=N]`[#<fragmentId>].
 * Pure string handling; the extension wraps the result with vscode.Uri.parse.
 */
import { type EventRef, SCHEME, formatRef, parseRef } from './refs';

export type Order = 'append' | 'branch';

export interface ReadTarget {
  ref: EventRef;
  order: Order;
  /** Window size in code points (default 4000 on the server). */
  length?: number;
}

export const DEFAULT_LENGTH = 4000;
export const MAX_LENGTH = 100000;

export function readUriString(target: ReadTarget): string {
  const q = new URLSearchParams();
  if (target.order !== 'append') q.set('order', target.order);
  if (target.length && target.length !== DEFAULT_LENGTH) q.set('length', String(target.length));
  const query = q.toString();
  const fragment = target.ref.fragmentId ? `#${target.ref.fragmentId}` : '';
  return `${formatRef(target.ref)}${query ? `?${query}` : ''}${fragment}`;
}

/** From the parts of a parsed URI (path without a leading slash is accepted either way). */
export function parseReadUri(scheme: string, path: string, query: string, fragment: string): ReadTarget | undefined {
  if (scheme !== SCHEME) return undefined;
  const ref = parseRef(`${SCHEME}:${path.replace(/^\//, '')}${fragment ? `#${fragment}` : ''}`);
  if (!ref) return undefined;
  const q = new URLSearchParams(query);
  const order: Order = q.get('order') === 'branch' ? 'branch' : 'append';
  const target: ReadTarget = { ref, order };
  const length = Number(q.get('length'));
  if (Number.isInteger(length) && length > 0) target.length = Math.min(length, MAX_LENGTH);
  return target;
}
