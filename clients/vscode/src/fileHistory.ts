/**
 * The open file's Pi history: "Pi Events: History of This File" (a picker in the style of the
 * search picker, changes before reads, Enter opens the read view), "Pi Events: Which Event Wrote
 * This Line", and a CodeLens at the top of files Pi changed. The lens asks the server once per file
 * (VS Code asks for lenses on every edit), so files Pi never touched cost one indexed lookup and
 * show nothing; when the index changes, the counts shown stay until new ones arrive (core/lensCounts).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ERRORS } from './core/protocol';
import {
  FILE_METHODS,
  type FileCounts,
  type FileHistoryParams,
  type FileHistoryResult,
  type FileHit,
  type LineOriginResult,
  evidenceFact,
  historyTitle,
  lensTitle,
  noOriginMessage,
  originMessage,
  relationSection,
} from './core/fileHistory';
import { LensCounts } from './core/lensCounts';
import { formatRef } from './core/refs';
import { type Row, ariaLabel, highlightStyle, hitRow, messageRow } from './core/hitRow';
import { shortenPath } from './core/render';
import { pathContext } from './python';
import { type ReadView, openSourceLine } from './readView';
import { type Server } from './server';
import { announceStep } from './steps';

interface Item extends vscode.QuickPickItem {
  hit?: FileHit;
  action?: 'more' | 'none';
}

const PAGE = 50;
const openSourceButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('go-to-file'), tooltip: 'Open the JSONL line' };
const copyButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('copy'), tooltip: 'Copy reference' };
const traceButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('type-hierarchy'), tooltip: 'Trace' };

/** The file a command means: its argument (explorer, editor title), else the active editor's. */
function fileOf(arg: unknown): vscode.Uri | undefined {
  const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
  return uri?.scheme === 'file' ? uri : undefined;
}

function errorText(err: unknown): string {
  const e = err as { message?: string };
  return e?.message ? String(e.message) : String(err);
}

export class FileHistory implements vscode.Disposable, vscode.CodeLensProvider {
  private readonly lensEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensEmitter.event;
  private readonly counts: LensCounts<FileCounts>;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly server: Server,
    private readonly reads: ReadView,
  ) {
    this.counts = new LensCounts<FileCounts>(
      async (uri) =>
        (await server.request<FileHistoryResult>(FILE_METHODS.fileHistory, { uri, limit: 1 } satisfies FileHistoryParams))
          .counts,
      () => this.lensEmitter.fire(),
      (a, b) => a?.changed === b?.changed && a?.read === b?.read,
    );
    this.disposables.push(
      this.lensEmitter,
      { dispose: () => this.counts.dispose() },
      vscode.languages.registerCodeLensProvider({ scheme: 'file' }, this),
      server.onIndexChanged(() => this.counts.stale()),
      server.onDidStart(() => this.counts.stale()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('piEvents.fileHistory.codeLens')) this.counts.clear();
      }),
    );
  }

  // -- CodeLens --------------------------------------------------------------------------------
  async provideCodeLenses(doc: vscode.TextDocument, token: vscode.CancellationToken): Promise<vscode.CodeLens[]> {
    if (!vscode.workspace.getConfiguration('piEvents').get<boolean>('fileHistory.codeLens', true)) return [];
    const key = doc.uri.toString();
    const title = lensTitle(await this.counts.get(key));
    if (!title || token.isCancellationRequested) return [];
    announceStep('codeLens', { uri: key, title });
    return [new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), { title, command: 'piEvents.fileHistory', arguments: [doc.uri] })];
  }

  // -- History picker ---------------------------------------------------------------------------
  async show(arg?: unknown): Promise<void> {
    const uri = fileOf(arg);
    if (!uri) {
      void vscode.window.showInformationMessage('Pi Events: open a file first (History of This File works on files on disk).');
      return;
    }
    const qp = vscode.window.createQuickPick<Item>();
    const name = path.basename(uri.fsPath);
    qp.title = `Pi Events: History of ${name}`;
    qp.placeholder = 'Filter the events that changed or read this file';
    qp.matchOnDescription = true;
    qp.matchOnDetail = true;
    qp.busy = true;
    let hits: FileHit[] = [];
    let cursor: string | null = null;
    let error: string | undefined;
    const load = async (more: boolean): Promise<void> => {
      qp.busy = true;
      try {
        const params: FileHistoryParams = { uri: uri.toString(), limit: PAGE };
        if (more && cursor) params.cursor = cursor;
        const r = await this.server.request<FileHistoryResult>(FILE_METHODS.fileHistory, params);
        hits = more ? [...hits, ...r.hits] : r.hits;
        cursor = r.nextCursor;
        qp.title = historyTitle(name, r.counts);
        error = undefined;
      } catch (err) {
        if ((err as { code?: number })?.code === ERRORS.staleCursor && more) return load(false);
        error = errorText(err);
      } finally {
        qp.busy = false;
      }
      qp.items = this.items(hits, cursor, error);
      announceStep('fileHistory', {
        uri: uri.toString(),
        refs: hits.map((h) => h.ref),
        relations: hits.map((h) => h.relation),
        rows: qp.items.filter((i) => i.kind !== vscode.QuickPickItemKind.Separator).map((i) => ariaLabel(i)),
        title: qp.title,
        error: error ?? null,
      });
    };
    qp.onDidAccept(async () => {
      const item = qp.activeItems[0];
      if (item?.action === 'more') return void load(true);
      if (!item?.hit) return;
      qp.hide();
      await this.reads.open(item.hit.ref);
    });
    qp.onDidTriggerItemButton(async ({ item, button }) => {
      const hit = item.hit;
      if (!hit) return;
      if (button === copyButton) {
        await vscode.env.clipboard.writeText(formatRef({ sessionId: hit.sessionId, entryId: hit.entryId }));
        void vscode.window.setStatusBarMessage(`Copied ${hit.ref}`, 3000);
        return;
      }
      qp.hide();
      if (button === openSourceButton) await openSourceLine(hit.source.uri, hit.source.line);
      else if (button === traceButton) await vscode.commands.executeCommand('piEvents.trace', hit.ref);
    });
    qp.onDidHide(() => qp.dispose());
    qp.show();
    await load(false);
  }

  private items(hits: FileHit[], cursor: string | null, error: string | undefined): Item[] {
    const now = Date.now();
    const style = highlightStyle(vscode.workspace.getConfiguration('piEvents').get<unknown>('search.highlight'));
    const ctx = pathContext();
    const shorten = (p: string): string => shortenPath(p, ctx.folders, ctx.home);
    const items: Item[] = [];
    let section = '';
    for (const hit of hits) {
      const name = relationSection(hit.relation);
      if (name !== section) {
        items.push({ label: name, kind: vscode.QuickPickItemKind.Separator });
        section = name;
      }
      const row = hitRow(hit, { now, style, shorten });
      items.push({ ...toItem({ ...row, description: `${row.description}, ${evidenceFact(hit)}` }), hit, buttons: [openSourceButton, copyButton, traceButton] });
    }
    if (error) items.push({ ...toItem(messageRow('error', error)), action: 'none', alwaysShow: true });
    else if (!hits.length) items.push({ ...toItem(messageRow('info', 'No Pi event changed or read this file')), action: 'none', alwaysShow: true });
    if (cursor) items.push({ ...toItem(messageRow('ellipsis', 'More events…')), action: 'more', alwaysShow: true });
    return items;
  }

  // -- Line origin ------------------------------------------------------------------------------
  async lineOrigin(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const uri = fileOf(undefined);
    if (!editor || !uri) {
      void vscode.window.showInformationMessage('Pi Events: put the cursor on a line of a file first.');
      return;
    }
    const line = editor.selection.active.line;
    let result: LineOriginResult;
    try {
      result = await this.server.request<LineOriginResult>(FILE_METHODS.lineOrigin, { uri: uri.toString(), line });
    } catch (err) {
      void vscode.window.showErrorMessage(`Pi Events: which event wrote this line failed: ${errorText(err)}`);
      return;
    }
    announceStep('lineOrigin', { uri: uri.toString(), line, hit: result.hit?.ref ?? null, candidates: result.candidates.map((c) => c.ref), reason: result.reason ?? null });
    if (!result.hit) {
      void vscode.window.showInformationMessage(noOriginMessage(result, line));
      return;
    }
    await this.reads.open(result.hit.ref);
    const message = originMessage(result, line);
    if (!result.candidates.length) {
      void vscode.window.setStatusBarMessage(message, 8000);
      return;
    }
    const choice = await vscode.window.showInformationMessage(message, 'Show Older Events');
    if (choice === 'Show Older Events') await this.pickCandidates(result.candidates);
  }

  private async pickCandidates(candidates: FileHit[]): Promise<void> {
    const ctx = pathContext();
    const shorten = (p: string): string => shortenPath(p, ctx.folders, ctx.home);
    const now = Date.now();
    const style = highlightStyle(vscode.workspace.getConfiguration('piEvents').get<unknown>('search.highlight'));
    const items = candidates.map((hit) => ({ ...toItem(hitRow(hit, { now, style, shorten })), hit }));
    const chosen = await vscode.window.showQuickPick(items, { title: 'Pi Events: older events that wrote this line', matchOnDescription: true });
    if (chosen) await this.reads.open(chosen.hit.ref);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** A row as a QuickPick item (the kind icon as iconPath; see core/hitRow for the empty label). */
function toItem(row: Row): Item {
  return { label: row.label, iconPath: new vscode.ThemeIcon(row.icon), description: row.description, detail: row.detail };
}
