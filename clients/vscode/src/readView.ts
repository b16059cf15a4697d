/**
 * The read view: a read-only virtual Markdown document per event (`pi-event:` URIs) rendered from
 * piEvents/read, with links on the references it shows, and stepping to neighbours.
 */
import * as vscode from 'vscode';
import { METHODS, type ReadParams, type ReadResult } from './core/protocol';
import { DEFAULT_LENGTH, MAX_LENGTH, type Order, type ReadTarget, parseReadUri, readUriString } from './core/readUri';
import { type EventRef, SCHEME, findRefs, formatRef, parseRef } from './core/refs';
import { hasMore, readMarkdown, stepTarget } from './core/render';
import { ReadPanel } from './readPanel';
import { announceStep } from './steps';
import { type Server } from './server';

export function targetOf(uri: vscode.Uri): ReadTarget | undefined {
  return parseReadUri(uri.scheme, uri.path, uri.query, uri.fragment);
}

export function readUri(target: ReadTarget): vscode.Uri {
  return vscode.Uri.parse(readUriString(target), true);
}

function readParams(target: ReadTarget, neighbours = 1): ReadParams {
  const params: ReadParams = { ref: formatRef(target.ref), before: neighbours, after: neighbours, order: target.order };
  if (target.ref.fragmentId) params.fragment = target.ref.fragmentId;
  if (target.length) params.length = target.length;
  return params;
}

export class ReadView implements vscode.TextDocumentContentProvider, vscode.DocumentLinkProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly results = new Map<string, ReadResult>();
  private readonly disposables: vscode.Disposable[] = [];
  readonly onDidChange = this.changed.event;
  /** The rendered view (a webview); the Markdown document stays one button away. */
  readonly panel: ReadPanel;

  constructor(private readonly server: Server) {
    this.panel = new ReadPanel(server, {
      openMarkdown: (target) => this.showMarkdown(target),
      revealSource: (uri, line) => openSourceLine(uri, line),
    });
    this.disposables.push(
      this.panel,
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this),
      vscode.languages.registerDocumentLinkProvider({ scheme: SCHEME }, this),
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (d.uri.scheme === SCHEME) this.results.delete(d.uri.toString());
      }),
      server.onIndexChanged((e) => {
        if (e.indexing) return;
        for (const d of vscode.workspace.textDocuments) if (d.uri.scheme === SCHEME) this.changed.fire(d.uri);
      }),
    );
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const target = targetOf(uri);
    if (!target) return `# Not an event reference\n\n\`${uri.toString()}\`\n`;
    try {
      const result = await this.server.request<ReadResult>(METHODS.read, readParams(target), token);
      this.results.set(uri.toString(), result);
      announceStep('read', { uri: uri.toString(true), ref: result.event.ref, line: result.source.line, more: hasMore(result) });
      return readMarkdown(result, { now: Date.now() });
    } catch (err) {
      const message = String((err as Error)?.message ?? err);
      announceStep('readError', { uri: uri.toString(true), message });
      return `# ${formatRef(target.ref)}\n\nCould not read this event: ${message}\n`;
    }
  }

  provideDocumentLinks(doc: vscode.TextDocument): vscode.DocumentLink[] {
    const links: vscode.DocumentLink[] = [];
    const current = targetOf(doc.uri);
    for (let i = 0; i < doc.lineCount; i++) {
      for (const r of findRefs(doc.lineAt(i).text)) {
        const arg = encodeURIComponent(JSON.stringify([formatRef(r, true), current?.order ?? 'append']));
        const link = new vscode.DocumentLink(new vscode.Range(i, r.start, i, r.end), vscode.Uri.parse(`command:piEvents.open?${arg}`));
        link.tooltip = 'Open this event';
        links.push(link);
      }
    }
    return links;
  }

  /** The cached answer for an open view, else a fresh read. */
  async result(uri: vscode.Uri): Promise<ReadResult | undefined> {
    const cached = this.results.get(uri.toString());
    if (cached) return cached;
    const target = targetOf(uri);
    if (!target) return undefined;
    return this.server.request<ReadResult>(METHODS.read, readParams(target));
  }

  async open(ref: EventRef | string, order: Order = 'append', options: vscode.TextDocumentShowOptions = {}): Promise<vscode.TextEditor | undefined> {
    const parsed = typeof ref === 'string' ? parseRef(ref) : ref;
    if (!parsed) {
      void vscode.window.showErrorMessage(`Pi Events: not an event reference: ${typeof ref === 'string' ? ref : formatRef(ref)}`);
      return undefined;
    }
    if (vscode.workspace.getConfiguration('piEvents').get<string>('read.view') !== 'markdown') {
      await this.panel.show({ ref: parsed, order });
      return undefined;
    }
    return this.showMarkdown({ ref: parsed, order }, options);
  }

  /** The event's Markdown document in a text editor. */
  async showMarkdown(target: ReadTarget, options: vscode.TextDocumentShowOptions = {}): Promise<vscode.TextEditor> {
    const uri = readUri(target);
    let doc = await vscode.workspace.openTextDocument(uri);
    if (doc.languageId !== 'markdown') doc = await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    const editor = await vscode.window.showTextDocument(doc, { preview: true, ...options });
    announceStep('openRead', { uri: uri.toString(true) });
    return editor;
  }

  /** Steps to the previous/next event of the active read view in `order`. */
  async step(direction: 'previous' | 'next', order: Order): Promise<void> {
    if (this.panel.activeTarget()) return this.panel.step(direction, order);
    const uri = vscode.window.activeTextEditor?.document.uri;
    const target = uri && targetOf(uri);
    if (!uri || !target) {
      void vscode.window.showInformationMessage('Pi Events: open an event first (Pi Events: Search).');
      return;
    }
    const result =
      target.order === order
        ? await this.result(uri)
        : await this.server.request<ReadResult>(METHODS.read, readParams({ ...target, order }));
    const next = result && stepTarget(result, direction);
    if (!next) {
      const fork = direction === 'next' && result?.neighbours.stoppedAtFork ? ' (unresolved fork: pick an alternative in the view)' : '';
      void vscode.window.showInformationMessage(`Pi Events: no ${direction} event in ${order} order${fork}.`);
      return;
    }
    await this.open(next, order);
  }

  /** Reopens the view with a window 10 times wider (up to the server's maximum). */
  async showMore(uri: vscode.Uri): Promise<void> {
    const target = targetOf(uri);
    const result = target && (await this.result(uri));
    if (!target || !result) return;
    const length = target.length ?? DEFAULT_LENGTH;
    if (!hasMore(result) || length >= MAX_LENGTH) {
      void vscode.window.showInformationMessage(
        hasMore(result) ? `Pi Events: the view already shows the maximum (${MAX_LENGTH} characters per fragment).` : 'Pi Events: nothing was cut.',
      );
      return;
    }
    const wider = readUri({ ...target, length: Math.min(MAX_LENGTH, length * 10) });
    let doc = await vscode.workspace.openTextDocument(wider);
    if (doc.languageId !== 'markdown') doc = await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    await vscode.window.showTextDocument(doc, { preview: true });
    announceStep('openRead', { uri: wider.toString(true) });
  }

  async revealSource(uri: vscode.Uri): Promise<void> {
    const result = await this.result(uri);
    if (!result) return;
    await openSourceLine(result.source.uri, result.source.line);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

/** Opens a JSONL file at a 1-based line and selects that line. */
export async function openSourceLine(uri: string, line: number, options: vscode.TextDocumentShowOptions = {}): Promise<vscode.TextEditor> {
  const pos = new vscode.Position(Math.max(0, line - 1), 0);
  const editor = await vscode.window.showTextDocument(vscode.Uri.parse(uri, true), {
    preview: true,
    ...options,
    selection: new vscode.Range(pos, pos),
  });
  editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenter);
  announceStep('openSource', { uri, line });
  return editor;
}
