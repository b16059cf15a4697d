/**
 * Installs the extension's own server when none is configured or on PATH: a private venv in
 * installDir() made from the checkout this extension came with, or the wheel it carries. One
 * install at a time across Pi processes (a lock directory); a newer source installs into a new
 * venv, so a failed update leaves the old one working. Progress goes to Pi's status line.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
	choosePython,
	findSource,
	type InstallRecord,
	type InstallSource,
	installDir,
	isCurrent,
	isRecord,
	PROBE,
	parseProbe,
	PYTHON_NAMES,
	pipStep,
	type Probe,
	venvName,
} from "./install.ts";

const RECORD = "installed.json";
const LOCK = "install.lock";
/** A lock older than this, or whose process is gone, was left by a crash. */
const STALE_LOCK_MS = 20 * 60_000;
/** pip gets this long before it is killed (a hung index); the tool's own wait is shorter. */
const PIP_LIMIT_MS = 15 * 60_000;

export class InstallFailed extends Error {}

export type Report = (step: string | undefined) => void;

export interface Located {
	argv: string[];
	origin: string;
}

export class Installer {
	private running: Promise<Located> | undefined;
	/** The step under way, for a wait that runs out. */
	step = "";
	startedAt = 0;

	constructor(
		private readonly extensionDir: string,
		readonly dir: string = installDir(),
		private readonly report: Report = () => undefined,
	) {}

	record(): InstallRecord | undefined {
		try {
			const value: unknown = JSON.parse(readFileSync(join(this.dir, RECORD), "utf8"));
			return isRecord(value) ? value : undefined;
		} catch {
			return undefined;
		}
	}

	/** The installed server when it is what this extension would install now. */
	current(source: InstallSource | undefined = findSource(this.extensionDir)): Located | undefined {
		const record = this.record();
		if (!isCurrent(record, source) || !record) return undefined;
		const bin = join(this.dir, record.venv, "bin", "pi-event-search");
		return existsSync(bin) ? { argv: [bin, "serve"], origin: `the server this extension installed (${record.version}, ${join(this.dir, record.venv)})` } : undefined;
	}

	/** The server, installing or updating it first when needed (one install at a time). */
	ensure(): Promise<Located> {
		const source = findSource(this.extensionDir);
		const ready = this.current(source);
		if (ready) return Promise.resolve(ready);
		if (!source) {
			return Promise.reject(new InstallFailed("pi-event-search is not installed, and this copy of the extension has nothing to install it from (neither a checkout of the repository around it nor a bundled wheel)."));
		}
		this.running ??= this.installLocked(source).finally(() => {
			this.running = undefined;
			this.report(undefined);
		});
		return this.running;
	}

	private say(step: string): void {
		this.step = step;
		this.report(`pi-event-search: ${step}`);
	}

	private async installLocked(source: InstallSource): Promise<Located> {
		this.startedAt = Date.now();
		mkdirSync(this.dir, { recursive: true });
		while (!this.tryLock()) {
			this.say("waiting for another Pi's server install");
			await sleep(500);
			const done = this.current(source);
			if (done) return done;
		}
		try {
			return this.current(source) ?? (await this.install(source));
		} finally {
			rmSync(join(this.dir, LOCK), { recursive: true, force: true });
		}
	}

	private tryLock(): boolean {
		const lock = join(this.dir, LOCK);
		try {
			mkdirSync(lock);
			writeFileSync(join(lock, "pid"), String(process.pid));
			return true;
		} catch {
			if (lockIsStale(lock)) rmSync(lock, { recursive: true, force: true });
			return false;
		}
	}

	private async install(source: InstallSource): Promise<Located> {
		this.say("looking for Python 3.11+");
		const probes = await Promise.all(PYTHON_NAMES.map(probe));
		const choice = choosePython(probes);
		if (!choice.ok) throw new InstallFailed(choice.message);
		const previous = this.record();
		const venv = venvName(source.version, new Date());
		const dir = join(this.dir, venv);
		try {
			this.say(`creating a private Python ${choice.python.version.join(".")} environment`);
			await run(choice.python.executable, ["-m", "venv", dir]);
			this.say(`installing server ${source.version}`);
			const pip = ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--progress-bar", "off", source.path];
			await run(join(dir, "bin", "python"), pip, (line) => {
				const step = pipStep(line);
				if (step) this.say(`installing server ${source.version}: ${step}`);
			});
			const record: InstallRecord = {
				version: source.version,
				identity: source.identity,
				source: source.path,
				venv,
				basePython: choice.python.executable,
				pythonVersion: choice.python.version.join("."),
				installedAt: new Date().toISOString(),
				seconds: Math.round((Date.now() - this.startedAt) / 100) / 10,
			};
			writeFileSync(join(this.dir, `${RECORD}.tmp`), JSON.stringify(record, null, 1));
			renameSync(join(this.dir, `${RECORD}.tmp`), join(this.dir, RECORD));
		} catch (err) {
			rmSync(dir, { recursive: true, force: true });
			throw err;
		}
		// The previous venv may still serve another Pi: keep it; older ones go.
		this.cleanUp([venv, previous?.venv]);
		return this.current(source) as Located;
	}

	private cleanUp(keep: (string | undefined)[]): void {
		for (const name of readdirSync(this.dir)) {
			if (name.startsWith("venv-") && !keep.includes(name)) rmSync(join(this.dir, name), { recursive: true, force: true });
		}
	}
}

function lockIsStale(lock: string): boolean {
	try {
		const age = Date.now() - statSync(lock).mtimeMs;
		const pid = Number(readFileSync(join(lock, "pid"), "utf8"));
		if (age > STALE_LOCK_MS) return true;
		process.kill(pid, 0);
		return false;
	} catch (err) {
		// No pid file yet (just made) is not stale; a pid that no longer exists is.
		return (err as NodeJS.ErrnoException).code === "ESRCH";
	}
}

function probe(name: string): Promise<Probe | undefined> {
	return new Promise((resolve) => {
		execFile(name, ["-c", PROBE], { timeout: 10_000 }, (err, stdout) => resolve(err ? undefined : parseProbe(stdout)));
	});
}

/** Runs a process to its end; its output's last lines name a failure. */
function run(command: string, args: string[], onLine?: (line: string) => void): Promise<void> {
	return new Promise((resolve, reject) => {
		const child = spawn(command, args, { env: { ...process.env, PIP_NO_INPUT: "1" }, stdio: ["ignore", "pipe", "pipe"] });
		let output = "";
		const take = (chunk: Buffer): void => {
			const text = chunk.toString("utf8");
			output = (output + text).slice(-8000);
			if (onLine) for (const line of text.split(/\r?\n/)) if (line.trim()) onLine(line);
		};
		child.stdout.on("data", take);
		child.stderr.on("data", take);
		const timer = setTimeout(() => child.kill("SIGKILL"), PIP_LIMIT_MS);
		child.on("error", (err) => {
			clearTimeout(timer);
			reject(new InstallFailed(`could not run ${command}: ${err.message}`));
		});
		child.on("close", (code, signal) => {
			clearTimeout(timer);
			if (code === 0) return resolve();
			const tail = output.trim().split(/\r?\n/).slice(-4).join(" | ");
			const venvHint = /ensurepip is not available|-venv/.test(output) ? " On Debian or Ubuntu install the python3-venv package for this Python." : "";
			const pipHint = args.includes("pip") ? " Is the Python package index reachable? (pip's own settings, such as a proxy or index URL in pip.conf, apply.)" : "";
			reject(new InstallFailed(`\`${[command, ...args].join(" ")}\` failed (${signal ?? `exit ${code}`}): ${tail}.${venvHint}${pipHint}`));
		});
	});
}

function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}
