/**
 * The extension's own copy of the server: a private venv in the extension's global storage,
 * installed from the wheel bundled in the .vsix (dependencies from the package index). This
 * module decides; src/installer.ts does the work. Pure: no vscode import, no processes.
 */

export const REQUIRED_PYTHON: readonly [number, number] = [3, 11];

/** What is written next to the venvs after a successful install. */
export interface InstallRecord {
  /** The server version (from the wheel's file name). */
  version: string;
  /** The wheel's file name and SHA-256. */
  wheel: string;
  sha256: string;
  /** The venv directory, relative to the storage directory. */
  venv: string;
  /** The interpreter the venv was made from, and its version. */
  basePython: string;
  pythonVersion: string;
  installedAt: string;
}

export function isInstallRecord(value: unknown): value is InstallRecord {
  const r = value as Partial<InstallRecord> | null;
  return !!r && typeof r === 'object' && typeof r.version === 'string' && typeof r.venv === 'string' && typeof r.wheel === 'string';
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

/** A directory name for a new venv (never the one in use, so an update can fail safely). */
export function venvDirName(version: string, now: Date): string {
  return `venv-${version}-${now.toISOString().replace(/[-:.TZ]/g, '').slice(0, 14)}`;
}

export function venvPython(venvDir: string, windows: boolean): string {
  return windows ? `${venvDir}\\Scripts\\python.exe` : `${venvDir}/bin/python`;
}

// ---------------------------------------------------------------------------------------------
// Choosing the interpreter for the venv

/** Printed by PROBE_SCRIPT. */
export interface PythonProbe {
  executable: string;
  version: [number, number, number];
  venv: boolean;
  ensurepip: boolean;
}

/** Asks an interpreter for its version and whether it can make a venv with pip in it. */
export const PROBE_SCRIPT =
  'import sys, json, importlib.util as u; print(json.dumps({"executable": sys.executable, "version": list(sys.version_info[:3]), ' +
  '"venv": u.find_spec("venv") is not None, "ensurepip": u.find_spec("ensurepip") is not None}))';

export function parseProbe(stdout: string): PythonProbe | undefined {
  try {
    const p = JSON.parse(stdout.trim().split('\n').pop() ?? '') as Partial<PythonProbe>;
    if (typeof p.executable !== 'string' || !Array.isArray(p.version) || p.version.length < 2) return undefined;
    const v = p.version.map(Number);
    return { executable: p.executable, version: [v[0] ?? 0, v[1] ?? 0, v[2] ?? 0], venv: !!p.venv, ensurepip: !!p.ensurepip };
  } catch {
    return undefined;
  }
}

export function versionText(v: readonly number[]): string {
  return v.join('.');
}

function recentEnough(p: PythonProbe): boolean {
  return p.version[0] > REQUIRED_PYTHON[0] || (p.version[0] === REQUIRED_PYTHON[0] && p.version[1] >= REQUIRED_PYTHON[1]);
}

/** The apt package Debian and Ubuntu put `venv`/`ensurepip` in for this interpreter. */
export function venvPackage(p: Pick<PythonProbe, 'version'>): string {
  return `python${p.version[0]}.${p.version[1]}-venv`;
}

export type PythonChoice = { ok: true; python: PythonProbe; name: string } | { ok: false; message: string; fix?: string };

/**
 * The first candidate (in the caller's order: the Python extension's interpreter, then python3,
 * ...) that is recent enough and can make a venv; otherwise what to tell the user.
 */
export function choosePython(probes: readonly { name: string; probe: PythonProbe | undefined }[]): PythonChoice {
  const found = probes.filter((p): p is { name: string; probe: PythonProbe } => !!p.probe);
  const usable = found.find((p) => recentEnough(p.probe) && p.probe.venv && p.probe.ensurepip);
  if (usable) return { ok: true, python: usable.probe, name: usable.name };
  const noVenv = found.find((p) => recentEnough(p.probe));
  if (noVenv) return { ok: false, ...venvMissing(noVenv.probe) };
  const need = versionText(REQUIRED_PYTHON);
  if (found.length) {
    const seen = found.map((p) => `${versionText(p.probe.version)} (${p.probe.executable})`).join(', ');
    return {
      ok: false,
      message: `Pi Events: the server needs Python ${need} or newer; found only ${seen}. Install Python ${need}+ (or select one with "Python: Select Interpreter"), then run "Pi Events: Install Server".`,
    };
  }
  const tried = probes.map((p) => p.name).join(', ');
  return {
    ok: false,
    message: `Pi Events: the server needs Python ${need} or newer, and none was found (tried ${tried}). Install Python ${need}+, then run "Pi Events: Install Server".`,
  };
}

/** Debian/Ubuntu ship `venv` without `ensurepip` unless pythonX.Y-venv is installed. */
export function venvMissing(p: Pick<PythonProbe, 'version' | 'executable'>): { message: string; fix: string } {
  const fix = `sudo apt install ${venvPackage(p)}`;
  return {
    message: `Pi Events: Python ${versionText(p.version)} (${p.executable}) cannot create virtual environments: its venv/ensurepip module is not installed. On Debian or Ubuntu run \`${fix}\`, then "Pi Events: Install Server".`,
    fix,
  };
}

/** Whether a failed `python -m venv` said that ensurepip (python3-venv) is missing. */
export function saysVenvMissing(stderr: string): boolean {
  return /ensurepip is not available|python3?[\d.]*-venv|No module named (venv|ensurepip)/i.test(stderr);
}

// ---------------------------------------------------------------------------------------------
// Progress

/** A short message for the progress notification from one line of pip's output, if any. */
export function pipProgress(line: string): string | undefined {
  const t = line.trim();
  let m = /^Processing .*?(pi_event_search-[^\s/\\]+\.whl)/.exec(t);
  if (m) return 'reading the bundled server wheel';
  m = /^Collecting ([A-Za-z0-9_.-]+)/.exec(t);
  if (m) return `resolving ${m[1]}`;
  m = /^Downloading ([A-Za-z0-9_.-]+?)-\d[^\s]*\.whl/.exec(t) ?? /^Downloading .*\/([A-Za-z0-9_.-]+?)-\d[^\s/]*\.whl/.exec(t);
  if (m) return `downloading ${m[1]}`;
  if (/^Installing collected packages/.test(t)) return 'installing the packages';
  if (/^Successfully installed/.test(t)) return 'installed';
  return undefined;
}
