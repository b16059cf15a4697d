/**
 * Pi Events: Trace. The parent, children, siblings, relations, files and lineage of an event,
 * as a QuickPick with one section each; choosing an event opens its read view.
 */
import * as vscode from 'vscode';
import { type EventAtParams, type EventAtResult, METHODS, type TraceResult } from './core/protocol';
import { type EventRef, formatRef, parseRef, refAt } from './core/refs';
import { traceEntries, type TraceEntry } from './core/render';
import { escapeIcons } from './core/hitRow';
import { announceStep } from './steps';
import { type ReadView, openSourceLine, targetOf } from './readView';
import { type Server } from './server';

/**
 * The event the user means: the read view's, the reference under the cursor, or the event at the
 * cursor's line of a session JSONL file (asked of the server, which names entries as its index does).
 */
export async function eventAtCursor(server: Server, editor: vscode.TextEditor | undefined): Promise<EventRef | undefined> {
  if (!editor) return undefined;
  const doc = editor.document;
  const fromView = targetOf(doc.uri);
  if (fromView) return fromView.ref;
  const pos = editor.selection.active;
  const atCursor = refAt(doc.lineAt(pos.line).text, pos.character);
  if (atCursor) return atCursor;
  if (doc.uri.scheme !== 'file' || !(doc.uri.path.endsWith('.jsonl') || doc.languageId === 'jsonl')) return undefined;
  const params: EventAtParams = { uri: doc.uri.toString(), line: pos.line };
  try {
    const found = await server.request<EventAtResult>(METHODS.eventAt, params);
    return found.ref === null ? undefined : { sessionId: found.sessionId, entryId: found.entryId };
  } catch {
    return undefined; // no server yet: the caller asks for a reference instead
  }
}

interface Item extends vscode.QuickPickItem {
  entry?: TraceEntry;
}

const openButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('go-to-file'), tooltip: 'Open the JSONL line' };
const retraceButton: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('type-hierarchy'), tooltip: 'Trace this event' };

export class Trace {
  constructor(
    private readonly server: Server,
    private readonly reads: ReadView,
  ) {}

  async run(arg?: unknown): Promise<void> {
    let ref: EventRef | undefined =
      typeof arg === 'string' ? parseRef(arg) : arg instanceof vscode.Uri ? targetOf(arg)?.ref : undefined;
    ref ??= await eventAtCursor(this.server, vscode.window.activeTextEditor);
    if (!ref) {
      const typed = await vscode.window.showInputBox({
        title: 'Pi Events: Trace',
        prompt: 'No event at the cursor. Event reference:',
        placeHolder: 'pi-event:<sessionId>/<entryId>',
        validateInput: (v) => (parseRef(v) ? undefined : 'pi-event:<sessionId>/<entryId>'),
      });
      ref = typed ? parseRef(typed) : undefined;
      if (!ref) return;
    }
    let trace: TraceResult;
    try {
      trace = await this.server.request<TraceResult>(METHODS.trace, { ref: formatRef(ref) });
    } catch (err) {
      void vscode.window.showErrorMessage(`Pi Events: trace failed: ${String((err as Error)?.message ?? err)}`);
      return;
    }
    if (vscode.workspace.getConfiguration('piEvents').get<string>('read.view') !== 'markdown') this.reads.panel.showTrace(ref, trace);
    else this.show(formatRef(ref), trace);
  }

  private show(ref: string, trace: TraceResult): void {
    const entries = traceEntries(trace, Date.now());
    announceStep('trace', { ref, sections: entries.map((e) => `${e.section}:${e.ref ?? e.path ?? ''}`) });
    const items: Item[] = [];
    let section = '';
    for (const entry of entries) {
      if (entry.section !== section) {
        section = entry.section;
        items.push({ label: section, kind: vscode.QuickPickItemKind.Separator });
      }
      items.push({
        label: `$(${entry.icon}) ${escapeIcons(entry.label)}`,
        description: entry.description,
        entry,
        buttons: entry.ref && entry.uri ? [openButton, retraceButton] : entry.ref ? [retraceButton] : [],
      });
    }
    const qp = vscode.window.createQuickPick<Item>();
    qp.title = `Pi Events: Trace ${ref}`;
    qp.placeholder = 'Choose an event to open it';
    qp.matchOnDescription = true;
    qp.items = items;
    qp.onDidAccept(() => {
      const entry = qp.activeItems[0]?.entry;
      qp.hide();
      if (entry) void this.openEntry(entry);
    });
    qp.onDidTriggerItemButton((e) => {
      const entry = e.item.entry;
      qp.hide();
      if (!entry?.ref) return;
      if (e.button === openButton && entry.uri && entry.line) void openSourceLine(entry.uri, entry.line);
      else if (e.button === retraceButton) void this.run(entry.ref);
    });
    qp.onDidHide(() => qp.dispose());
    qp.show();
  }

  private async openEntry(entry: TraceEntry): Promise<void> {
    if (entry.ref) await this.reads.open(entry.ref);
    else if (entry.path) await vscode.window.showTextDocument(vscode.Uri.file(entry.path), { preview: true });
  }
}
