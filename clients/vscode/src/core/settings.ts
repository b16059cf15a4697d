/**
 * `piEvents.*` settings -> server command and `initializationOptions` (docs/protocol.md,
 * "Initialization"). Pure: the caller reads the configuration and passes plain values in.
 */

export interface RawSettings {
  serverCommand?: unknown;
  /** The user's roots (user settings). */
  workspaceRoots?: unknown;
  /** A workspace's or folder's roots: they only narrow (the server decides). */
  projectRoots?: unknown;
  sessionDirs?: unknown;
  indexPath?: unknown;
  watch?: unknown;
  revealSecrets?: unknown;
  extractors?: unknown;
}

export interface InitializationOptions {
  roots?: string[];
  /** A workspace's roots, as configured: the server keeps those inside `roots` (else inside the
   * workspace folders) once symlinks are resolved. */
  projectRoots?: string[];
  sessionDirs?: string[];
  indexPath?: string;
  watch?: boolean;
  revealSecrets?: boolean;
  /** The extractor registry, passed as is (the server checks it); null: the user file's. */
  extractors?: unknown[] | null;
}

export interface PathContext {
  /** Absolute paths of the workspace folders, first one first. */
  folders: string[];
  home: string;
  env?: Record<string, string | undefined>;
}

export interface Command {
  command: string;
  args: string[];
}

export const SERVER_MODULE = 'pi_event_search';

/** Settings that need a new server process (the others go through didChangeConfiguration). */
export const RESTART_SETTINGS = ['piEvents.serverCommand', 'piEvents.indexPath'] as const;
export const LIVE_SETTINGS = ['piEvents.workspaceRoots', 'piEvents.sessionDirs', 'piEvents.watch', 'piEvents.revealSecrets', 'piEvents.extractors'] as const;

function strings(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim());
}

function isAbsolute(p: string): boolean {
  return p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('\\\\');
}

function joinPath(base: string, rel: string): string {
  const sep = base.includes('\\') && !base.includes('/') ? '\\' : '/';
  const trimmed = rel.replace(/^\.[\\/]/, '');
  return base.endsWith(sep) ? base + trimmed : `${base}${sep}${trimmed}`;
}

/** `~`, `${workspaceFolder}`, `${userHome}`, `${env:NAME}`; relative paths resolve against the first folder. */
export function expandPath(input: string, ctx: PathContext): string {
  const env = ctx.env ?? {};
  let p = input.trim();
  p = p.replace(/\$\{workspaceFolder\}/g, ctx.folders[0] ?? '');
  p = p.replace(/\$\{userHome\}/g, ctx.home);
  p = p.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => env[name] ?? '');
  if (p === '~') return ctx.home;
  if (p.startsWith('~/') || p.startsWith('~\\')) return joinPath(ctx.home, p.slice(2));
  if (!isAbsolute(p) && ctx.folders[0]) return joinPath(ctx.folders[0], p);
  return p;
}

/** Maps the settings to `initializationOptions`; omits what is unset so the server uses its defaults. */
export function toInitializationOptions(raw: RawSettings, ctx: PathContext): InitializationOptions {
  const opts: InitializationOptions = {};
  // Sent as configured (expanded only): the server resolves links and `..` and keeps a
  // workspace's roots only inside the user's, else inside the workspace folders (docs/security.md).
  // Narrowing here by text let a link in the workspace widen them.
  const user = strings(raw.workspaceRoots).map((p) => expandPath(p, ctx));
  if (user.length) opts.roots = user;
  const project = strings(raw.projectRoots).map((p) => expandPath(p, ctx));
  if (project.length) opts.projectRoots = project;
  const dirs = strings(raw.sessionDirs).map((p) => expandPath(p, ctx));
  if (dirs.length) opts.sessionDirs = dirs;
  if (typeof raw.indexPath === 'string' && raw.indexPath.trim()) opts.indexPath = expandPath(raw.indexPath, ctx);
  if (typeof raw.watch === 'boolean') opts.watch = raw.watch;
  // Always said: the server masks credentials unless this person's setting asks otherwise.
  opts.revealSecrets = raw.revealSecrets === true;
  // Always said too: null (unset) sends the server back to the user file's registry.
  opts.extractors = Array.isArray(raw.extractors) ? raw.extractors : null;
  return opts;
}

export function isPythonExecutable(path: string): boolean {
  const base = path.split(/[\\/]/).pop() ?? '';
  return /^python(\d+(\.\d+)*)?(\.exe)?$/i.test(base);
}

export function commandForPython(python: string): Command {
  return { command: python, args: ['-m', SERVER_MODULE, 'serve'] };
}

/** The command from `piEvents.serverCommand`, or undefined when the setting is empty/invalid. */
export function commandFromSetting(setting: unknown, ctx: PathContext): Command | undefined {
  if (typeof setting === 'string') {
    if (!setting.trim()) return undefined;
    const exe = expandPath(setting, ctx);
    return isPythonExecutable(exe) ? commandForPython(exe) : { command: exe, args: ['serve'] };
  }
  const parts = strings(setting);
  if (!parts.length) return undefined;
  return { command: expandPath(parts[0], ctx), args: parts.slice(1) };
}

/** Whether a command runs the server as a Python module (so an import probe can explain failures). */
export function runsServerModule(cmd: Command): boolean {
  return cmd.args[0] === '-m' && cmd.args[1] === SERVER_MODULE;
}

export function describeCommand(cmd: Command): string {
  return [cmd.command, ...cmd.args].map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(' ');
}

/** What to tell the user when no interpreter can import the server. */
export function installHint(tried: string[]): { message: string; fix: string } {
  const python = tried[0] ?? 'python3';
  const list = tried.length ? tried.join(', ') : 'python3';
  return {
    message:
      `Pi Events: the pi-event-search server is not installed for ${list}. ` +
      `Install it into that interpreter, or set "piEvents.serverCommand" to a command that starts it.`,
    fix: `${python} -m pip install pi-event-search`,
  };
}

/** Candidate interpreters, in order: the Python extension's, then python3 (duplicates removed). */
export function pythonCandidates(fromPythonExtension: string | undefined): string[] {
  const out: string[] = [];
  for (const c of [fromPythonExtension, 'python3']) {
    if (c && !out.includes(c)) out.push(c);
  }
  return out;
}
