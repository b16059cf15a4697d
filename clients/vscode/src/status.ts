/**
 * The status bar item: server state, indexing progress (from $/progress), then the counts of what
 * the workspace may see (piEvents/status, refreshed on piEvents/indexChanged).
 */
import * as vscode from 'vscode';
import { METHODS, type StatusResult } from './core/protocol';
import { type ServerState, statusBarText } from './core/render';
import { type Server } from './server';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('piEvents.status', vscode.StatusBarAlignment.Left, 10);
  private readonly disposables: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private progressActive = false;
  last: StatusResult | undefined;

  constructor(private readonly server: Server) {
    this.item.name = 'Pi Events';
    this.item.command = 'piEvents.status';
    this.show({ kind: 'starting' });
    this.item.show();
    this.disposables.push(
      server.onDidChangeState((s) => this.show(s)),
      server.onProgress((p) => {
        if (p.kind === 'end') {
          this.progressActive = false;
          this.refreshSoon(0);
        } else {
          this.progressActive = true;
          this.show({ kind: 'indexing', message: p.message, percentage: p.percentage });
        }
      }),
      server.onDidStart(() => this.refreshSoon(0)),
      server.onIndexChanged((e) => {
        if (e.indexing && !this.progressActive) this.show({ kind: 'indexing' });
        this.refreshSoon(e.indexing ? 1000 : 200);
      }),
    );
  }

  private show(state: ServerState): void {
    const { text, tooltip } = statusBarText(state, vscode.workspace.getConfiguration('piEvents').inspect<boolean>('revealSecrets')?.globalValue === true);
    this.item.text = text;
    this.item.tooltip = tooltip;
  }

  refreshSoon(delay: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), delay);
  }

  async refresh(): Promise<StatusResult | undefined> {
    try {
      const status = await this.server.request<StatusResult>(METHODS.status, {});
      this.last = status;
      if (!this.progressActive) {
        if (status.index?.indexing) this.show({ kind: 'indexing' });
        else this.show({ kind: 'ready', status });
      }
      if (status.index?.indexing) this.refreshSoon(1500);
      return status;
    } catch (err) {
      this.server.log.warn(`status: ${String((err as Error)?.message ?? err)}`);
      return undefined;
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
    this.item.dispose();
  }
}
