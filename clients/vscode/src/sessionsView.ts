/**
 * The Sessions view (Explorer): every session of the workspace, newest first (`piEvents/sessions`),
 * or, after a search by session in the picker, that search's sessions in rank order with the query
 * in the view's title. A session's children are its events (in file order) or its matching events
 * (in rank order); clicking one opens its read view. Refreshes on piEvents/indexChanged. The rows
 * are made in core/sessionTree; here they become TreeItems, with plain-text labels and tooltips.
 */
import * as vscode from 'vscode';
import { ERRORS, type Hit, METHODS, type ReadResult, type SearchResult, isVisible } from './core/protocol';
import { shortenPath } from './core/render';
import { formatRef, parseRef } from './core/refs';
import {
  EVENTS_PAGE,
  SESSIONS_PAGE,
  type SessionSearch,
  type TreeRow,
  type ViewMode,
  eventsParams,
  groupParams,
  groupTreeRow,
  hitTreeRow,
  listParams,
  messageTreeRow,
  moreRow,
  nodeTreeRow,
  sessionHitsParams,
  sessionRow,
  viewMessage,
  viewTitle,
} from './core/sessionTree';
import { type GroupedSearchResult, SESSION_METHODS, type SessionGroup, type SessionInfo, type SessionsResult } from './core/sessions';
import { pathContext } from './python';
import { type ReadView, openSourceLine } from './readView';
import { type Server } from './server';
import { announceStep } from './steps';

export const VIEW_ID = 'piEvents.sessions';

interface Source {
  uri: string;
  line: number;
}

/** A row of the tree. Sessions keep their children (and where the next page starts) once loaded. */
export interface Element {
  row: TreeRow;
  parent?: Element;
  session?: SessionInfo | SessionGroup;
  source?: Source;
  children?: Element[];
  /** A session's next page: a search cursor (search mode) or the last event shown (list mode). */
  next?: string | null;
}

function errorText(err: unknown): string {
  const e = err as { message?: string };
  return e?.message ? String(e.message) : String(err);
}

const isStale = (err: unknown): boolean => (err as { code?: number })?.code === ERRORS.staleCursor;

export class SessionsView implements vscode.TreeDataProvider<Element>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Element | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<Element>;
  private readonly disposables: vscode.Disposable[] = [];
  private mode: ViewMode = { kind: 'list' };
  private roots: Element[] | undefined;
  private rootCursor: string | null = null;
  private indexing: number | null = null;
  private generation = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly server: Server,
    private readonly reads: ReadView,
  ) {
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: true });
    this.disposables.push(
      this.view,
      this.changed,
      server.onIndexChanged((e) => this.refreshSoon(e.indexing ? 3000 : 300)),
      server.onDidStart(() => this.refreshSoon(0)),
    );
    this.updateChrome();
  }

  // -- what is shown ---------------------------------------------------------------------------

  /** Shows a search by session (the picker's): its groups so far, and where its next page starts. */
  showSearch(search: SessionSearch, groups: readonly SessionGroup[], cursor: string | null, indexing: number | null): void {
    if (!search.query.trim() && !search.filters) return this.showList();
    this.generation++;
    this.mode = { kind: 'search', search };
    this.rootCursor = cursor;
    this.roots = this.withMore(groups.map((g) => this.groupElement(g)));
    this.indexing = indexing;
    this.updateChrome();
    this.announceRoots();
    this.changed.fire(undefined);
  }

  /** Back to the sessions list. */
  showList(): void {
    this.generation++;
    this.mode = { kind: 'list' };
    this.roots = undefined;
    this.rootCursor = null;
    this.updateChrome();
    this.changed.fire(undefined);
  }

  /** Asks again for what is shown (the same search, or the list), from the first page. */
  refresh(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.generation++;
    this.roots = undefined;
    this.rootCursor = null;
    this.changed.fire(undefined);
  }

  /** A refresh soon, unless one is already due sooner (index changes come in bursts while indexing). */
  private refreshSoon(delay: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refresh();
    }, delay);
  }

  private updateChrome(): void {
    const { title, description } = viewTitle(this.mode);
    this.view.title = title;
    this.view.description = description;
    const message = viewMessage(this.mode, this.roots ? this.roots.filter((r) => r.row.context !== 'piEvents.more').length : 1, this.indexing);
    this.view.message = message || undefined;
    void vscode.commands.executeCommand('setContext', 'piEvents.sessionsSearchActive', this.mode.kind === 'search');
  }

  private options(): { now: number; shorten: (p: string) => string } {
    const ctx = pathContext();
    return { now: Date.now(), shorten: (p) => shortenPath(p, ctx.folders, ctx.home) };
  }

  // -- TreeDataProvider -------------------------------------------------------------------------

  getTreeItem(el: Element): vscode.TreeItem {
    const r = el.row;
    const item = new vscode.TreeItem(
      r.highlights?.length ? { label: r.label, highlights: r.highlights } : r.label,
      r.expandable ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.id = r.id;
    item.description = r.description;
    item.tooltip = r.tooltip; // a string: shown as typed, never as Markdown
    item.iconPath = new vscode.ThemeIcon(r.icon);
    item.contextValue = r.context;
    item.accessibilityInformation = { label: r.aria };
    if (r.context === 'piEvents.event' && r.ref) {
      item.command = { command: 'piEvents.open', title: 'Open Event', arguments: [r.ref, 'append'] };
    } else if (r.context === 'piEvents.more') {
      item.command = { command: 'piEvents.sessions.more', title: 'Load More', arguments: [el] };
    }
    return item;
  }

  getParent(el: Element): Element | undefined {
    return el.parent;
  }

  async getChildren(el?: Element): Promise<Element[]> {
    if (!el) return this.rootElements();
    if (el.row.context !== 'piEvents.session') return [];
    if (!el.children) await this.loadEvents(el, false);
    return el.children ?? [];
  }

  private async rootElements(): Promise<Element[]> {
    if (this.roots) return this.roots;
    const generation = this.generation;
    const roots = await this.loadRoots(null);
    if (generation !== this.generation) return this.roots ?? [];
    this.roots = this.withMore(roots);
    this.updateChrome();
    this.announceRoots();
    return this.roots;
  }

  /** One page of sessions (the list, or the search by session); sets `rootCursor`. */
  private async loadRoots(cursor: string | null): Promise<Element[]> {
    try {
      if (this.mode.kind === 'list') {
        const r = await this.server.request<SessionsResult>(SESSION_METHODS.sessions, listParams(SESSIONS_PAGE, cursor));
        this.rootCursor = r.nextCursor ?? null;
        this.indexing = null;
        return r.sessions.map((s) => this.sessionElement(s));
      }
      const r = await this.server.request<GroupedSearchResult>(METHODS.search, groupParams(this.mode.search, SESSIONS_PAGE, cursor));
      this.rootCursor = r.nextCursor ?? null;
      this.indexing = r.indexing ? r.indexing.percent : null;
      return r.sessions.map((g) => this.groupElement(g));
    } catch (err) {
      if (cursor && isStale(err)) {
        void vscode.window.setStatusBarMessage('Pi Events: the index changed; sessions refreshed', 3000);
        this.refreshSoon(0);
        return [];
      }
      this.rootCursor = null;
      return [{ row: messageTreeRow('root', 'error', `Could not list the sessions: ${errorText(err)}`) }];
    }
  }

  /** The roots, with "More sessions…" at the end while there is a next page. */
  private withMore(roots: Element[]): Element[] {
    return this.rootCursor ? [...roots, { row: moreRow('root', 'sessions') }] : roots;
  }

  private sessionElement(s: SessionInfo): Element {
    const first = isVisible(s.first) ? s.first : undefined;
    return { row: sessionRow(s, this.options()), session: s, source: first?.source ? { uri: first.source.uri, line: first.source.line } : sessionFile(s) };
  }

  private groupElement(g: SessionGroup): Element {
    return { row: groupTreeRow(g, this.options()), session: g, source: { uri: g.top.source.uri, line: g.top.source.line } };
  }

  /** One page of a session's events into `el.children` (the first, or the next after "More…"). */
  private async loadEvents(el: Element, more: boolean): Promise<void> {
    const session = el.session;
    if (!session) return;
    const have = more ? (el.children ?? []).filter((c) => c.row.context === 'piEvents.event') : [];
    const opts = this.options();
    const generation = this.generation;
    let added: Element[] = [];
    let next: string | null = null;
    try {
      if (this.mode.kind === 'search') {
        const r = await this.server.request<SearchResult>(
          METHODS.search,
          sessionHitsParams(this.mode.search, session.sessionId, EVENTS_PAGE, more ? (el.next ?? null) : null),
        );
        added = r.hits.map((h) => this.hitElement(h, el, opts));
        next = r.nextCursor ?? null;
      } else {
        const info = session as SessionInfo;
        const start = more ? el.next : isVisible(info.first) ? info.first.ref : undefined;
        if (start) {
          const r = await this.server.request<ReadResult>(METHODS.read, eventsParams(start, more));
          const nodes = [...(more || !isVisible(info.first) ? [] : [info.first]), ...r.neighbours.after].filter(isVisible);
          added = nodes.map((n) => ({ row: nodeTreeRow(n, el.row.id, opts), parent: el, source: n.source ? { uri: n.source.uri, line: n.source.line } : undefined }));
          const asked = more ? EVENTS_PAGE : EVENTS_PAGE - 1;
          next = r.neighbours.after.length >= asked && nodes.length ? nodes[nodes.length - 1].ref : null;
        }
      }
    } catch (err) {
      if (more && isStale(err)) return this.loadEvents(el, false);
      el.children = [...have, { row: messageTreeRow(el.row.id, 'error', `Could not list its events: ${errorText(err)}`), parent: el }];
      el.next = null;
      return;
    }
    if (generation !== this.generation) return;
    const seen = new Set(have.map((c) => c.row.id));
    const children = [...have, ...added.filter((c) => !seen.has(c.row.id))];
    el.next = next;
    if (next) children.push({ row: moreRow(el.row.id, this.mode.kind === 'search' ? 'matches' : 'events'), parent: el });
    if (!children.length) children.push({ row: messageTreeRow(el.row.id, 'info', 'No events'), parent: el });
    el.children = children;
    announceStep('sessionEvents', {
      mode: this.mode.kind,
      sessionId: session.sessionId,
      refs: children.filter((c) => c.row.context === 'piEvents.event').map((c) => c.row.ref),
      rows: children.map((c) => c.row.aria),
      more: !!next,
    });
  }

  private hitElement(h: Hit, parent: Element, opts: { now: number; shorten: (p: string) => string }): Element {
    return { row: hitTreeRow(h, parent.row.id, opts), parent, source: { uri: h.source.uri, line: h.source.line } };
  }

  private announceRoots(): void {
    const roots = this.roots ?? [];
    announceStep('sessions', {
      mode: this.mode.kind,
      query: this.mode.kind === 'search' ? this.mode.search.query : null,
      title: this.view.title ?? '',
      sessions: roots.flatMap((r) => (r.session ? [r.session.sessionId] : [])),
      refs: roots.map((r) => r.row.ref ?? null),
      rows: roots.map((r) => r.row.aria),
      labels: roots.map((r) => r.row.label),
      // [matches, events] of a search's sessions; [events] of the list's.
      counts: roots.flatMap((r) => (r.session ? [countsOf(r.session)] : [])),
      nextCursor: this.rootCursor,
    });
  }

  // -- commands on rows -------------------------------------------------------------------------

  /** "More sessions…" / "More events…". */
  async more(el?: Element): Promise<void> {
    if (!el) return;
    const parent = el.parent;
    if (parent) {
      await this.loadEvents(parent, true);
      this.changed.fire(parent);
      return;
    }
    if (!this.rootCursor || !this.roots) return;
    const generation = this.generation;
    const page = await this.loadRoots(this.rootCursor);
    if (generation !== this.generation) return;
    const kept = this.roots.filter((r) => r.session);
    const seen = new Set(kept.map((r) => r.session?.sessionId));
    // Pages never repeat a session; if one did, its first place stays.
    this.roots = this.withMore([...kept, ...page.filter((r) => !r.session || !seen.has(r.session.sessionId))]);
    this.announceRoots();
    this.changed.fire(undefined);
  }

  /** Opens a session (its first event in the list, its strongest match in a search) or an event. */
  async open(el?: Element): Promise<void> {
    const ref = el?.row.ref;
    if (ref) await this.reads.open(ref);
  }

  async copyReference(el?: Element): Promise<void> {
    const parsed = el?.row.ref ? parseRef(el.row.ref) : undefined;
    if (!parsed) return;
    const text = formatRef(parsed);
    await vscode.env.clipboard.writeText(text);
    announceStep('copy', { text });
    void vscode.window.setStatusBarMessage(`Copied ${text}`, 3000);
  }

  async trace(el?: Element): Promise<void> {
    if (el?.row.ref) await vscode.commands.executeCommand('piEvents.trace', el.row.ref);
  }

  async openSource(el?: Element): Promise<void> {
    if (el?.source) await openSourceLine(el.source.uri, el.source.line);
  }

  /** Focuses the view and selects a session of the search shown. */
  async reveal(sessionId: string): Promise<void> {
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    const target = (this.roots ?? []).find((r) => r.session?.sessionId === sessionId);
    if (target) await this.view.reveal(target, { select: true, focus: true, expand: true });
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}

function countsOf(s: SessionInfo | SessionGroup): number[] {
  return 'matches' in s ? [s.matches, s.events] : [s.events];
}

/** A session's own file, at its header line. */
function sessionFile(s: SessionInfo): Source | undefined {
  const uri = s.uri ?? (s.path ? vscode.Uri.file(s.path).toString() : undefined);
  return uri ? { uri, line: 1 } : undefined;
}
