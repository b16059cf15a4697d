/**
 * Pi Events: Search. A QuickPick that asks piEvents/search on every (debounced) keystroke and
 * shows the hits in the server's order: every item is `alwaysShow` and has an empty label (see
 * core/hitRow), so VS Code hides and re-sorts nothing. A title bar toggle (remembered for the
 * window) searches by session instead (`groupBy: "session"`): one row per session, its strongest
 * event's snippet below; that search is also what the Sessions view then shows.
 */
import * as vscode from 'vscode';
import { type FilterState, NO_FILTERS, filterSummary, fromKeys, parseToolList, toWireFilters } from './core/filters';
import { ERRORS, type Hit, KINDS, METHODS, type SearchParams, type SearchResult } from './core/protocol';
import { type HighlightStyle, type Row, ariaLabel, correctionText, highlightStyle, hitRow, messageRow } from './core/hitRow';
import { shortenPath } from './core/render';
import { pathContext } from './python';
import { formatRef } from './core/refs';
import { announceStep } from './steps';
import { type ReadView, openSourceLine } from './readView';
import { type Server } from './server';
import { type GroupedSearchParams, type GroupedSearchResult, type SessionGroup, groupRow, mergeGroups } from './core/sessions';
import { type SessionSearch } from './core/sessionTree';

interface Item extends vscode.QuickPickItem {
  hit?: Hit;
  group?: SessionGroup;
  action?: 'more' | 'none';
}

export type SearchMode = 'events' | 'sessions';

/** Where a search by session goes besides the picker: the Sessions view. */
export interface SessionsSink {
  showSearch(search: SessionSearch, groups: readonly SessionGroup[], cursor: string | null, indexing: number | null): void;
  reveal(sessionId: string): Promise<void>;
}

const DEBOUNCE_MS = 150;
const COMMON_TOOLS = ['bash', 'read', 'edit', 'write', 'grep', 'find', 'ls'];

/** A query worth asking again settled: two words or more, the last still open (after a space the
 * server already reads it as finished). */
export function settles(text: string): boolean {
  return /\S$/.test(text) && text.trim().split(/\s+/).length >= 2;
}

const openSourceButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('go-to-file'), tooltip: 'Open the JSONL line (Ctrl+O)' };
const copyButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('copy'), tooltip: 'Copy reference' };
const traceButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('type-hierarchy'), tooltip: 'Trace' };
const revealButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('list-tree'), tooltip: 'Show in the Sessions view' };

export class Search implements vscode.Disposable {
  private picker: vscode.QuickPick<Item> | undefined;
  private value = '';
  private filters: FilterState = { ...NO_FILTERS };
  private hits: Hit[] = [];
  private groups: SessionGroup[] = [];
  /** Events or sessions: kept for the window (this object lives as long as the extension). */
  private mode: SearchMode = 'events';
  private cursor: string | null = null;
  private seq = 0;
  private cancel: vscode.CancellationTokenSource | undefined;
  private timer: NodeJS.Timeout | undefined;
  private settleTimer: NodeJS.Timeout | undefined;
  /** The rows are the settled order (their cursors too): pages are asked settled. */
  private settled = false;
  private loadingMore = false;
  private seenTools = new Set<string>(COMMON_TOOLS);

  constructor(
    private readonly server: Server,
    private readonly reads: ReadView,
    private readonly sessions?: SessionsSink,
  ) {}

  private get style(): HighlightStyle {
    return highlightStyle(vscode.workspace.getConfiguration('piEvents').get<unknown>('search.highlight'));
  }

  private get settleMs(): number {
    return vscode.workspace.getConfiguration('piEvents').get<number>('search.settleMs', 600);
  }

  private get pageSize(): number {
    return vscode.workspace.getConfiguration('piEvents').get<number>('search.pageSize', 30);
  }

  show(initial?: string, mode?: SearchMode): void {
    if (initial !== undefined) this.value = initial;
    if (mode) this.setMode(mode);
    const qp = vscode.window.createQuickPick<Item>();
    this.picker = qp;
    qp.matchOnDescription = false;
    // VS Code then marks where the typed text occurs in the snippet; it never reorders for it.
    qp.matchOnDetail = this.style === 'native';
    qp.keepScrollPosition = true;
    qp.value = this.value;
    this.updateChrome();
    qp.onDidChangeValue((v) => {
      this.value = v;
      this.schedule();
    });
    qp.onDidAccept(() => void this.accept());
    qp.onDidChangeActive((items) => {
      if (items[0]?.action === 'more') void this.loadMore();
    });
    qp.onDidTriggerButton((b) => void this.onButton(b));
    qp.onDidTriggerItemButton((e) => void this.onItemButton(e.item, e.button));
    qp.onDidHide(() => {
      if (this.settleTimer) clearTimeout(this.settleTimer);
      if (this.picker === qp) {
        this.picker = undefined;
        void vscode.commands.executeCommand('setContext', 'piEvents.searchVisible', false);
      }
      qp.dispose();
    });
    qp.show();
    void vscode.commands.executeCommand('setContext', 'piEvents.searchVisible', true);
    qp.busy = true;
    this.render();
    this.schedule(0);
  }

  private updateChrome(): void {
    const qp = this.picker;
    if (!qp) return;
    const summary = filterSummary(this.filters);
    const bySession = this.mode === 'sessions';
    // A corrected word goes in the title, not a row: Enter still takes the first hit.
    qp.title = `Pi Events: Search${bySession ? ' by session' : ''}${summary ? ` — ${summary}` : ''}${this.corrected ? ` — ${this.corrected}` : ''}`;
    qp.placeholder = bySession
      ? 'Search Pi sessions, one row per session: words and "quoted phrases" (empty: newest)'
      : 'Search Pi sessions: words and "quoted phrases" (empty: newest events)';
    const anyFilter = this.filters.kinds.length + this.filters.tools.length > 0;
    qp.buttons = [
      { iconPath: new vscode.ThemeIcon(bySession ? 'list-tree' : 'list-flat'), tooltip: `Group by session: ${bySession ? 'on' : 'off'}` },
      { iconPath: new vscode.ThemeIcon(anyFilter ? 'filter-filled' : 'filter'), tooltip: 'Filters: kind, tool, errors, branch…' },
      { iconPath: new vscode.ThemeIcon(this.filters.errors ? 'error' : 'circle-large-outline'), tooltip: `Errors only: ${this.filters.errors ? 'on' : 'off'}` },
      { iconPath: new vscode.ThemeIcon(this.filters.selectedBranch ? 'git-branch' : 'git-merge'), tooltip: `Selected branch only: ${this.filters.selectedBranch ? 'on' : 'off'}` },
    ];
  }

  private schedule(delay = DEBOUNCE_MS): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.timer = setTimeout(() => void this.run(), delay);
  }

  private setMode(mode: SearchMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    this.seq++; // an answer for the other mode is not shown
    this.hits = [];
    this.groups = [];
    this.cursor = null;
  }

  private params(cursor: string | null): SearchParams | GroupedSearchParams {
    const params: SearchParams = { query: this.value, limit: this.pageSize, prefixLast: true, ...(this.settled ? { settled: true } : {}) };
    const filters = toWireFilters(this.filters);
    if (filters) params.filters = filters;
    if (cursor) params.cursor = cursor;
    return this.mode === 'sessions' ? { ...params, groupBy: 'session' } : params;
  }

  /** What the Sessions view shows for the search by session the picker made. */
  private sessionSearch(): SessionSearch {
    const filters = toWireFilters(this.filters);
    const summary = filterSummary(this.filters);
    return { query: this.value, prefixLast: true, ...(filters ? { filters } : {}), ...(summary ? { summary } : {}) };
  }

  /** Takes an answer of either shape; `more` appends a page. */
  private take(result: SearchResult | GroupedSearchResult, more: boolean): void {
    if (this.mode === 'sessions' && 'sessions' in result) {
      const page = result.sessions ?? [];
      this.groups = more ? mergeGroups(this.groups, page) : page;
      this.hits = [];
      this.cursor = result.nextCursor ?? null;
      this.sessions?.showSearch(this.sessionSearch(), this.groups, this.cursor, result.indexing ? result.indexing.percent : null);
    } else {
      const hits = 'hits' in result ? (result.hits ?? []) : [];
      this.hits = more ? [...this.hits, ...hits] : hits;
      this.groups = [];
      this.cursor = result.nextCursor ?? null;
    }
    if (!more) this.corrected = correctionText(result);
  }

  /** Said in the title when a word of the query matched nothing and another was searched. */
  private corrected = '';

  private get shown(): number {
    return this.mode === 'sessions' ? this.groups.length : this.hits.length;
  }

  /** Page one of the query; `settle`: the same query again, its typing paused (see settleLater). */
  private async run(settle = false): Promise<void> {
    const qp = this.picker;
    if (!qp) return;
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.cancel?.cancel();
    const cts = new vscode.CancellationTokenSource();
    this.cancel = cts;
    const seq = ++this.seq;
    this.settled = settle;
    const params = this.params(null);
    qp.busy = true;
    try {
      const result = await this.server.request<SearchResult | GroupedSearchResult>(METHODS.search, params, cts.token);
      if (seq !== this.seq) return;
      this.take(result, false);
      this.error = undefined;
      if (!settle) this.settleLater(seq);
    } catch (err) {
      if (seq !== this.seq || cts.token.isCancellationRequested) return;
      this.hits = [];
      this.groups = [];
      this.cursor = null;
      this.corrected = '';
      this.error = errorText(err);
    } finally {
      if (seq === this.seq && this.picker === qp) qp.busy = false;
    }
    this.render(true);
  }

  private error: string | undefined;

  /** Once typing has paused `settleMs`, the query of two words or more once more, settled: the
   * server reads its best hits for their meaning. Not when a key came, the selection moved down
   * the list, or a page was added meanwhile. */
  private settleLater(seq: number): void {
    const ms = this.settleMs;
    if (ms <= 0 || !settles(this.value)) return;
    this.settleTimer = setTimeout(() => {
      const qp = this.picker;
      if (!qp || seq !== this.seq || this.loadingMore || this.shown > this.pageSize) return;
      const active = qp.activeItems[0];
      if (active && active !== qp.items[0]) return;
      void this.run(true);
    }, ms);
  }

  private async loadMore(): Promise<void> {
    const qp = this.picker;
    if (!qp || !this.cursor || this.loadingMore) return;
    this.loadingMore = true;
    const seq = this.seq;
    qp.busy = true;
    const before = this.shown;
    try {
      const result = await this.server.request<SearchResult | GroupedSearchResult>(METHODS.search, this.params(this.cursor));
      if (seq !== this.seq) return;
      this.take(result, true);
    } catch (err) {
      if (seq !== this.seq) return;
      if ((err as { code?: number })?.code === ERRORS.staleCursor) {
        void vscode.window.setStatusBarMessage('Pi Events: the index changed; results refreshed', 3000);
        this.loadingMore = false;
        void this.run();
        return;
      }
      this.error = errorText(err);
    } finally {
      this.loadingMore = false;
      if (this.picker === qp) qp.busy = false;
    }
    this.render(true);
    const first = this.picker?.items[before];
    if (this.picker && first) this.picker.activeItems = [first];
  }

  private render(log = false): void {
    const qp = this.picker;
    if (!qp) return;
    const now = Date.now();
    const style = this.style;
    const ctx = pathContext();
    const shorten = (p: string): string => shortenPath(p, ctx.folders, ctx.home);
    const bySession = this.mode === 'sessions';
    const items: Item[] = bySession
      ? this.groups.map((group) => ({
          ...toItem(groupRow(group, { now, style, shorten })),
          group,
          buttons: [openSourceButton, copyButton, traceButton, ...(this.sessions ? [revealButton] : [])],
        }))
      : this.hits.map((hit) => {
          if (hit.toolName) this.seenTools.add(hit.toolName);
          return { ...toItem(hitRow(hit, { now, style, shorten })), hit, buttons: [openSourceButton, copyButton, traceButton] };
        });
    if (this.error) items.push({ ...toItem(messageRow('error', this.error)), action: 'none' });
    else if (!this.shown && !qp.busy) items.push({ ...toItem(messageRow('info', bySession ? 'No sessions match' : 'No events match')), action: 'none' });
    if (this.cursor) items.push({ ...toItem(messageRow('ellipsis', bySession ? 'More sessions…' : 'More results…')), action: 'more' });
    qp.items = items;
    this.updateChrome();
    if (log) {
      announceStep('search', {
        mode: this.mode,
        query: this.value,
        settled: this.settled,
        filters: toWireFilters(this.filters) ?? null,
        refs: bySession ? this.groups.map((g) => g.top.ref) : this.hits.map((h) => h.ref),
        sessions: bySession ? this.groups.map((g) => g.sessionId) : null,
        rows: items.map((i) => ariaLabel(i)),
        nextCursor: this.cursor,
        title: qp.title ?? null,
        error: this.error ?? null,
      });
    }
  }

  private active(): Item | undefined {
    return this.picker?.activeItems[0] ?? this.picker?.selectedItems[0];
  }

  private async accept(): Promise<void> {
    const item = this.active();
    if (!item) return;
    if (item.action === 'more') return void this.loadMore();
    const hit = item.hit ?? item.group?.top;
    if (!hit) return;
    this.picker?.hide();
    await this.reads.open(hit.ref);
  }

  /** Ctrl+O (Cmd+O), or the item button: open the JSONL file at the entry's line. */
  async openSourceOfActive(): Promise<void> {
    const item = this.active();
    const hit = item?.hit ?? item?.group?.top;
    if (!hit) return;
    this.picker?.hide();
    await openSourceLine(hit.source.uri, hit.source.line);
  }

  private async onItemButton(item: Item, button: vscode.QuickInputButton): Promise<void> {
    // A session's row acts on its strongest event.
    const hit = item.hit ?? item.group?.top;
    if (!hit) return;
    if (button === revealButton && item.group) {
      this.picker?.hide();
      await this.sessions?.reveal(item.group.sessionId);
      return;
    }
    if (button === openSourceButton) {
      this.picker?.hide();
      await openSourceLine(hit.source.uri, hit.source.line);
    } else if (button === copyButton) {
      const text = formatRef({ sessionId: hit.sessionId, entryId: hit.entryId });
      await vscode.env.clipboard.writeText(text);
      announceStep('copy', { text });
      void vscode.window.setStatusBarMessage(`Copied ${hit.ref}`, 3000);
    } else if (button === traceButton) {
      this.picker?.hide();
      await vscode.commands.executeCommand('piEvents.trace', hit.ref);
    }
  }

  private async onButton(button: vscode.QuickInputButton): Promise<void> {
    const index = this.picker?.buttons.indexOf(button) ?? -1;
    if (index === 0) {
      this.setMode(this.mode === 'sessions' ? 'events' : 'sessions');
      if (this.picker) this.picker.busy = true;
      this.render();
    } else if (index === 2) this.filters = { ...this.filters, errors: !this.filters.errors };
    else if (index === 3) this.filters = { ...this.filters, selectedBranch: !this.filters.selectedBranch };
    else if (index === 1) {
      this.picker?.hide();
      await this.pickFilters();
      this.show();
      return;
    }
    this.updateChrome();
    this.schedule(0);
  }

  private async pickFilters(): Promise<void> {
    type FItem = vscode.QuickPickItem & { key?: string };
    const f = this.filters;
    const sep = (label: string): FItem => ({ label, kind: vscode.QuickPickItemKind.Separator });
    const tools = [...new Set([...this.seenTools, ...f.tools])].sort();
    const items: FItem[] = [
      sep('State'),
      { label: 'Errors only', description: 'failed tool results and bash runs', key: 'errors', picked: f.errors },
      { label: 'Selected branch only', description: 'branchState = selected', key: 'branch', picked: f.selectedBranch },
      sep('Kind'),
      ...KINDS.map((k) => ({ label: k, key: `kind:${k}`, picked: f.kinds.includes(k) })),
      sep('Tool'),
      ...tools.map((t) => ({ label: t, key: `tool:${t}`, picked: f.tools.includes(t) })),
      { label: 'Other tool…', key: 'tool?', alwaysShow: true },
    ];
    const chosen = await vscode.window.showQuickPick(items, {
      canPickMany: true,
      title: 'Pi Events: Search filters',
      placeHolder: 'Pick the filters to apply (none: everything)',
    });
    if (!chosen) return;
    const keys = chosen.map((c) => c.key ?? '');
    const next = fromKeys(keys);
    if (keys.includes('tool?')) {
      const extra = await vscode.window.showInputBox({ title: 'Tool names', prompt: 'Comma-separated tool names', placeHolder: 'web_search, my_tool' });
      next.tools = parseToolList(extra, next.tools);
      for (const t of next.tools) this.seenTools.add(t);
    }
    this.filters = next;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.cancel?.cancel();
    this.picker?.dispose();
  }
}

/** Every row is `alwaysShow`: the server decided what matches. */
function toItem(row: Row): Item {
  return { label: row.label, iconPath: new vscode.ThemeIcon(row.icon), description: row.description, detail: row.detail, alwaysShow: true };
}

function errorText(err: unknown): string {
  const e = err as { code?: number; message?: string };
  // The server's message says which limit: characters, or words and quoted phrases.
  if (e?.code === ERRORS.queryTooLong) return e.message ? String(e.message) : 'Query too long';
  return e?.message ? String(e.message) : String(err);
}
