/**
 * Pi extension: event_search, event_read and event_trace over the earlier Pi sessions of this
 * project, answered by one `pi-event-search serve` per Pi process (docs/protocol.md).
 */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { type ExtensionAPI, type ExtensionContext, getAgentDir } from "@mariozechner/pi-coding-agent";
import type { KeyId } from "@mariozechner/pi-tui";
import { openEvents, pickerSource, RecentQueries, recentFile } from "./events.ts";
import { Installer, installDir, type Located } from "./installer.ts";
import { prepareSearch, ReadSchema, SEARCH_LIMIT, SearchSchema, TraceSchema } from "./params.ts";
import { renderCall, renderResult } from "./render.ts";
import { configuredServer, EventServer, ServerUnavailable } from "./server.ts";
import { loadSettings, piSessionDirFor, type Settings } from "./settings.ts";
import { type Runtime, runRead, runSearch, runTrace } from "./tools.ts";

const STATUS_KEY = "pi-event-search";

const GUIDELINES = [
	"Use event_search to find what happened in earlier Pi sessions of this project: commands that were run, errors and their fixes, decisions, files touched, branches that were abandoned. It searches recorded history, not the code.",
	"Search with a few distinctive words (a name, an error, a command) or a \"quoted phrase\": fewer distinctive words beat many generic ones. Hits are ranked by evidence (rare words count most); a hit lacking a word is marked partial with the words it misses, so a miss does not mean nothing is there. Quoted phrases are exact. Add kinds, tool, errors or since to narrow. The current session is left out unless you name it with sessionId.",
	"When the question is which session something happened in, search with groupBy \"session\": one line per session, its strongest hit first; then search that session with sessionId, or event_read the hit.",
	"Then use event_read on a hit's ref for the exact content and its neighbours, and event_trace to see the branch around it (parent, children, abandoned siblings). Quote refs (pi-event:...) when you report what you found.",
	"When the user's message contains a pi-event:<sessionId>/<entryId> reference (pasted from /events), call event_read on it before acting on it: the reference names a recorded event, and only event_read shows what it says.",
];

/** Where this extension lives: its checkout or its npm package is what it installs a server from. */
const EXTENSION_DIR = dirname(dirname(fileURLToPath(import.meta.url)));

export default function (pi: ExtensionAPI): void {
	let settings: Settings | undefined;
	let settingsKey: string | undefined;
	let server: EventServer | undefined;
	/** The latest context with a UI, for the install's progress in the status line. */
	let ui: ExtensionContext["ui"] | undefined;
	const installer = new Installer(EXTENSION_DIR, installDir(), (step) => ui?.setStatus(STATUS_KEY, step));
	const recent = new RecentQueries(recentFile(installer.dir));

	/** A configured server or one on PATH; else the extension's own, installed on first use (bounded wait). */
	const locate = async (settings: Settings): Promise<Located> => {
		const found = configuredServer(settings);
		if (found) return found;
		let timer: NodeJS.Timeout | undefined;
		const waited = new Promise<never>((_resolve, reject) => {
			timer = setTimeout(() => {
				const seconds = Math.round((Date.now() - installer.startedAt) / 1000);
				reject(new ServerUnavailable(`pi-event-search is still installing its server (${installer.step}, ${seconds} s so far); it goes on in the background: try again in a minute. (Waited eventSearch.installWaitMs = ${settings.installWaitMs} ms.)`));
			}, settings.installWaitMs);
		});
		try {
			return await Promise.race([installer.ensure(), waited]);
		} finally {
			clearTimeout(timer);
		}
	};

	const rt: Runtime = {
		settings(cwd, trusted) {
			const key = `${cwd}\0${trusted}`;
			if (!settings || settingsKey !== key) {
				settings = loadSettings(getAgentDir(), cwd, process.env, trusted);
				settingsKey = key;
				for (const w of settings.warnings) console.error(`pi-event-search: ${w}`);
			}
			return settings;
		},
		server(cwd, sessionDir, trusted) {
			if (!server) {
				const base = rt.settings(cwd, trusted);
				server = new EventServer({ ...base, piSessionDir: piSessionDirFor(getAgentDir(), sessionDir) }, () => locate(base));
			}
			return server;
		},
	};

	pi.registerTool({
		name: "event_search",
		label: "Event search",
		description: `Full-text search over the recorded events (prompts, answers, tool calls and results, bash runs, summaries) of earlier Pi sessions of this project. Returns up to ${SEARCH_LIMIT.max} hits (default ${SEARCH_LIMIT.default}), each with a ref, kind, time, session, branch state and a snippet with matches in «». Hits are ranked by evidence (rare words count most, a long text less for one mention, words side by side more; the best 30 then ordered again by meaning, so your own words for what happened find it); a hit lacking words is marked "partial: matched 2 of 3 words; missing: …" (fewer distinctive words beat many generic ones; "quoted phrases" are exact; exact: true drops partial hits). A word the history never holds is corrected to the nearest recorded word, and the answer says so. With groupBy "session" it answers one line per matching session instead (its strongest hit's ref, its name or first prompt, how many of its events match, its last time), for "which session was it?". The current session is excluded unless sessionId names it; then only what was written before this call is searched. A pi-event: reference the user pasted needs no search: call event_read on it first.`,
		promptSnippet: "Search earlier Pi sessions of this project for commands, errors, decisions and abandoned branches",
		promptGuidelines: GUIDELINES,
		parameters: SearchSchema,
		prepareArguments: prepareSearch,
		executionMode: "parallel",
		execute: (id, args, signal, _onUpdate, ctx) => runSearch(rt, id, args, signal, ctx),
		renderCall: renderCall("event_search"),
		renderResult,
	});

	pi.registerTool({
		name: "event_read",
		label: "Event read",
		description: "Read one recorded event exactly (from the session file), with its neighbours in append or branch order. Long text is windowed: the answer says what was omitted and the offset to continue with. When the user's message contains a pi-event: reference (pasted from /events), read it with this tool before acting on it.",
		promptSnippet: "Read one event found by event_search, exactly, with its neighbours",
		parameters: ReadSchema,
		executionMode: "parallel",
		execute: (id, args, signal, _onUpdate, ctx) => runRead(rt, id, args, signal, ctx),
		renderCall: renderCall("event_read"),
		renderResult,
	});

	pi.registerTool({
		name: "event_trace",
		label: "Event trace",
		description: "The session tree around one recorded event: its parent, children, siblings (other branches from the same parent), the way toward the branch's leaf, and related events (the call of a tool result, labels, compactions, files, parent and child sessions), each with a ref.",
		promptSnippet: "Show the branch around an event: parent, children, abandoned siblings",
		parameters: TraceSchema,
		executionMode: "parallel",
		execute: (id, args, signal, _onUpdate, ctx) => runTrace(rt, id, args, signal, ctx),
		renderCall: renderCall("event_trace"),
		renderResult,
	});

	const events = async (args: string, ctx: ExtensionContext): Promise<void> => {
		ui = ctx.ui;
		try {
			recent.add(await openEvents(ctx.ui, pickerSource(rt, ctx), args.trim()));
		} catch (err) {
			ctx.ui.notify((err as Error).message, "error");
		}
	};
	pi.registerCommand("events", {
		description: "Search this project's earlier Pi sessions; insert an event's reference (or a quote) at the cursor",
		getArgumentCompletions: (prefix) => recent.completions(prefix),
		handler: events,
	});
	// The user's settings only (a project's cannot choose keys): no trust decision is needed.
	const shortcut = rt.settings(process.cwd(), false).shortcut;
	if (shortcut) {
		pi.registerShortcut(shortcut as KeyId, { description: "Search earlier Pi sessions (/events)", handler: (ctx) => events("", ctx) });
	}
	pi.on("session_start", (_event, ctx) => {
		if (ctx.hasUI) ui = ctx.ui;
	});

	// With a tool_call handler registered, Pi writes its queued entries before a tool runs: the
	// entry holding the call (the cutoff) is then on disk when execute starts.
	pi.on("tool_call", () => undefined);

	// Freshness without delaying Pi: ask for a refresh, never await it here.
	// Only this Pi's own session file changed; the server's watcher follows every other file.
	const refresh = (file: string | undefined): void => server?.refreshSoon(file ? [file] : undefined);
	pi.on("turn_end", (_event, ctx) => refresh(ctx.sessionManager.getSessionFile()));
	pi.on("agent_end", (_event, ctx) => refresh(ctx.sessionManager.getSessionFile()));

	pi.on("session_shutdown", async () => {
		const s = server;
		server = undefined;
		await s?.stop();
	});
}
