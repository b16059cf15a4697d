/**
 * The rendered read view (piEvents.read.view = "rendered", the default): the event as a page in
 * a webview panel, reused like a preview tab, from the same piEvents/read answer as the Markdown
 * view; a trace shows in the same panel. The page (core/readHtml.ts) only posts messages; this class acts on them: open a
 * reference, step to a neighbour, trace, reveal the source line, copy, show more.
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { METHODS, type ReadParams, type ReadResult, type TraceResult } from './core/protocol';
import { type ReadMessage, errorHtml, isReadMessage, readHtml, traceHtml } from './core/readHtml';
import { DEFAULT_LENGTH, MAX_LENGTH, type Order, type ReadTarget } from './core/readUri';
import { type EventRef, formatRef, parseRef } from './core/refs';
import { hasMore, stepTarget } from './core/render';
import { announceStep } from './steps';
import { type Server } from './server';

export const VIEW_TYPE = 'piEvents.read';

function readParams(target: ReadTarget): ReadParams {
  const params: ReadParams = { ref: formatRef(target.ref), before: 1, after: 1, order: target.order };
  if (target.ref.fragmentId) params.fragment = target.ref.fragmentId;
  if (target.length) params.length = target.length;
  return params;
}

export interface ReadPanelHost {
  /** Opens the Markdown source view of the same event. */
  openMarkdown(target: ReadTarget): Promise<unknown>;
  revealSource(uri: string, line: number): Promise<unknown>;
}

export class ReadPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private target: ReadTarget | undefined;
  private result: ReadResult | undefined;

  constructor(
    private readonly server: Server,
    private readonly host: ReadPanelHost,
  ) {}

  /** Shows `target` in the panel (made or revealed), read fresh from the server. */
  async show(target: ReadTarget): Promise<void> {
    const panel = this.ensurePanel();
    this.target = target;
    this.result = undefined;
    const ref = formatRef(target.ref);
    const page = { now: Date.now(), nonce: randomBytes(16).toString('base64'), cspSource: panel.webview.cspSource };
    try {
      const result = await this.server.request<ReadResult>(METHODS.read, readParams(target));
      if (this.target !== target) return; // a newer show() won
      this.result = result;
      panel.title = `Event ${result.event.entryId}`;
      panel.webview.html = readHtml(result, page);
      announceStep('read', { uri: ref, ref: result.event.ref, line: result.source.line, more: hasMore(result), view: 'rendered' });
    } catch (err) {
      const message = String((err as Error)?.message ?? err);
      panel.webview.html = errorHtml(ref, message, page);
      announceStep('readError', { uri: ref, message, view: 'rendered' });
    }
    announceStep('openRead', { uri: ref, view: 'rendered' });
  }

  /** The trace of `ref` as a page in the same panel; its events link to their read pages. */
  showTrace(ref: EventRef, trace: TraceResult): void {
    const panel = this.ensurePanel();
    this.target = { ref, order: 'append' };
    this.result = undefined;
    panel.title = `Trace ${ref.entryId}`;
    panel.webview.html = traceHtml(trace, formatRef(ref), {
      now: Date.now(),
      nonce: randomBytes(16).toString('base64'),
      cspSource: panel.webview.cspSource,
    });
    announceStep('trace', { ref: formatRef(ref), view: 'rendered' });
  }

  /** The event shown when the panel is the active editor. */
  activeTarget(): ReadTarget | undefined {
    return this.panel?.active ? this.target : undefined;
  }

  /** Steps to the previous/next event in `order` (the keys and buttons of the page, the commands). */
  async step(direction: 'previous' | 'next', order: Order): Promise<void> {
    const target = this.target;
    if (!target) return;
    const result =
      target.order === order && this.result ? this.result : await this.server.request<ReadResult>(METHODS.read, readParams({ ...target, order }));
    const next = stepTarget(result, direction);
    const ref = next ? parseRef(next) : undefined;
    if (!ref) {
      void vscode.window.showInformationMessage(`Pi Events: no ${direction} event in ${order} order.`);
      return;
    }
    await this.show({ ref, order });
  }

  private ensurePanel(): vscode.WebviewPanel {
    if (this.panel) {
      if (!this.panel.visible) this.panel.reveal(undefined, false);
      return this.panel;
    }
    const panel = vscode.window.createWebviewPanel(VIEW_TYPE, 'Pi Event', vscode.ViewColumn.Active, {
      // The page's own nonce'd script; no local resources at all.
      enableScripts: true,
      localResourceRoots: [],
      enableFindWidget: true,
      retainContextWhenHidden: false,
    });
    panel.onDidDispose(() => {
      this.panel = undefined;
      this.target = undefined;
      this.result = undefined;
    });
    panel.webview.onDidReceiveMessage((m: unknown) => {
      if (isReadMessage(m)) void this.handle(m);
    });
    this.panel = panel;
    return panel;
  }

  private async handle(m: ReadMessage): Promise<void> {
    const target = this.target;
    if (m.type === 'open') {
      const ref = parseRef(m.ref);
      if (ref) await this.show({ ref, order: m.order });
      return;
    }
    if (m.type === 'step') return this.step(m.direction, m.order);
    if (m.type === 'file') {
      await vscode.window.showTextDocument(vscode.Uri.file(m.path), { preview: true });
      return;
    }
    if (!target) return;
    switch (m.action) {
      case 'trace':
        await vscode.commands.executeCommand('piEvents.trace', formatRef(target.ref));
        return;
      case 'copy':
        await vscode.commands.executeCommand('piEvents.copyReference', formatRef(target.ref));
        return;
      case 'source':
        if (this.result) await this.host.revealSource(this.result.source.uri, this.result.source.line);
        return;
      case 'markdown':
        await this.host.openMarkdown(target);
        return;
      case 'more': {
        const length = target.length ?? DEFAULT_LENGTH;
        if (length < MAX_LENGTH) await this.show({ ...target, length: Math.min(MAX_LENGTH, length * 10) });
        return;
      }
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
