/**
 * The search picker's filters (kind, tool, errors only, selected branch only) -> the wire
 * `filters` object of piEvents/search, and a one-line summary for the picker's title. Pure.
 */
import type { SearchFilters } from './protocol';

export interface FilterState {
  kinds: string[];
  tools: string[];
  errors: boolean;
  selectedBranch: boolean;
}

export const NO_FILTERS: FilterState = { kinds: [], tools: [], errors: false, selectedBranch: false };

/** Only what is set; undefined when nothing is, so the request carries no `filters`. */
export function toWireFilters(f: FilterState): SearchFilters | undefined {
  const out: SearchFilters = {};
  if (f.kinds.length) out.kind = [...f.kinds];
  if (f.tools.length) out.tool = [...f.tools];
  if (f.errors) out.errors = true;
  if (f.selectedBranch) out.branchState = ['selected'];
  return Object.keys(out).length ? out : undefined;
}

export function filterSummary(f: FilterState): string {
  const bits: string[] = [];
  if (f.errors) bits.push('errors only');
  if (f.selectedBranch) bits.push('selected branch');
  if (f.kinds.length) bits.push(`kind: ${f.kinds.join(', ')}`);
  if (f.tools.length) bits.push(`tool: ${f.tools.join(', ')}`);
  return bits.join(' · ');
}

/** The filter picker's keys (`errors`, `branch`, `kind:<k>`, `tool:<t>`) -> state. */
export function fromKeys(keys: readonly string[]): FilterState {
  return {
    errors: keys.includes('errors'),
    selectedBranch: keys.includes('branch'),
    kinds: keys.filter((k) => k.startsWith('kind:')).map((k) => k.slice(5)),
    tools: keys.filter((k) => k.startsWith('tool:')).map((k) => k.slice(5)),
  };
}

/** Comma-separated tool names typed by the user, trimmed, without duplicates or blanks. */
export function parseToolList(text: string | undefined, existing: readonly string[] = []): string[] {
  const out = [...existing];
  for (const t of (text ?? '').split(',').map((s) => s.trim())) {
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}
