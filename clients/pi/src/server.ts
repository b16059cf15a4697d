/**
 * One long-lived `pi-event-search serve` per Pi process: found on PATH (or named by
 * $PI_EVENT_SEARCH_SERVER / the eventSearch.server setting), started on first use, initialized with
 * the caller's authorization root, refreshed without delaying Pi, stopped on session_shutdown.
 * A server that is missing, crashes or does not answer becomes an error that says what to do;
 * nothing here waits without a bound.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";
import { InstallFailed, type Located } from "./installer.ts";
import { RpcAborted, RpcClosed, RpcConnection, RpcError, RpcTimeout } from "./rpc.ts";
import type { Settings } from "./settings.ts";
import { SERVER_ENV } from "./settings.ts";

export const INSTALL_HINT =
	"Reinstall the extension (`pi install` of the pi-event-search repository installs its own server on first use), " +
	"put a `pi-event-search` on PATH (`pip install pi-event-search`, or ./scripts/install-and-search in a checkout), " +
	`or point $${SERVER_ENV} or the eventSearch.server setting in ~/.pi/agent/settings.json at one.`;

/** What a server answers while another process opens (or migrates) the shared index. */
export const OPENING = "index is being opened by another process; retrying";
const OPENING_POLL_MS = 250;
/** How long the first call waits for the first index pass before answering with what is there. */
export const FIRST_PASS_WAIT_MS = 10_000;

/** The server cannot be used: not installed, failed to start, or died. */
export class ServerUnavailable extends Error {}

export function findOnPath(name: string, pathVar = process.env.PATH ?? ""): string | undefined {
	for (const dir of pathVar.split(delimiter)) {
		if (!dir) continue;
		const candidate = join(dir, name);
		try {
			accessSync(candidate, constants.X_OK);
			return candidate;
		} catch {
			// not here
		}
	}
	return undefined;
}

/** The configured command (with `serve` added when it lacks it), else the one on PATH, else none. */
export function configuredServer(settings: Settings, pathVar?: string): Located | undefined {
	if (settings.server) {
		return { argv: settings.server.includes("serve") ? settings.server : [...settings.server, "serve"], origin: settings.serverOrigin };
	}
	const found = findOnPath("pi-event-search", pathVar);
	return found ? { argv: [found, "serve"], origin: "PATH" } : undefined;
}

/** The argv to run, or an error saying how to get a server. */
export function serverArgv(settings: Settings, pathVar?: string): string[] {
	const found = configuredServer(settings, pathVar);
	if (!found) throw new ServerUnavailable(`pi-event-search is not installed: no \`pi-event-search\` on PATH. ${INSTALL_HINT}`);
	return found.argv;
}

/** Finds (or installs) the server to start. */
export type Locate = () => Promise<Located>;

const STOP_MS = 2000;

export class EventServer {
	private child: ChildProcessWithoutNullStreams | undefined;
	private conn: RpcConnection | undefined;
	/** The connection once initialized and through its first index pass. */
	private ready: RpcConnection | undefined;
	private starting: Promise<RpcConnection> | undefined;
	private roots: string[] = [];
	private refreshing: Promise<void> | undefined;
	/** A refresh asked for while one ran: null = none, "all" = everything, else these files. */
	private again: Set<string> | "all" | null = null;
	private stderrTail = "";
	/** The command last started, for error messages. */
	private command = "";
	/** Set when the first index pass did not finish within startTimeoutMs. */
	stillIndexing = false;

	constructor(
		private readonly settings: Settings,
		private readonly locate: Locate = () => Promise.resolve({ argv: serverArgv(settings), origin: settings.serverOrigin }),
	) {}

	get running(): boolean {
		return this.ready !== undefined && !this.ready.closed;
	}

	/** The connection, starting the server on first use (or after it died). */
	async connection(roots: string[], signal?: AbortSignal): Promise<RpcConnection> {
		if (this.ready && !this.ready.closed) {
			if (roots.join("\0") !== this.roots.join("\0")) this.changeRoots(roots);
			return this.ready;
		}
		this.starting ??= this.start(roots).finally(() => {
			this.starting = undefined;
		});
		return abortable(this.starting, signal);
	}

	async request<T>(method: string, params: unknown, roots: string[], signal?: AbortSignal): Promise<T> {
		const conn = await this.connection(roots, signal);
		try {
			return await retryWhileOpening(() => conn.request<T>(method, params, { timeoutMs: this.settings.timeoutMs, signal }), this.settings.timeoutMs, signal);
		} catch (err) {
			throw this.explain(err);
		}
	}

	/**
	 * Bring the index up to date and wait for it (bounded). With `paths` (files this Pi wrote), just
	 * those files; the server refreshes everything when it does not know one of them yet.
	 */
	async refreshNow(roots: string[], signal?: AbortSignal, paths?: string[]): Promise<void> {
		await this.request("piEvents/reindex", reindexParams(paths), roots, signal);
	}

	/** Ask for a refresh without waiting (turn_end, agent_end): one at a time, coalesced. */
	refreshSoon(paths?: string[]): void {
		if (!this.running) return;
		if (this.refreshing) {
			this.again = mergePaths(this.again, paths);
			return;
		}
		const conn = this.ready as RpcConnection;
		this.refreshing = conn
			.request("piEvents/reindex", reindexParams(paths), { timeoutMs: this.settings.startTimeoutMs })
			.then(
				() => undefined,
				() => undefined, // the watcher, the next turn and calls into this session catch up
			)
			.finally(() => {
				this.refreshing = undefined;
				const again = this.again;
				this.again = null;
				if (again !== null) this.refreshSoon(again === "all" ? undefined : [...again]);
			});
	}

	/** Wait for a background refresh in flight, if any (bounded by the request timeout). */
	async settled(signal?: AbortSignal): Promise<void> {
		if (!this.refreshing) return;
		let timer: NodeJS.Timeout | undefined;
		const timeout = new Promise<void>((resolve) => {
			timer = setTimeout(resolve, this.settings.timeoutMs);
		});
		try {
			await abortable(Promise.race([this.refreshing, timeout]), signal);
		} finally {
			clearTimeout(timer);
		}
	}

	async stop(): Promise<void> {
		const child = this.child;
		const conn = this.conn;
		this.child = undefined;
		this.conn = undefined;
		this.ready = undefined;
		if (!child) return;
		if (conn && !conn.closed) {
			try {
				await conn.request("shutdown", null, { timeoutMs: STOP_MS });
				conn.notify("exit", null);
			} catch {
				// it is going away either way
			}
			conn.close("stopped");
		}
		if (child.exitCode === null && child.signalCode === null) {
			const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
			const timer = setTimeout(() => child.kill("SIGKILL"), STOP_MS);
			child.stdin.end();
			await Promise.race([exited, new Promise((r) => setTimeout(r, STOP_MS + 500))]);
			clearTimeout(timer);
		}
	}

	private async start(roots: string[]): Promise<RpcConnection> {
		let located: Located;
		try {
			located = await this.locate();
		} catch (err) {
			throw err instanceof InstallFailed ? new ServerUnavailable(err.message) : err;
		}
		const argv = located.argv;
		this.command = `\`${argv.join(" ")}\` (from ${located.origin})`;
		const child = spawn(argv[0] as string, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env: process.env });
		const conn = new RpcConnection(child.stdout, child.stdin);
		this.child = child;
		this.conn = conn;
		this.stderrTail = "";
		child.stderr.on("data", (chunk: Buffer) => {
			this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-2000);
		});
		conn.onNotification("piEvents/indexChanged", (p) => {
			if ((p as { indexing?: boolean } | null)?.indexing === false) this.stillIndexing = false;
		});
		child.on("error", (err) => conn.close(`cannot run \`${argv.join(" ")}\` (${located.origin}): ${err.message}`));
		child.on("exit", (code, sig) => conn.close(`\`${argv.join(" ")}\` exited (${sig ?? `code ${code}`})`));
		// A server left behind must never keep Pi alive or outlive it.
		child.unref();
		process.once("exit", () => child.kill());
		const timeoutMs = this.settings.startTimeoutMs;
		try {
			await conn.request("initialize", initializeParams(roots, this.settings), { timeoutMs });
			conn.notify("initialized", {});
			this.roots = roots;
		} catch (err) {
			void this.stop();
			throw this.explain(err, true);
		}
		// The first pass of the index (the server starts it after `initialized`): wait for it a
		// little, so a small history is complete at the first search; a large one answers with
		// what is indexed so far (the search result says how far, `indexing`).
		const firstPass = Math.min(timeoutMs, FIRST_PASS_WAIT_MS);
		try {
			await retryWhileOpening(() => conn.request("piEvents/reindex", {}, { timeoutMs: firstPass }), firstPass);
			this.stillIndexing = false;
		} catch (err) {
			if (!(err instanceof RpcTimeout) && !isOpening(err)) throw this.explain(err, true);
			this.stillIndexing = !(await untilSomethingIndexed(conn, timeoutMs - firstPass));
		}
		if (this.conn !== conn) throw new ServerUnavailable("the pi-event-search server was stopped (the session ended)");
		this.ready = conn;
		return conn;
	}

	private changeRoots(roots: string[]): void {
		this.roots = roots;
		this.conn?.notify("workspace/didChangeConfiguration", { settings: { piEvents: { roots } } });
	}

	/** Errors as the model should read them: what failed and what to do. */
	private explain(err: unknown, starting = false): Error {
		if (err instanceof ServerUnavailable || err instanceof RpcAborted) return err;
		const tail = this.stderrTail.trim().split("\n").slice(-3).join(" | ");
		if (err instanceof RpcClosed) {
			const what = starting ? `pi-event-search could not be started with ${this.command}` : "the pi-event-search server stopped";
			return new ServerUnavailable(`${what}: ${err.message}${tail ? ` (stderr: ${tail})` : ""}. ${INSTALL_HINT}`);
		}
		if (err instanceof RpcTimeout && starting) {
			return new ServerUnavailable(`pi-event-search did not answer (${this.command}): ${err.message}. ${INSTALL_HINT}`);
		}
		return err instanceof Error ? err : new Error(String(err));
	}
}

export function isOpening(err: unknown): boolean {
	return err instanceof RpcError && err.message.startsWith(OPENING);
}

/** Repeats a request that failed because another process holds the index open, within `boundMs`. */
export async function retryWhileOpening<T>(call: () => Promise<T>, boundMs: number, signal?: AbortSignal): Promise<T> {
	const until = Date.now() + boundMs;
	for (;;) {
		try {
			return await call();
		} catch (err) {
			if (!isOpening(err) || Date.now() + OPENING_POLL_MS > until || signal?.aborted) throw err;
			await new Promise((resolve) => setTimeout(resolve, OPENING_POLL_MS));
		}
	}
}

export function reindexParams(paths?: string[]): object {
	return paths && paths.length > 0 ? { paths } : {};
}

/** Two pending refreshes as one: everything wins over files. */
export function mergePaths(pending: Set<string> | "all" | null, paths?: string[]): Set<string> | "all" {
	if (pending === "all" || !paths || paths.length === 0) return "all";
	return new Set([...(pending ?? []), ...paths]);
}

export function initializeParams(roots: string[], settings: Settings): object {
	const folders = roots.map((r) => ({ uri: pathToFileURL(r).href, name: r }));
	return {
		processId: process.pid,
		clientInfo: { name: "pi-event-search-pi", version: "0.1.0" },
		rootUri: folders[0]?.uri ?? null,
		workspaceFolders: folders,
		capabilities: { window: { workDoneProgress: false } },
		initializationOptions: {
			roots,
			watch: true,
			// Said explicitly: whatever answers is asked for masked text. No setting of this
			// extension, project file or tool argument changes it (a model must never see them).
			revealSecrets: false,
			...(settings.indexPath ? { indexPath: settings.indexPath } : {}),
			...(settings.sessionDirs ? { sessionDirs: settings.sessionDirs } : {}),
			...(settings.piSessionDir ? { piSessionDir: settings.piSessionDir } : {}),
			...(settings.extractors ? { extractors: settings.extractors } : {}),
		},
	};
}

/** The promise, or an RpcAborted as soon as the signal fires (the promise itself continues). */
export function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
	if (!signal) return promise;
	if (signal.aborted) return Promise.reject(new RpcAborted("cancelled"));
	let onAbort = (): void => undefined;
	const aborted = new Promise<never>((_resolve, reject) => {
		onAbort = () => reject(new RpcAborted("cancelled"));
		signal.addEventListener("abort", onAbort, { once: true });
	});
	// The race passes the promise's own rejection through untouched, whatever it is.
	return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

/** Past the first-pass wait, an index that holds none of this project's sessions yet has nothing to
 * answer with: wait on (a busy machine makes even a small history slow), until the first pass ends or
 * the first of them is committed, within `budgetMs`. True when the first pass has ended. */
async function untilSomethingIndexed(conn: RpcConnection, budgetMs: number): Promise<boolean> {
	const end = Date.now() + budgetMs;
	while (Date.now() < end) {
		try {
			const s = await conn.request<{ server?: { state?: string }; sessions?: number }>("piEvents/status", {}, { timeoutMs: Math.max(1, end - Date.now()) });
			if (s.server?.state === "ready") return true;
			if ((s.sessions ?? 0) > 0) return false;
		} catch (err) {
			if (!isOpening(err)) return false;
		}
		await new Promise((r) => setTimeout(r, 500));
	}
	return false;
}
