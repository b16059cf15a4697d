/**
 * Installs the server for the user into a private venv in the extension's global storage, by
 * running the project's one bootstrap that the .vsix carries (bootstrap/bootstrap.py, beside a
 * wheelhouse of the server and its dependencies, so no package index is needed) with the Python
 * extension's interpreter, else python3. This module is the UI: the offer, the progress
 * notification, the error with its fix.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  type BootstrapEvent,
  type InstallRecord,
  isInstallRecord,
  bootstrapPythons,
  noPython,
  parseEvent,
  updateAvailable,
  venvPython,
  wheelVersion,
} from './core/install';
import { type Command, commandForPython } from './core/settings';
import { announceStep } from './steps';

const WINDOWS = process.platform === 'win32';
const RECORD = 'installed.json';

/** The bootstrap the .vsix carries, and the server wheel in its wheelhouse. */
export interface BundledWheel {
  bootstrap: string;
  path: string;
  file: string;
  version: string;
}

class Failure extends Error {
  constructor(
    message: string,
    readonly fix?: string,
  ) {
    super(message);
  }
}

export class Installer implements vscode.Disposable {
  private readonly installingEmitter = new vscode.EventEmitter<boolean>();
  /** true when an install starts, false when it ends (either way). */
  readonly onDidChangeInstalling = this.installingEmitter.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly pythonExtension: () => Promise<string | undefined>,
  ) {}

  /** Where the venvs and the install record live. */
  get storage(): string {
    return path.join(this.context.globalStorageUri.fsPath, 'server');
  }

  bundledWheel(): BundledWheel | undefined {
    const bootstrap = path.join(this.context.extensionPath, 'bootstrap', 'bootstrap.py');
    const dir = path.join(this.context.extensionPath, 'bootstrap', 'wheelhouse');
    const file = (fs.existsSync(dir) ? fs.readdirSync(dir) : []).find((f) => wheelVersion(f));
    if (!file || !fs.existsSync(bootstrap)) return undefined;
    return { bootstrap, path: path.join(dir, file), file, version: wheelVersion(file) ?? '' };
  }

  record(): InstallRecord | undefined {
    try {
      const value: unknown = JSON.parse(fs.readFileSync(path.join(this.storage, RECORD), 'utf8'));
      return isInstallRecord(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }

  /** The command of the installed server, when its interpreter is still there. */
  installedCommand(): { command: Command; record: InstallRecord } | undefined {
    const record = this.record();
    if (!record) return undefined;
    const python = venvPython(path.join(this.storage, record.venv), WINDOWS);
    return fs.existsSync(python) ? { command: commandForPython(python), record } : undefined;
  }

  updateAvailable(): boolean {
    return updateAvailable(this.record(), this.bundledWheel()?.version);
  }

  /** Removes venvs other than the recorded one (left by updates), once the server runs on it. */
  cleanUp(): void {
    const wheel = this.bundledWheel();
    if (!wheel || !this.record()) return;
    void this.bootstrap(wheel, ['--prune'], () => undefined).then(
      (done) => announceStep('pruned', { venv: done.record?.venv }),
      (err: unknown) => this.log.warn(`could not remove old server environments: ${String(err)}`),
    );
  }

  /** Asks first; resolves true once the server is installed. */
  async offerInstall(why: string): Promise<boolean> {
    const wheel = this.bundledWheel();
    if (!wheel) return false;
    const broken = this.record() ? ' The one it installed before no longer works.' : '';
    const choice = await vscode.window.showInformationMessage(
      `${why}${broken} Install pi-event-search ${wheel.version} into a private Python environment for this extension? It needs Python 3.11+; the server and its dependencies come with this extension (nothing is downloaded).`,
      'Install Server',
      'Use My Own Server…',
      'Show Log',
    );
    if (choice === 'Use My Own Server…') await vscode.commands.executeCommand('workbench.action.openSettings', 'piEvents.serverCommand');
    else if (choice === 'Show Log') this.log.show();
    return choice === 'Install Server' ? this.install() : false;
  }

  /** Offers the bundled server when it is newer than the installed one; true once updated. */
  async offerUpdate(): Promise<boolean> {
    const record = this.record();
    const wheel = this.bundledWheel();
    if (!record || !wheel || !updateAvailable(record, wheel.version)) return false;
    const choice = await vscode.window.showInformationMessage(
      `Pi Events: this extension brings server ${wheel.version}; the installed one is ${record.version}. Update it?`,
      'Update Server',
      'Later',
    );
    return choice === 'Update Server' ? this.install() : false;
  }

  /** Installs (or reinstalls) the bundled server, with progress; true when it worked. */
  async install(): Promise<boolean> {
    const wheel = this.bundledWheel();
    if (!wheel) {
      void vscode.window.showErrorMessage('Pi Events: this build of the extension has no bundled server wheel.');
      return false;
    }
    const started = Date.now();
    this.installingEmitter.fire(true);
    try {
      const record = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Pi Events: installing server ${wheel.version}`, cancellable: true },
        (progress, token) => this.installWith(wheel, (message) => progress.report({ message }), token),
      );
      const seconds = (Date.now() - started) / 1000;
      this.log.info(`installed pi-event-search ${record.version} in ${path.join(this.storage, record.venv)} (${seconds.toFixed(1)} s)`);
      announceStep('install', { version: record.version, venv: record.venv, python: record.basePython, seconds });
      void vscode.window.setStatusBarMessage(`Pi Events: server ${record.version} installed`, 5000);
      return true;
    } catch (err) {
      const failure = err instanceof Failure ? err : new Failure(`Pi Events: the server could not be installed: ${String((err as Error)?.message ?? err)}`);
      this.log.error(failure.message);
      announceStep('installFailed', { message: failure.message });
      void this.explain(failure);
      return false;
    } finally {
      this.installingEmitter.fire(false);
    }
  }

  dispose(): void {
    this.installingEmitter.dispose();
  }

  private async explain(failure: Failure): Promise<void> {
    const buttons = failure.fix ? ['Copy Command', 'Show Log'] : ['Show Log'];
    const choice = await vscode.window.showErrorMessage(failure.message, ...buttons);
    if (choice === 'Copy Command' && failure.fix) await vscode.env.clipboard.writeText(failure.fix);
    else if (choice === 'Show Log') this.log.show();
  }

  private async installWith(wheel: BundledWheel, report: (m: string) => void, token: vscode.CancellationToken): Promise<InstallRecord> {
    report('looking for Python 3.11 or newer');
    const done = await this.bootstrap(wheel, ['--from', wheel.path], report, token);
    if (!done.record) throw new Failure('Pi Events: the server install ended without a record.');
    this.log.info(done.installed ? `installed in ${path.join(this.storage, done.record.venv)}` : 'the bundled server was already installed');
    return done.record;
  }

  /** Runs the bootstrap (the Python extension's interpreter, else python3, else python) to its end. */
  private async bootstrap(wheel: BundledWheel, args: string[], report: (m: string) => void, token?: vscode.CancellationToken): Promise<BootstrapEvent> {
    const preferred = await this.pythonExtension();
    const commands = bootstrapPythons(process.platform, preferred);
    for (const [python, ...flags] of commands) {
      const prefer = preferred ? ['--python', preferred] : [];
      const last = await this.run(python, [...flags, wheel.bootstrap, '--home', this.storage, ...prefer, ...args], report, token);
      if (!last) continue; // no such interpreter
      if (last.event === 'error') throw new Failure(`Pi Events: the server could not be installed: ${last.message ?? ''}`, last.fix || undefined);
      return last;
    }
    const { message, fix } = noPython(commands.map((c) => c.join(' ')), process.platform);
    throw new Failure(message, fix);
  }

  /** Runs one bootstrap: its events to `report`, its stderr (pip's output) to the log; its last event, or undefined when `command` does not exist. Cancelling kills it. */
  private run(command: string, args: string[], report: (m: string) => void, token?: vscode.CancellationToken): Promise<BootstrapEvent | undefined> {
    this.log.info(`$ ${[command, ...args].join(' ')}`);
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let last: BootstrapEvent | undefined;
      let partial = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString()).split(/\r?\n/);
        partial = lines.pop() ?? '';
        for (const line of lines) {
          const event = parseEvent(line);
          if (!event) continue;
          last = event;
          if ((event.event === 'step' || event.event === 'waiting') && event.message) report(event.message);
        }
      });
      child.stderr.on('data', (chunk: Buffer) => {
        const text = chunk.toString();
        stderr = (stderr + text).slice(-4000);
        for (const line of text.split(/\r?\n/)) if (line.trim()) this.log.info(line);
      });
      const cancel = token?.onCancellationRequested(() => child.kill('SIGTERM'));
      child.on('error', () => {
        cancel?.dispose();
        resolve(undefined);
      });
      child.on('close', (code) => {
        cancel?.dispose();
        if (token?.isCancellationRequested) reject(new Failure('Pi Events: server installation cancelled.'));
        else if (last && (code === 0 || last.event === 'error')) resolve(last);
        else resolve({ event: 'error', message: `${command} ${args[0]} exited with ${code}: ${lastLines(stderr)}` });
      });
    });
  }
}

function lastLines(output: string): string {
  return output.trim().split(/\r?\n/).slice(-3).join(' / ');
}
