/**
 * Test-only Pi 1.6 extension: a scripted model (pi-ai's faux provider), provider "fake", model
 * "fake-1", that calls the tools Pi gives it from an MCP server. The script is a JSON file named by
 * $PI_FAKE_SCRIPT: {"turns": [{"calls": [{"name": "mcp__pi_events__event_search", "args": {...}}]},
 * ..., {"text": "done"}]}. In a string argument, "$REF" is the first pi-event reference in the latest
 * batch of tool results, and "$SESSION" the current session's id. With $PI_FAKE_WAIT_TOOL set, the
 * first prompt waits (up to 120 s) until Pi has that tool: Pi itself waits only 10 s for an MCP
 * server to connect, which a loaded machine can exceed.
 */
import { readFileSync } from "node:fs";
import { type Context, fauxAssistantMessage, fauxToolCall, getApiProvider, registerFauxProvider } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

interface Turn {
	calls?: { name: string; args: Record<string, unknown> }[];
	text?: string;
}

function latestRef(context: Context): string {
	const messages = context.messages as { role: string; content: unknown }[];
	for (let i = messages.length - 1; i >= 0 && messages[i]?.role === "toolResult"; i--) {
		const content = messages[i]?.content;
		const text = Array.isArray(content) ? content.map((c: { text?: string }) => c.text ?? "").join("\n") : "";
		const found = /pi-event:[A-Za-z0-9._-]+\/[A-Za-z0-9._~-]+/.exec(text);
		if (found) return found[0];
	}
	return "pi-event:none/none";
}

export default function (pi: ExtensionAPI): void {
	const script = JSON.parse(readFileSync(process.env.PI_FAKE_SCRIPT as string, "utf8")) as { turns: Turn[] };
	const waitTool = process.env.PI_FAKE_WAIT_TOOL;
	if (waitTool) {
		pi.on("before_agent_start", async () => {
			const end = Date.now() + 120_000;
			while (!pi.getAllTools().some((t) => t.name === waitTool) && Date.now() < end) {
				await new Promise((resolve) => setTimeout(resolve, 100));
			}
		});
	}
	let sessionId = "";
	pi.on("session_start", (_event, ctx) => {
		sessionId = ctx.sessionManager.getSessionId();
	});
	const fill = (value: unknown, context: Context): unknown =>
		typeof value === "string" ? value.replaceAll("$REF", latestRef(context)).replaceAll("$SESSION", sessionId) : value;
	const faux = registerFauxProvider({ api: "fake-api", provider: "fake" });
	faux.setResponses(
		script.turns.map((turn) => (context: Context) => {
			if (!turn.calls) return fauxAssistantMessage(turn.text ?? "done");
			const calls = turn.calls.map((c) => fauxToolCall(c.name, Object.fromEntries(Object.entries(c.args).map(([k, v]) => [k, fill(v, context)]))));
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
