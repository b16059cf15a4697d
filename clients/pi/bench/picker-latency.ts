/**
 * The /events picker's keystroke-to-results latency against a real server and index: types
 * queries a key at a time (PIES_TYPE_GAP_MS apart, default 700: every key's answer arrives before the
 * next key, so none is superseded and the slow ones are not lost from the sample) into the real
 * EventPicker, whose source is the real pickerSource over one EventServer, and times each key from
 * handleInput to the render that shows the hits of the text typed so far (the typing pause of
 * picker.ts included). Not a test. Run from clients/pi (so pi-tui resolves), with a prebuilt index:
 *
 *   PI_CODING_AGENT_DIR=<corpus>/agent node --import jiti/register bench/picker-latency.ts \
 *     <server-command> <index> <root> <out.json> [rare words...]
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { pickerSource } from "../src/events.ts";
import { EventPicker } from "../src/picker.ts";
import { EventServer } from "../src/server.ts";
import { DEFAULTS, type Settings } from "../src/settings.ts";

const argv = process.argv.slice(2);
if (argv.length < 4) throw new Error("usage: picker-latency.ts <server-command> <index> <root> <out.json> [words]");
const [serverCmd, indexPath, root, out] = argv as [string, string, string, string];
const rare = argv.slice(4);
const GAP_MS = Number(process.env.PIES_TYPE_GAP_MS ?? 700);
const QUERIES = ["error", "websocket reconnect", "database migration", "cache timeout", "connection refused", "build failed", ...rare.slice(0, 4)];
const theme = { fg: (_c: string, s: string) => s, bold: (s: string) => s, bg: (_c: string, s: string) => s };

const settings: Settings = { ...DEFAULTS, server: serverCmd.split(" "), serverOrigin: "bench", indexPath, roots: [root], timeoutMs: 60_000, warnings: [] };
const server = new EventServer(settings);
const rt = { settings: () => settings, server: () => server };
const session = { getSessionId: () => "bench-session", getLeafId: () => null, getSessionFile: () => undefined, getBranch: () => [] };
const source = pickerSource(rt, { cwd: root, sessionManager: session } as unknown as Parameters<typeof pickerSource>[1]);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

async function main(): Promise<void> {
	await server.connection([root]);
	await server.refreshNow([root]); // the index is built: this only checks it
	const samples: { query: string; ms: number; hits: number }[] = [];
	let typed = 0;
	for (const query of QUERIES) {
		const typedAt = new Map<string, number>();
		const onRender = (picker: EventPicker): void => {
			const q = picker.answered;
			const t0 = q === undefined ? undefined : typedAt.get(q);
			if (q !== undefined && t0 !== undefined) {
				samples.push({ query: q, ms: performance.now() - t0, hits: picker.hits.length });
				typedAt.delete(q);
			}
		};
		const picker: EventPicker = new EventPicker(source, theme, () => onRender(picker), () => undefined, "");
		await picker.searching;
		for (const ch of query) {
			picker.handleInput(ch);
			typedAt.set(picker.query, performance.now());
			typed++;
			await sleep(GAP_MS);
		}
		await sleep(500);
		await picker.searching;
	}
	await server.stop();
	const ms = samples.map((s) => s.ms);
	const result = {
		what: "keystroke -> rendered hits of the text typed so far, /events picker, real server",
		typingGapMs: GAP_MS,
		keysTyped: typed,
		keysAnswered: samples.length,
		p50_ms: +pct(ms, 50).toFixed(1),
		p95_ms: +pct(ms, 95).toFixed(1),
		max_ms: +Math.max(...ms).toFixed(1),
		loadavg: loadavg().map((x) => +x.toFixed(2)),
		cpus: cpus().length,
		samples,
	};
	writeFileSync(out, JSON.stringify(result, null, 1));
	console.log(JSON.stringify({ ...result, samples: undefined }));
}

void main();
