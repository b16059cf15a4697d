/**
 * Test-only Pi extension: a scripted model (pi-ai's faux provider) exposed to the real CLI as
 * provider "fake", model "fake-1". The script is a JSON file named by $PI_FAKE_SCRIPT:
 *   {"turns": [{"calls": [{"name": "event_search", "args": {...}}, ...]}, ..., {"text": "done"}]}
 * (a turn {"error": "503 overloaded"} is a failed attempt, which Pi retries)
 * Placeholders in string arguments: "$SESSION" (the current session id) and "$REF" (the first
 * pi-event reference in the first event_search result of the latest batch). With $PI_FAKE_PROMPT_OUT
 * set, the system prompt of the first request is written there.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { type Context, fauxAssistantMessage, fauxToolCall, getApiProvider, registerFauxProvider } from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";

interface Turn {
	calls?: { name: string; args: Record<string, unknown> }[];
	text?: string;
	/** A failed attempt with this provider error (e.g. "503 overloaded": Pi 1.x retries it). */
	error?: string;
}

/** The first reference in the first event_search result of the latest batch of tool results. */
function latestRef(context: Context): string {
	const messages = context.messages as { role: string; toolName?: string; content: unknown }[];
	let start = messages.length;
	while (start > 0 && messages[start - 1]?.role === "toolResult") start--;
	for (const m of messages.slice(start)) {
		if (m.toolName !== "event_search" || !Array.isArray(m.content)) continue;
		const text = m.content.map((c: { text?: string }) => c.text ?? "").join("\n");
		const found = /pi-event:[A-Za-z0-9._-]+\/[A-Za-z0-9._~-]+/.exec(text);
		if (found) return found[0];
	}
	return "pi-event:none/none";
}

/** The system prompt: Pi 0.73's `systemPrompt`, or Pi 1.x's system messages (content, sections). */
function promptOf(context: Context): string {
	const messages = context.messages as { role: string; content?: unknown; sections?: Record<string, string | null> }[];
	const system = messages
		.filter((m) => m.role === "system")
		.flatMap((m) => [typeof m.content === "string" ? m.content : "", ...Object.values(m.sections ?? {})]);
	return [context.systemPrompt ?? "", ...system].filter((s): s is string => typeof s === "string").join("\n");
}

export default function (pi: ExtensionAPI): void {
	const script = JSON.parse(readFileSync(process.env.PI_FAKE_SCRIPT as string, "utf8")) as { turns: Turn[] };
	let sessionId = "";
	pi.on("session_start", async (_event, ctx) => {
		sessionId = ctx.sessionManager.getSessionId();
	});
	const fill = (value: unknown, context: Context): unknown => {
		if (typeof value === "string") return value.replaceAll("$SESSION", sessionId).replaceAll("$REF", latestRef(context));
		if (Array.isArray(value)) return value.map((v) => fill(v, context));
		return value;
	};
	// A sequential tool: a batch holding it runs one call at a time, so its result is written
	// before the next call of the batch starts (the cutoff must still exclude it).
	pi.registerTool({
		name: "scratch_note",
		label: "Scratch note",
		description: "Echoes a note (test tool).",
		parameters: Type.Object({ text: Type.String() }),
		executionMode: "sequential",
		execute: async (_id, args) => ({ content: [{ type: "text", text: `noted: ${args.text}` }], details: {} }),
	});
	const faux = registerFauxProvider({ api: "fake-api", provider: "fake" });
	faux.setResponses(
		script.turns.map((turn, i) => (context: Context) => {
			// What the model was told (the tools' snippets and guidelines), for the test to check.
			if (i === 0 && process.env.PI_FAKE_PROMPT_OUT) writeFileSync(process.env.PI_FAKE_PROMPT_OUT, promptOf(context));
			if (turn.error) return fauxAssistantMessage([], { stopReason: "error", errorMessage: turn.error });
			if (!turn.calls) return fauxAssistantMessage(turn.text ?? "done");
			const calls = turn.calls.map((c) =>
				fauxToolCall(c.name, Object.fromEntries(Object.entries(c.args).map(([k, v]) => [k, fill(v, context)]))),
			);
			return fauxAssistantMessage(calls, { stopReason: "toolUse" });
		}),
	);
	pi.registerProvider("fake", {
		baseUrl: "http://localhost:0",
		apiKey: "unused",
		api: "fake-api",
		streamSimple: getApiProvider("fake-api")!.streamSimple,
		models: [
			{
				id: "fake-1",
				name: "Fake",
				reasoning: false,
				input: ["text"],
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
				contextWindow: 128000,
				maxTokens: 4096,
			},
		],
	});
}
