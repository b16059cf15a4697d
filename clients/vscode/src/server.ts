/**
 * Owns the language client: starts the server with the resolved command and the settings as
 * initializationOptions, restarts it when the command or index changes, forwards the other
 * settings with workspace/didChangeConfiguration, and reports state, progress and index changes.
 */
import * as vscode from 'vscode';
import {
  type ClientCapabilities,
  type FeatureState,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
  type StaticFeature,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
  type WorkDoneProgressBegin,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from 'vscode-languageclient/node';
import { type IndexChanged, METHODS } from './core/protocol';
import { type ServerState } from './core/render';
import { LIVE_SETTINGS, RESTART_SETTINGS, type RawSettings, describeCommand, toInitializationOptions } from './core/settings';
import { cleaned } from './core/untrusted';
import { type Installer } from './installer';
import { pathContext, resolveServerCommand } from './python';
import { announceStep } from './steps';

export class NotRunning extends Error {}

function readSettings(): RawSettings {
  const c = vscode.workspace.getConfiguration('piEvents');
  const roots = c.inspect<unknown>('workspaceRoots');
  return {
    // What a repository must not choose (the program run, where the index goes, which
    // directories are read) is read from the person's own settings only, as revealSecrets.
    serverCommand: c.inspect<unknown>('serverCommand')?.globalValue,
    workspaceRoots: roots?.globalValue,
    // A workspace's roots only narrow (toInitializationOptions).
    projectRoots: roots?.workspaceFolderValue ?? roots?.workspaceValue,
    sessionDirs: c.inspect<unknown>('sessionDirs')?.globalValue,
    indexPath: c.inspect<unknown>('indexPath')?.globalValue,
    watch: c.get('watch'),
    // Read where only the person can set it (user settings): a workspace cannot turn it on.
    revealSecrets: c.inspect<boolean>('revealSecrets')?.globalValue,
    extractors: c.get('extractors'),
  };
}

export function initializationOptions(): ReturnType<typeof toInitializationOptions> {
  return toInitializationOptions(readSettings(), pathContext());
}

type Progress = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export class Server implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<void> | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly indexEmitter = new vscode.EventEmitter<IndexChanged>();
  private readonly progressEmitter = new vscode.EventEmitter<Progress>();
  private readonly startEmitter = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [];
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onIndexChanged = this.indexEmitter.event;
  readonly onProgress = this.progressEmitter.event;
  /** The client is running (after every start or restart). */
  readonly onDidStart = this.startEmitter.event;

  constructor(
    readonly log: vscode.LogOutputChannel,
    private readonly installer: Installer,
  ) {
    this.disposables.push(
      // Only a first install shows in the status bar; while updating, the old server still answers.
      installer.onDidChangeInstalling((busy) => {
        if (this.running) return;
        this.stateEmitter.fire(busy ? { kind: 'installing' } : { kind: 'stopped', reason: 'server not installed' });
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (RESTART_SETTINGS.some((s) => e.affectsConfiguration(s))) void this.restart();
        else if (LIVE_SETTINGS.some((s) => e.affectsConfiguration(s))) this.sendSettings();
      }),
    );
  }

  get running(): boolean {
    return !!this.client?.isRunning();
  }

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doStart(): Promise<void> {
    this.stateEmitter.fire({ kind: 'starting' });
    const resolved = await resolveServerCommand(this.log, this.installer);
    if (!resolved.ok) {
      this.log.error(resolved.message);
      this.stateEmitter.fire({ kind: 'stopped', reason: 'server not installed' });
      // A server named in the settings is the user's choice: explain it rather than install another.
      if (!resolved.fromSetting && this.installer.bundledWheel()) void this.offerInstall();
      else void this.offerFix(resolved.message, resolved.fix);
      return;
    }
    const { command, origin } = resolved;
    this.log.info(`starting ${describeCommand(command)} (from ${origin})`);
    const serverOptions: ServerOptions = {
      command: command.command,
      args: command.args,
      // stdio without a transport flag: the server takes no --stdio argument.
      options: { env: process.env },
    };
    const clientOptions: LanguageClientOptions = {
      // References are recognised in every document: any language, on disk or untitled.
      documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
      initializationOptions: initializationOptions(),
      outputChannel: this.log,
      initializationFailedHandler: (err) => {
        this.log.error(`initialize failed: ${String(err)}`);
        return false;
      },
    };
    const client = new LanguageClient('piEvents', 'Pi Events', serverOptions, clientOptions);
    client.registerFeature(new ProgressTracker(client, (p) => this.progressEmitter.fire(p)));
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped) this.stateEmitter.fire({ kind: 'stopped' });
    });
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      const message = `Pi Events: could not start the server with \`${describeCommand(command)}\` (${String((err as Error)?.message ?? err)}). Is pi-event-search installed there? The "Pi Events" output has the details.`;
      this.log.error(message);
      this.stateEmitter.fire({ kind: 'stopped', reason: 'server failed to start' });
      void this.offerFix(message, `${command.command === 'python3' ? 'python3' : command.command} -m pip install pi-event-search`);
      return;
    }
    client.onNotification(METHODS.indexChanged, (params: IndexChanged) => this.indexEmitter.fire(params));
    this.log.info('server started');
    announceStep('serverStarted', { command: [command.command, ...command.args], origin });
    this.startEmitter.fire();
    if (resolved.managed) void this.afterManagedStart();
  }

  private async offerInstall(): Promise<void> {
    if (await this.installer.offerInstall('Pi Events: no pi-event-search server was found.')) await this.start();
  }

  /** Old venvs go once the new one runs; then a newer bundled server is offered. */
  private async afterManagedStart(): Promise<void> {
    try {
      this.installer.cleanUp();
    } catch (err) {
      this.log.warn(`could not remove old server environments: ${String(err)}`);
    }
    if (await this.installer.offerUpdate()) await this.restart();
  }

  /** Pi Events: Install Server: (re)installs the bundled server and restarts on it. */
  async installServer(): Promise<void> {
    if (!(await this.installer.install())) return;
    const setting = vscode.workspace.getConfiguration('piEvents').get<unknown>('serverCommand');
    if ((Array.isArray(setting) && setting.length) || (typeof setting === 'string' && setting.trim())) {
      void vscode.window.showInformationMessage('Pi Events: installed; "piEvents.serverCommand" is set and still takes precedence.');
    }
    await this.restart();
  }

  private async offerFix(message: string, fix: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, 'Open Settings', 'Copy Install Command', 'Show Log');
    if (choice === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'piEvents.serverCommand');
    else if (choice === 'Copy Install Command') {
      await vscode.env.clipboard.writeText(fix);
      void vscode.window.showInformationMessage(`Copied: ${fix}. Run it, then "Pi Events: Restart Server".`);
    } else if (choice === 'Show Log') this.log.show();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (err) {
        this.log.warn(`stop: ${String(err)}`);
      }
    }
  }

  async restart(): Promise<void> {
    await this.starting;
    await this.stop();
    await this.start();
  }

  private sendSettings(): void {
    if (!this.client?.isRunning()) return;
    void this.client.sendNotification('workspace/didChangeConfiguration', {
      settings: { piEvents: initializationOptions() },
    });
  }

  async request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    if (this.starting) await this.starting;
    if (!this.client?.isRunning()) throw new NotRunning('the Pi Events server is not running (see the "Pi Events" output)');
    // Recorded text is data: whatever server answered, no control byte reaches a view.
    return cleaned(
      await (token ? this.client.sendRequest<R>(method, params, token) : this.client.sendRequest<R>(method, params)),
    );
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables) d.dispose();
    this.stateEmitter.dispose();
    this.indexEmitter.dispose();
    this.progressEmitter.dispose();
    this.startEmitter.dispose();
  }
}

/**
 * Replaces the client's built-in handler for window/workDoneProgress/create (registered after the
 * built-in features, so it wins) to feed the status bar, and shows the same progress in the
 * window's progress area.
 */
class ProgressTracker implements StaticFeature {
  constructor(
    private readonly client: LanguageClient,
    private readonly report: (p: Progress) => void,
  ) {}

  fillClientCapabilities(capabilities: ClientCapabilities): void {
    capabilities.window = { ...capabilities.window, workDoneProgress: true };
  }

  getState(): FeatureState {
    return { kind: 'static' };
  }

  initialize(): void {
    this.client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      let finish: (() => void) | undefined;
      let progress: vscode.Progress<{ message?: string }> | undefined;
      const done = new Promise<void>((resolve) => (finish = resolve));
      const sub = this.client.onProgress(WorkDoneProgress.type, token, (value) => {
        this.report(value);
        if (value.kind === 'begin') {
          void vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: value.title }, (p) => {
            progress = p;
            if (value.message) p.report({ message: value.message });
            return done;
          });
        } else if (value.kind === 'report') {
          progress?.report({ message: value.message });
        } else {
          sub.dispose();
          finish?.();
        }
      });
    });
  }

  clear(): void {}

  dispose(): void {}
}
