// Writes Oh My Pi test sessions with Oh My Pi's own SessionManager (@oh-my-pi/pi-coding-agent,
// pinned in package-lock.json), then reopens every file with it and records Oh My Pi's view of
// it: the oracle tests/ompwriter.py hands to the tests.
//
// Usage: bun write-sessions.ts OUT.json   (HOME must be the fake home the sessions go under:
// Oh My Pi resolves ~/.omp/agent/sessions/-<cwd under home>/ from it when the module loads)
//
// Scenario "main": a title set by the user (the 256-byte title record on line 1, a title_change
// entry), model/thinking/service-tier/mode changes, a user prompt with a pasted image (a blob
// reference), an assistant tool call and its result, a Python cell, an @file mention, a TTSR
// injection, a credential pin, a model usage, a custom message, a label, an abandoned branch, a
// compaction, a /clear (reset_boundary) and the turn after it, with failed answers in it. Scenario "subagent": the transcript
// of a task subagent nested at <main session>/<AgentId>.jsonl, as the task tool opens it.
import * as fs from "node:fs";
import * as path from "node:path";
import { SessionManager } from "@oh-my-pi/pi-coding-agent/session/session-manager";

const out = process.argv[2];
if (!out) throw new Error("usage: bun write-sessions.ts OUT.json");
const home = process.env.HOME;
if (!home) throw new Error("HOME must be set");
const cwd = path.join(home, "proj");
fs.mkdirSync(cwd, { recursive: true });

let clock = Date.parse("2026-09-20T10:00:00.000Z");
const tick = () => (clock += 1000);
const usage = {
	input: 120, output: 40, cacheRead: 0, cacheWrite: 0, totalTokens: 160,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const assistant = (content: unknown[], stopReason = "stop") => ({
	role: "assistant", content, api: "anthropic-messages", provider: "anthropic",
	model: "claude-sonnet-4-5", usage, stopReason, timestamp: tick(),
});
const user = (content: unknown) => ({ role: "user", content, timestamp: tick() });
// A PNG-sized payload: Oh My Pi moves image data of 1 KB or more into its blob store.
const imageData = Buffer.alloc(3000, 7).toString("base64");

const marks: Record<string, string> = {};
const sm = SessionManager.create(cwd);
marks.model = sm.appendModelChange("anthropic/claude-sonnet-4-5", "default");
marks.smol = sm.appendModelChange("anthropic/claude-haiku-4-5", "smol");
marks.thinking = sm.appendThinkingLevelChange("high", "auto");
marks.tier = sm.appendServiceTierChange({ openai: "priority" } as never);
marks.plan = sm.appendModeChange("plan", { planFile: "PLAN.md" });
marks.prompt = sm.appendMessage(user([
	{ type: "text", text: "Why does the websocket reconnect test flake on CI?" },
	{ type: "image", data: imageData, mimeType: "image/png" },
]) as never);
marks.call = sm.appendMessage(assistant([
	{ type: "text", text: "Let me run the reconnect test in a loop." },
	{ type: "toolCall", id: "call_ws_1", name: "bash", arguments: { command: "bun test reconnect --rerun-each 20" } },
], "toolUse") as never);
marks.result = sm.appendMessage({
	role: "toolResult", toolCallId: "call_ws_1", toolName: "bash", isError: true,
	content: [{ type: "text", text: "reconnect.test.ts: ECONNRESET after 3 of 20 runs" }], timestamp: tick(),
} as never);
marks.python = sm.appendMessage({
	role: "pythonExecution", code: "print(sum(range(10)))", output: "45\n", exitCode: 0,
	cancelled: false, truncated: false, timestamp: tick(),
} as never);
marks.mention = sm.appendMessage({
	role: "fileMention", timestamp: tick(),
	files: [{ path: "src/ws/reconnect.ts", content: "export const BACKOFF_MS = 250; // jitter missing", lineCount: 1 }],
} as never);
marks.ttsr = sm.appendTtsrInjection(["no-sleep-in-tests"]);
marks.pin = sm.appendCredentialPin("anthropic", "9f2c4e7a1b3d5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8");
marks.usage = sm.appendModelUsage({
	purpose: "title", role: "smol", api: "anthropic-messages", provider: "anthropic",
	model: "claude-haiku-4-5", usage, stopReason: "stop",
} as never, { sessionId: sm.getSessionId(), parentId: sm.getLeafId() });
marks.answer = sm.appendMessage(assistant([
	{ type: "text", text: "The backoff has no jitter, so parallel clients reconnect in lockstep." },
]) as never);
marks.custom = sm.appendCustomMessageEntry("review-note", "Reviewer: add jitter to the backoff.", true);
marks.label = sm.appendLabelChange(marks.answer, "root cause");
// An abandoned attempt: back to the prompt's answer, a different question.
marks.alternate = sm.appendMessage(user("Try pinning the port instead?") as never);
sm.branch(marks.label);
marks.fix = sm.appendMessage(user("Add jitter to the reconnect backoff.") as never);
marks.fixed = sm.appendMessage(assistant([{ type: "text", text: "Added 0-100 ms jitter to BACKOFF_MS." }]) as never);
marks.compaction = sm.appendCompaction(
	"Investigated the flaky websocket reconnect test; cause: backoff without jitter.",
	"Flaky reconnect: no jitter", marks.fix, 5000);
marks.postCompaction = sm.appendMessage(user("Does the test pass now?") as never);
marks.postAnswer = sm.appendMessage(assistant([{ type: "text", text: "Yes, 20 of 20 runs pass." }]) as never);
marks.reset = sm.appendResetBoundary();
marks.afterReset = sm.appendMessage(user("Now update the changelog for the reconnect fix.") as never);
// Answers Oh My Pi leaves out of the model context when it replays the session: an aborted one
// (and the result of its call), an error turn with nothing in it, a retry's superseded attempt;
// and an errored one it keeps, because the hidden interrupted-thinking note follows it.
marks.aborted = sm.appendMessage(assistant([
	{ type: "toolCall", id: "call_cl_1", name: "read", arguments: { path: "CHANGELOG.md" } },
], "aborted") as never);
marks.abortedResult = sm.appendMessage({
	role: "toolResult", toolCallId: "call_cl_1", toolName: "read", isError: true,
	content: [{ type: "text", text: "Tool execution was aborted" }], timestamp: tick(),
} as never);
marks.erroredKept = sm.appendMessage(assistant([
	{ type: "thinking", thinking: "The changelog groups fixes under a Fixed heading" },
], "error") as never);
marks.interrupted = sm.appendCustomMessageEntry("interrupted-thinking", "Your previous answer was cut off.", false);
marks.emptyError = sm.appendMessage(assistant([], "error") as never);
marks.superseded = sm.appendMessage({
	...assistant([{ type: "text", text: "Updating the changelog (first attempt)." }]),
	retryRecovery: { status: "superseded" },
} as never);
// An answer of nothing but a tool call stays while its result is in the context; one whose result
// is on another branch (the person went back to it and said something else) is left out.
marks.bareCall = sm.appendMessage(assistant([
	{ type: "toolCall", id: "call_gl_1", name: "bash", arguments: { command: "git log -1 --oneline" } },
], "toolUse") as never);
marks.bareResult = sm.appendMessage({
	role: "toolResult", toolCallId: "call_gl_1", toolName: "bash", isError: false,
	content: [{ type: "text", text: "4f2a9c1 ws: jitter the reconnect backoff" }], timestamp: tick(),
} as never);
marks.danglingBare = sm.appendMessage(assistant([
	{ type: "toolCall", id: "call_gl_2", name: "bash", arguments: { command: "git push" } },
], "toolUse") as never);
marks.danglingResult = sm.appendMessage({
	role: "toolResult", toolCallId: "call_gl_2", toolName: "bash", isError: false,
	content: [{ type: "text", text: "Everything up-to-date" }], timestamp: tick(),
} as never);
sm.branch(marks.danglingBare);
marks.neverMind = sm.appendMessage(user("Do not push yet.") as never);
// Oh My Pi walks the answers from the last: the aborted one goes with its result, and then the
// interrupted-thinking note follows the failed one before it, which stays.
marks.failedFirst = sm.appendMessage(assistant([{ type: "text", text: "Holding the push" }], "error") as never);
marks.abortedSecond = sm.appendMessage(assistant([
	{ type: "toolCall", id: "call_st_1", name: "bash", arguments: { command: "git status" } },
], "aborted") as never);
marks.abortedSecondResult = sm.appendMessage({
	role: "toolResult", toolCallId: "call_st_1", toolName: "bash", isError: true,
	content: [{ type: "text", text: "Tool execution was aborted" }], timestamp: tick(),
} as never);
marks.note = sm.appendCustomMessageEntry("interrupted-thinking", "Your previous answer was cut off.", false);
marks.afterResetAnswer = sm.appendMessage(assistant([{ type: "text", text: "CHANGELOG.md updated under Fixed." }]) as never);
await sm.setSessionName("Flaky websocket reconnect", "user", "user");
await sm.flush();
const mainFile = sm.getSessionFile();
const artifacts = sm.getArtifactsDir();
await sm.close();
if (!mainFile || !artifacts) throw new Error("the main session was not persisted");

// The task tool's subagent: opened at <artifacts>/<AgentId>.jsonl with the parent's file.
const subFile = path.join(artifacts, "Scout.jsonl");
const sub = await SessionManager.open(subFile, undefined, undefined, {
	initialCwd: cwd, parentSession: mainFile, suppressBreadcrumb: true,
});
const subMarks: Record<string, string> = {};
subMarks.init = sub.appendSessionInit({
	systemPrompt: "You are a scout. Read code, report findings, change nothing.",
	task: "Find every caller of scheduleReconnect", tools: ["read", "grep"], agent: "scout",
	modelRole: "smol", resolvedModel: "anthropic/claude-haiku-4-5", readOnly: true,
});
subMarks.task = sub.appendMessage(user("Find every caller of scheduleReconnect") as never);
subMarks.report = sub.appendMessage(assistant([
	{ type: "text", text: "scheduleReconnect is called from onClose and from the heartbeat timeout." },
]) as never);
await sub.flush();
await sub.close();

async function view(file: string, scenario: string, marks: Record<string, string>) {
	const m = await SessionManager.open(file);
	const entries = m.getEntries();
	const byMessage = new Map<unknown, string>();
	for (const e of entries) if (e.type === "message") byMessage.set(e.message, e.id);
	const branch = m.getBranch();
	const ctx = m.buildSessionContext();
	const claimed = new Set<string>();
	const context = ctx.messages.map(msg => {
		const direct = byMessage.get(msg);
		if (direct) return direct;
		const role = (msg as { role: string }).role;
		if (role === "compactionSummary") {
			return [...branch].reverse().find(e => e.type === "compaction")?.id ?? null;
		}
		// Custom messages carry no entry id: match the next unused one on the branch with the same
		// time and text. Two identical notes written in one millisecond must not map to the same id.
		const { timestamp: ts, content } = msg as { timestamp?: number; content?: unknown };
		const hit = branch.find(e => e.type === "custom_message" && !claimed.has(e.id)
			&& Date.parse(e.timestamp) === ts
			&& JSON.stringify((e as { content?: unknown }).content) === JSON.stringify(content));
		if (hit) claimed.add(hit.id);
		return hit?.id ?? null;
	});
	const header = m.getHeader();
	return {
		path: file, scenario, sessionId: m.getSessionId(), cwd: m.getCwd(),
		parentSession: header?.parentSession ?? null, title: m.getSessionName() ?? null,
		entries: entries.map(e => e.id), types: Object.fromEntries(entries.map(e => [e.id, e.type])),
		leafId: m.getLeafId(), selected: branch.map(e => e.id), context,
		models: ctx.models, mode: ctx.mode, injectedTtsrRules: ctx.injectedTtsrRules, marks,
	};
}

const pkg = JSON.parse(fs.readFileSync(
	path.join(import.meta.dir, "node_modules/@oh-my-pi/pi-coding-agent/package.json"), "utf8"));
const oracle = {
	omp_version: pkg.version,
	sessions: [await view(mainFile, "main", marks), await view(subFile, "subagent", subMarks)],
};
fs.writeFileSync(out, JSON.stringify(oracle, null, 1));
