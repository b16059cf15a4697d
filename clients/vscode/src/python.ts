/**
 * Finds the command that starts the server: `piEvents.serverCommand`, else the server this
 * extension installed, else the Python extension's interpreter or `python3` when it can import
 * the server, else a `pi-event-search` script on PATH (docs: README "How the server is started").
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  type Command,
  type PathContext,
  SERVER_MODULE,
  commandForPython,
  commandFromSetting,
  installHint,
  pythonCandidates,
  runsServerModule,
} from './core/settings';

export function pathContext(): PathContext {
  return {
    folders: (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath),
    home: os.homedir(),
    env: process.env,
  };
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment?(env: { path: string }): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
  settings?: { getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined };
}

/** The interpreter selected in the Python extension, if that extension is installed. */
export async function pythonExtensionInterpreter(log: vscode.LogOutputChannel): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const envPath = api?.environments?.getActiveEnvironmentPath?.(resource);
    if (envPath) {
      const env = await api.environments?.resolveEnvironment?.(envPath);
      return env?.executable?.uri?.fsPath ?? envPath.path;
    }
    return api?.settings?.getExecutionDetails?.(resource)?.execCommand?.[0];
  } catch (err) {
    log.warn(`Python extension: could not read the interpreter: ${String(err)}`);
    return undefined;
  }
}

/** Whether `python` can import the server package (and why not). */
export function canImportServer(python: string): Promise<{ ok: boolean; detail: string }> {
  return new Promise((resolve) => {
    execFile(python, ['-c', `import ${SERVER_MODULE}`], { timeout: 20000 }, (err, _stdout, stderr) => {
      if (!err) resolve({ ok: true, detail: '' });
      else resolve({ ok: false, detail: (stderr || err.message).trim().split('\n').slice(-1)[0] ?? '' });
    });
  });
}

export type Resolution =
  | { ok: true; command: Command; origin: string; managed?: boolean }
  | { ok: false; message: string; fix: string; fromSetting?: boolean };

/** The `pi-event-search` script in a PATH directory, if any. */
export function scriptOnPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const names = process.platform === 'win32' ? ['pi-event-search.exe', 'pi-event-search.cmd'] : ['pi-event-search'];
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const name of names) {
      const file = path.join(dir, name);
      try {
        fs.accessSync(file, fs.constants.X_OK);
        if (fs.statSync(file).isFile()) return file;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/** What resolveServerCommand needs from the installer (src/installer.ts). */
export interface Managed {
  installedCommand(): { command: Command; record: { version: string } } | undefined;
}

export async function resolveServerCommand(log: vscode.LogOutputChannel, managed: Managed): Promise<Resolution> {
  // The person's own setting only: a workspace must not choose the program run (package.json: machine scope).
  const setting = vscode.workspace.getConfiguration('piEvents').inspect<unknown>('serverCommand')?.globalValue;
  const fromSetting = commandFromSetting(setting, pathContext());
  if (fromSetting) {
    if (runsServerModule(fromSetting)) {
      const probe = await canImportServer(fromSetting.command);
      log.info(`${fromSetting.command}: ${probe.ok ? `imports ${SERVER_MODULE}` : `cannot import ${SERVER_MODULE} (${probe.detail})`}`);
      if (!probe.ok) return { ok: false, fromSetting: true, ...installHint([fromSetting.command]) };
    }
    return { ok: true, command: fromSetting, origin: 'piEvents.serverCommand' };
  }
  const installed = managed.installedCommand();
  if (installed) {
    const probe = await canImportServer(installed.command.command);
    log.info(`installed server ${installed.record.version}: ${probe.ok ? 'ok' : `cannot import ${SERVER_MODULE} (${probe.detail})`}`);
    if (probe.ok) return { ok: true, command: installed.command, origin: `the server installed by this extension (${installed.record.version})`, managed: true };
  }
  const candidates = pythonCandidates(await pythonExtensionInterpreter(log));
  for (const python of candidates) {
    const probe = await canImportServer(python);
    log.info(`interpreter ${python}: ${probe.ok ? `imports ${SERVER_MODULE}` : `cannot import ${SERVER_MODULE} (${probe.detail})`}`);
    if (probe.ok) return { ok: true, command: commandForPython(python), origin: python };
  }
  const script = scriptOnPath();
  log.info(`pi-event-search on PATH: ${script ?? 'none'}`);
  if (script) return { ok: true, command: { command: script, args: ['serve'] }, origin: 'PATH' };
  return { ok: false, ...installHint(candidates) };
}
