/**
 * Installs the server for the user: a private venv in the extension's global storage, made
 * with the Python extension's interpreter (else python3, ...), from the wheel bundled in the
 * .vsix, with the dependencies from the package index; with a progress notification. The
 * decisions (which Python, which version is newer, what to say) are in core/install.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  type InstallRecord,
  PROBE_SCRIPT,
  type PythonProbe,
  choosePython,
  isInstallRecord,
  parseProbe,
  pipProgress,
  saysVenvMissing,
  updateAvailable,
  venvDirName,
  venvMissing,
  venvPython,
  versionText,
  wheelVersion,
} from './core/install';
import { type Command, commandForPython } from './core/settings';
import { announceStep } from './steps';

const WINDOWS = process.platform === 'win32';
const RECORD = 'installed.json';

export interface BundledWheel {
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
    const dir = path.join(this.context.extensionPath, 'server-wheel');
    const file = (fs.existsSync(dir) ? fs.readdirSync(dir) : []).find((f) => wheelVersion(f));
    return file ? { path: path.join(dir, file), file, version: wheelVersion(file) ?? '' } : undefined;
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

  /** Removes venvs other than the recorded one (left by updates, or by failed installs). */
  cleanUp(): void {
    const keep = this.record()?.venv;
    if (!keep || !fs.existsSync(this.storage)) return;
    for (const name of fs.readdirSync(this.storage)) {
      if (name.startsWith('venv-') && name !== keep) fs.rmSync(path.join(this.storage, name), { recursive: true, force: true });
    }
  }

  /** Asks first; resolves true once the server is installed. */
  async offerInstall(why: string): Promise<boolean> {
    const wheel = this.bundledWheel();
    if (!wheel) return false;
    const broken = this.record() ? ' The one it installed before no longer works.' : '';
    const choice = await vscode.window.showInformationMessage(
      `${why}${broken} Install pi-event-search ${wheel.version} into a private Python environment for this extension? It needs Python 3.11+ and downloads the server's dependencies (pygls, lsprotocol, orjson, watchfiles) from the Python package index.`,
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
    const { python, name } = await this.choosePython();
    this.log.info(`making the server's venv with ${name} (${python.executable}, Python ${versionText(python.version)})`);
    fs.mkdirSync(this.storage, { recursive: true });
    const venv = venvDirName(wheel.version, new Date());
    const dir = path.join(this.storage, venv);
    try {
      report(`creating a private environment (Python ${versionText(python.version)})`);
      const made = await this.run(python.executable, ['-m', 'venv', dir], token);
      if (made.code !== 0) {
        if (saysVenvMissing(made.output)) {
          const { message, fix } = venvMissing(python);
          throw new Failure(message, fix);
        }
        throw new Failure(`Pi Events: \`${python.executable} -m venv\` failed: ${lastLines(made.output)}`);
      }
      report('installing the server and its dependencies');
      const pip = ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--progress-bar', 'off', wheel.path];
      const installed = await this.run(venvPython(dir, WINDOWS), pip, token, (line) => {
        const message = pipProgress(line);
        if (message) report(message);
      });
      if (installed.code !== 0) {
        throw new Failure(
          `Pi Events: pip could not install the server (is the Python package index reachable? pip's own settings, such as a proxy or index URL in pip.conf, apply): ${lastLines(installed.output)}`,
        );
      }
      const record: InstallRecord = {
        version: wheel.version,
        wheel: wheel.file,
        sha256: createHash('sha256').update(fs.readFileSync(wheel.path)).digest('hex'),
        venv,
        basePython: python.executable,
        pythonVersion: versionText(python.version),
        installedAt: new Date().toISOString(),
      };
      const tmp = path.join(this.storage, `${RECORD}.tmp`);
      fs.writeFileSync(tmp, JSON.stringify(record, null, 1));
      fs.renameSync(tmp, path.join(this.storage, RECORD));
      return record;
    } catch (err) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  private async choosePython(): Promise<{ python: PythonProbe; name: string }> {
    const names = [await this.pythonExtension(), ...(WINDOWS ? ['python', 'py'] : ['python3', 'python3.13', 'python3.12', 'python3.11'])];
    const unique = [...new Set(names.filter((n): n is string => !!n))];
    const probes = await Promise.all(unique.map(async (name) => ({ name, probe: await probePython(name) })));
    const choice = choosePython(probes);
    if (!choice.ok) throw new Failure(choice.message, choice.fix);
    return choice;
  }

  /** Runs a process; its output goes to the log, line by line. Cancelling kills it. */
  private run(
    command: string,
    args: string[],
    token: vscode.CancellationToken,
    onLine?: (line: string) => void,
  ): Promise<{ code: number; output: string }> {
    this.log.info(`$ ${[command, ...args].join(' ')}`);
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(command, args, { env: { ...process.env, PIP_NO_INPUT: '1' } });
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      let output = '';
      const take = (chunk: Buffer): void => {
        const text = chunk.toString();
        output = (output + text).slice(-20000);
        for (const line of text.split(/\r?\n/)) {
          if (!line.trim()) continue;
          this.log.info(line);
          onLine?.(line);
        }
      };
      child.stdout?.on('data', take);
      child.stderr?.on('data', take);
      const cancel = token.onCancellationRequested(() => child.kill());
      child.on('error', (err) => {
        cancel.dispose();
        reject(new Failure(`Pi Events: could not run ${command}: ${err.message}`));
      });
      child.on('close', (code) => {
        cancel.dispose();
        if (token.isCancellationRequested) reject(new Failure('Pi Events: server installation cancelled.'));
        else resolve({ code: code ?? 1, output });
      });
    });
  }
}

function probePython(python: string): Promise<PythonProbe | undefined> {
  return new Promise((resolve) => {
    execFile(python, ['-c', PROBE_SCRIPT], { timeout: 20000 }, (err, stdout) => resolve(err ? undefined : parseProbe(stdout)));
  });
}

function lastLines(output: string): string {
  return output.trim().split(/\r?\n/).slice(-3).join(' / ');
}
