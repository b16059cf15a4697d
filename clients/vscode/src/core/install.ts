/**
 * What the extension decides about its own server; the install itself is the project's one
 * bootstrap (bootstrap/bootstrap.py in the .vsix, from server/pi_event_search/bootstrap.py),
 * which src/installer.ts runs. Pure: no vscode import, no processes.
 */

/** The bootstrap's installed.json, next to the venvs (fields this extension reads). */
export interface InstallRecord {
  version: string;
  /** The venv directory, relative to the storage directory. */
  venv: string;
  identity?: string;
  basePython?: string;
  pythonVersion?: string;
  offline?: boolean;
}

export function isInstallRecord(value: unknown): value is InstallRecord {
  const r = value as Partial<InstallRecord> | null;
  return !!r && typeof r === 'object' && typeof r.version === 'string' && typeof r.venv === 'string';
}

/** One JSON line of the bootstrap's stdout. */
export interface BootstrapEvent {
  event: 'step' | 'waiting' | 'done' | 'error' | 'status';
  message?: string;
  code?: string;
  fix?: string;
  installed?: boolean;
  record?: InstallRecord;
  python?: string;
}

export function parseEvent(line: string): BootstrapEvent | undefined {
  try {
    const value = JSON.parse(line) as Partial<BootstrapEvent>;
    return typeof value.event === 'string' ? (value as BootstrapEvent) : undefined;
  } catch {
    return undefined;
  }
}

/** `pi_event_search-0.1.0-py3-none-any.whl` -> `0.1.0` (PEP 427 file names). */
export function wheelVersion(fileName: string): string | undefined {
  const m = /^pi_event_search-([^-]+)-[^-]+-[^-]+-[^-]+\.whl$/.exec(fileName);
  return m?.[1];
}

/**
 * Compares release versions the way PEP 440 orders the common cases: numeric release segments,
 * then a pre-release (a/b/rc) before the release, and .devN before everything. Returns <0, 0, >0.
 */
export function compareVersions(a: string, b: string): number {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  const len = Math.max(pa.release.length, pb.release.length);
  for (let i = 0; i < len; i++) {
    const d = (pa.release[i] ?? 0) - (pb.release[i] ?? 0);
    if (d) return d;
  }
  return pa.rank - pb.rank || pa.n - pb.n;
}

function parseVersion(v: string): { release: number[]; rank: number; n: number } {
  const m = /^v?(\d+(?:\.\d+)*)(?:[-_.]?(dev|a|alpha|b|beta|rc|c|post)[-_.]?(\d*))?/i.exec(v.trim());
  if (!m) return { release: [0], rank: 0, n: 0 };
  const release = m[1].split('.').map(Number);
  const tag = (m[2] ?? '').toLowerCase();
  const ranks: Record<string, number> = { dev: -4, a: -3, alpha: -3, b: -2, beta: -2, rc: -1, c: -1, '': 0, post: 1 };
  return { release, rank: ranks[tag] ?? 0, n: Number(m[3] || 0) };
}

/** Whether to offer an update: the bundled wheel is newer than the recorded install. */
export function updateAvailable(record: InstallRecord | undefined, bundled: string | undefined): boolean {
  return !!record && !!bundled && compareVersions(bundled, record.version) > 0;
}

export function venvPython(venvDir: string, windows: boolean): string {
  return windows ? `${venvDir}\\Scripts\\python.exe` : `${venvDir}/bin/python`;
}

/** When not even an interpreter to run the bootstrap exists. */
/**
 * The commands that may run the bootstrap, after the Python extension's interpreter: any Python 3
 * will (it finds a 3.11+ itself, or says what is missing). Windows: the py launcher first; macOS:
 * Homebrew's and python.org's, since an editor started from the Dock has no Homebrew on its PATH.
 */
export function bootstrapPythons(platform: NodeJS.Platform, preferred?: string): string[][] {
  const own: string[][] =
    platform === 'win32'
      ? [['py', '-3'], ['python'], ['python3']]
      : platform === 'darwin'
        ? [['python3'], ['/opt/homebrew/bin/python3'], ['/usr/local/bin/python3'], ['python']]
        : [['python3'], ['python']];
  const all = preferred ? [[preferred], ...own] : own;
  return all.filter((cmd, i) => all.findIndex((c) => c.join(' ') === cmd.join(' ')) === i);
}

/** What to say, per platform, when no Python can run the bootstrap at all. */
export function noPython(tried: readonly string[], platform: NodeJS.Platform = 'linux'): { message: string; fix: string } {
  const fix = platform === 'win32' ? 'winget install Python.Python.3.13' : platform === 'darwin' ? 'brew install python@3.13' : 'sudo apt install python3 python3-venv';
  const how =
    platform === 'win32'
      ? `\`${fix}\`, or the installer from python.org`
      : platform === 'darwin'
        ? `\`${fix}\`, or the installer from python.org`
        : `Debian or Ubuntu: \`${fix}\`; Fedora: \`sudo dnf install python3\``;
  return {
    message: `Pi Events: the server needs Python 3.11 or newer, and none was found (tried ${tried.join(', ')}). Install Python 3.11+ (${how}), then run "Pi Events: Install Server".`,
    fix,
  };
}
