/**
 * Bench-only Pi extension for bench/features/pi_tool.py: a scripted model (pi-ai's faux provider) that calls
 * event_search once per turn with the queries of $PI_BENCH_QUERIES (a JSON list of tool arguments),
 * thinking $PI_BENCH_THINK_MS before each answer as a real model would, and a probe that times every
 * tool execution (tool_execution_start -> tool_execution_end, as Pi runs it) into $PI_BENCH_OUT
 * (JSON lines: ms, characters of the text the model reads, hits, isError).
 */
import { appendFileSync, readFileSync } from "node:fs";
import { fauxAssistantMessage, fauxToolCall, getApiProvider, registerFauxProvider } from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI): void {
	const queries = JSON.parse(readFileSync(process.env.PI_BENCH_QUERIES as string, "utf8")) as Record<string, unknown>[];
	const out = process.env.PI_BENCH_OUT as string;
	const think = Number(process.env.PI_BENCH_THINK_MS ?? "300");
	const started = new Map<string, bigint>();
	pi.on("tool_execution_start", async (event) => {
		started.set(event.toolCallId, process.hrtime.bigint());
	});
	pi.on("tool_execution_end", async (event) => {
		const t0 = started.get(event.toolCallId);
		const ms = t0 === undefined ? -1 : Number(process.hrtime.bigint() - t0) / 1e6;
		const content = (event.result?.content ?? []) as { text?: string }[];
		const chars = content.reduce((n, c) => n + (c.text?.length ?? 0), 0);
		const hits = event.result?.details?.result?.hits?.length ?? null;
		appendFileSync(out, `${JSON.stringify({ ms, chars, hits, isError: event.isError, text: event.isError ? content[0]?.text : undefined })}\n`);
	});
	const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
	const faux = registerFauxProvider({ api: "bench-api", provider: "bench" });
	faux.setResponses([
		...queries.map((args) => async () => {
			await sleep(think);
			return fauxAssistantMessage(fauxToolCall("event_search", args), { stopReason: "toolUse" });
		}),
		() => fauxAssistantMessage("done"),
	]);
	pi.registerProvider("bench", {
		baseUrl: "http://localhost:0",
		apiKey: "unused",
		api: "bench-api",
		streamSimple: getApiProvider("bench-api")!.streamSimple,
		models: [{ id: "bench-1", name: "Bench", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100_000_000, maxTokens: 4096 }],
	});
}
