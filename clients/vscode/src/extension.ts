/**
 * Pi Event Search for VS Code: starts the pi-event-search language server and wires the commands,
 * the read view, the status bar and the search picker. Hovers, go-to-definition and document links
 * on `pi-event:` references come straight from the server.
 */
import * as vscode from 'vscode';
import { METHODS, type ReindexResult, type StatusResult } from './core/protocol';
import { parseRef, formatRef } from './core/refs';
import { type Order } from './core/readUri';
import { statusBarText } from './core/render';
import { announceStep, writeStepsTo } from './steps';
import { FileHistory } from './fileHistory';
import { ReadView, targetOf } from './readView';
import { Installer } from './installer';
import { pythonExtensionInterpreter } from './python';
import { Search } from './search';
import { type Element, SessionsView } from './sessionsView';
import { Server } from './server';
import { StatusBar } from './status';
import { Trace, eventAtCursor } from './trace';

let server: Server | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const stepsFile = process.env.PI_EVENTS_E2E_LOG;
  if (stepsFile) context.subscriptions.push(writeStepsTo(stepsFile));
  const log = vscode.window.createOutputChannel('Pi Events', { log: true });
  const installer = new Installer(context, log, () => pythonExtensionInterpreter(log));
  server = new Server(log, installer);
  const reads = new ReadView(server);
  const status = new StatusBar(server);
  const sessions = new SessionsView(server, reads);
  const search = new Search(server, reads, sessions);
  const trace = new Trace(server, reads);
  context.subscriptions.push(log, installer, server, reads, status, search, sessions);
  const files = new FileHistory(server, reads);
  context.subscriptions.push(files);

  const command = (id: string, fn: (...args: unknown[]) => unknown): void => {
    context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  };
  const s = server;

  command('piEvents.search', (initial?: unknown) => search.show(typeof initial === 'string' ? initial : undefined));
  command('piEvents.search.openSource', () => search.openSourceOfActive());
  command('piEvents.searchSessions', (initial?: unknown) => search.show(typeof initial === 'string' ? initial : undefined, 'sessions'));
  command('piEvents.sessions.show', () => vscode.commands.executeCommand('piEvents.sessions.focus'));
  command('piEvents.sessions.refresh', () => sessions.refresh());
  command('piEvents.sessions.clearSearch', () => sessions.showList());
  // Row commands get the row (core/sessionTree via sessionsView's Element).
  const onRow = (id: string, fn: (el: Element | undefined) => Promise<void>): void => command(id, (el?: unknown) => fn(el as Element | undefined));
  onRow('piEvents.sessions.more', (el) => sessions.more(el));
  onRow('piEvents.sessions.open', (el) => sessions.open(el));
  onRow('piEvents.sessions.copyReference', (el) => sessions.copyReference(el));
  onRow('piEvents.sessions.trace', (el) => sessions.trace(el));
  onRow('piEvents.sessions.openSource', (el) => sessions.openSource(el));
  command('piEvents.trace', (arg?: unknown) => trace.run(arg));
  command('piEvents.fileHistory', (arg?: unknown) => files.show(arg));
  command('piEvents.lineOrigin', () => files.lineOrigin());
  command('piEvents.open', async (ref?: unknown, order?: unknown) => {
    let text = typeof ref === 'string' ? ref : undefined;
    if (!text) {
      const here = await eventAtCursor(s, vscode.window.activeTextEditor);
      text = await vscode.window.showInputBox({
        title: 'Pi Events: Open Event Reference',
        value: here ? formatRef(here) : '',
        placeHolder: 'pi-event:<sessionId>/<entryId>',
        validateInput: (v) => (parseRef(v) ? undefined : 'pi-event:<sessionId>/<entryId>'),
      });
    }
    if (text) await reads.open(text, order === 'branch' ? 'branch' : 'append');
  });
  command('piEvents.copyReference', async (arg?: unknown) => {
    const ref =
      (arg instanceof vscode.Uri ? targetOf(arg)?.ref : typeof arg === 'string' ? parseRef(arg) : undefined) ??
      (await eventAtCursor(s, vscode.window.activeTextEditor));
    if (!ref) {
      void vscode.window.showInformationMessage('Pi Events: no event here (open one with Pi Events: Search).');
      return;
    }
    const text = formatRef(ref);
    await vscode.env.clipboard.writeText(text);
    announceStep('copy', { text });
    void vscode.window.setStatusBarMessage(`Copied ${text}`, 3000);
  });
  command('piEvents.revealSource', async (arg?: unknown) => {
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    if (uri && targetOf(uri)) await reads.revealSource(uri);
    else void vscode.window.showInformationMessage('Pi Events: open an event first (Pi Events: Search).');
  });
  command('piEvents.showMore', async (arg?: unknown) => {
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    if (uri && targetOf(uri)) await reads.showMore(uri);
  });
  const step = (direction: 'previous' | 'next', order: Order) => () => reads.step(direction, order);
  command('piEvents.previous', step('previous', 'append'));
  command('piEvents.next', step('next', 'append'));
  command('piEvents.previousInBranch', step('previous', 'branch'));
  command('piEvents.nextInBranch', step('next', 'branch'));
  command('piEvents.reindex', async () => {
    try {
      const r = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Pi Events: reindexing' },
        () => s.request<ReindexResult>(METHODS.reindex, {}),
      );
      announceStep('reindex', { ...r });
      void vscode.window.showInformationMessage(`Pi Events: reindexed (${r.changedSessions} sessions changed, generation ${r.generation}).`);
      status.refreshSoon(0);
    } catch (err) {
      void vscode.window.showErrorMessage(`Pi Events: reindex failed: ${String((err as Error)?.message ?? err)}`);
    }
  });
  command('piEvents.status', async () => {
    const st: StatusResult | undefined = await status.refresh();
    if (!st) {
      const choice = await vscode.window.showWarningMessage('Pi Events: the server is not running.', 'Restart Server', 'Show Log');
      if (choice === 'Restart Server') await s.restart();
      else if (choice === 'Show Log') log.show();
      return;
    }
    const { tooltip } = statusBarText({ kind: 'ready', status: st });
    const choice = await vscode.window.showInformationMessage(tooltip.replace(/\n?Click to reindex\./, '').replace(/\n/g, ' · '), 'Reindex', 'Show Log');
    if (choice === 'Reindex') await vscode.commands.executeCommand('piEvents.reindex');
    else if (choice === 'Show Log') log.show();
  });
  command('piEvents.restart', () => s.restart());
  command('piEvents.installServer', () => s.installServer());

  void server.start();
}

export async function deactivate(): Promise<void> {
  await server?.stop();
}
