/**
 * The extension's own server, installed on first use by the project's one bootstrap
 * (server/pi_event_search/bootstrap.py: Python probe, venv, lock, version record). This module
 * only runs it and shows its progress in Pi's status line: the checkout's bootstrap when the
 * extension sits in a checkout, else the one an npm package carries beside its wheelhouse.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export class InstallFailed extends Error {}

export type Report = (step: string | undefined) => void;

export interface Located {
	argv: string[];
	origin: string;
}

/** Where the venvs live: $PI_EVENT_SEARCH_HOME, else the XDG data directory (not Pi's own directory). */
export function installDir(env: NodeJS.ProcessEnv = process.env): string {
	if (env.PI_EVENT_SEARCH_HOME) return join(env.PI_EVENT_SEARCH_HOME, "pi-extension");
	const data = env.XDG_DATA_HOME || join(env.HOME || homedir(), ".local", "share");
	return join(data, "pi-event-search", "pi-extension");
}

/** The packaged bootstrap (with its wheelhouse) wins over the checkout's. */
export function bootstrapScript(extensionDir: string): string | undefined {
	const candidates = [join(extensionDir, "bootstrap", "bootstrap.py"), join(extensionDir, "..", "..", "server", "pi_event_search", "bootstrap.py")];
	return candidates.find((file) => existsSync(file));
}

/**
 * The commands that may run the bootstrap: any Python 3 will (it finds a 3.11+ itself, or says what
 * is missing). Windows: the py launcher first; macOS: Homebrew's and python.org's too, for a Pi
 * started with a PATH that lacks them.
 */
export function bootstrapPythons(platform: NodeJS.Platform = process.platform): [string, ...string[]][] {
	if (platform === "win32") return [["py", "-3"], ["python"], ["python3"]];
	if (platform === "darwin") return [["python3"], ["/opt/homebrew/bin/python3"], ["/usr/local/bin/python3"], ["python"]];
	return [["python3"], ["python"]];
}

/** What to say, per platform, when no Python can run the bootstrap at all. */
export function noPython(platform: NodeJS.Platform = process.platform): string {
	const how =
		platform === "win32"
			? "On Windows: `winget install Python.Python.3.13`, or the installer from python.org"
			: platform === "darwin"
				? "On macOS: `brew install python@3.13`, or the installer from python.org"
				: "On Debian or Ubuntu: `sudo apt install python3 python3-venv`; on Fedora: `sudo dnf install python3`";
	const tried = bootstrapPythons(platform).map((c) => c.join(" ")).join(", ");
	return (
		`pi-event-search needs Python 3.11 or newer to install its server, and there is none (tried ${tried}). ${how}. ` +
		"To use a server you installed yourself instead, put it on PATH or set eventSearch.server in ~/.pi/agent/settings.json."
	);
}

interface Event {
	event: string;
	step?: string;
	message?: string;
	fix?: string;
	server?: string;
	venv?: string;
	record?: { version?: string };
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

	/** The server, installing or updating it first when needed (one bootstrap run at a time). */
	ensure(): Promise<Located> {
		this.running ??= this.bootstrap().finally(() => {
			this.running = undefined;
			this.report(undefined);
		});
		return this.running;
	}

	private say(step: string): void {
		this.step = step;
		this.report(`pi-event-search: ${step}`);
	}

	private async bootstrap(): Promise<Located> {
		this.startedAt = Date.now();
		const script = bootstrapScript(this.extensionDir);
		if (!script) throw new InstallFailed("pi-event-search is not installed, and this copy of the extension has nothing to install it from (neither a checkout of the repository around it nor a packaged bootstrap).");
		let last: Event | undefined;
		for (const [python, ...flags] of bootstrapPythons()) {
			last = await runBootstrap(python, [...flags, script, "--home", this.dir], (e) => {
				// A current install answers at once; only real work reaches the status line.
				if ((e.event === "step" && e.step !== "python") || e.event === "waiting") this.say(e.message ?? "");
			});
			if (last) break;
		}
		if (!last) throw new InstallFailed(noPython());
		if (last.event !== "done" || !last.server) throw new InstallFailed(`pi-event-search could not install its server: ${last.message ?? "the bootstrap ended without a result"}`);
		return { argv: [last.server, "serve"], origin: `the server this extension installed (${last.record?.version ?? "?"}, ${last.venv})` };
	}
}

/** Runs the bootstrap to its end: its last event, or undefined when this Python does not exist. */
function runBootstrap(python: string, args: string[], onEvent: (e: Event) => void): Promise<Event | undefined> {
	return new Promise((resolve) => {
		const child = spawn(python, args, { stdio: ["ignore", "pipe", "pipe"] });
		let last: Event | undefined;
		let partial = "";
		let stderr = "";
		child.stdout.on("data", (chunk: Buffer) => {
			const lines = (partial + chunk.toString("utf8")).split("\n");
			partial = lines.pop() ?? "";
			for (const line of lines) {
				try {
					last = JSON.parse(line) as Event;
					onEvent(last);
				} catch {
					// not an event (an interpreter too old to run it prints a traceback to stderr)
				}
			}
		});
		child.stderr.on("data", (chunk: Buffer) => {
			stderr = (stderr + chunk.toString("utf8")).slice(-4000);
		});
		child.on("error", () => resolve(undefined));
		child.on("close", (code) => {
			if (!last || (code !== 0 && last.event !== "error")) {
				const tail = stderr.trim().split(/\r?\n/).slice(-3).join(" | ");
				resolve({ event: "error", message: `\`${python} ${args.join(" ")}\` exited with ${code}: ${tail}` });
			} else resolve(last);
		});
	});
}
