/**
 * EventServer against the real server: set PIES_TEST_SERVER to its command (tests/pi/test_pi_unit.py
 * does, with this checkout's Python); skipped otherwise.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { RpcAborted, RpcError } from "../src/rpc.ts";
import { abortable, EventServer, OPENING, retryWhileOpening, ServerUnavailable } from "../src/server.ts";
import { DEFAULTS, type Settings } from "../src/settings.ts";

const command = process.env.PIES_TEST_SERVER?.split(" ");
const skip = command ? false : "PIES_TEST_SERVER not set";

function setup(): { server: EventServer; root: string } {
	const base = mkdtempSync(join(tmpdir(), "pies-srv-"));
	const root = join(base, "proj");
	mkdirSync(join(base, "agent", "sessions"), { recursive: true });
	mkdirSync(root);
	process.env.PI_CODING_AGENT_DIR = join(base, "agent");
	const settings: Settings = { ...DEFAULTS, server: command, serverOrigin: "test", indexPath: join(base, "index.sqlite3"), warnings: [] };
	return { server: new EventServer(settings), root };
}

test("abortable passes the promise's answer or rejection through untouched; the signal rejects with RpcAborted", async () => {
	const ac = new AbortController();
	assert.equal(await abortable(Promise.resolve(1), ac.signal), 1);
	const own = new RpcError(-32001, "not found");
	await assert.rejects(abortable(Promise.reject(own), ac.signal), (e) => e === own);
	const never = new Promise<number>(() => undefined);
	const p = abortable(never, ac.signal);
	ac.abort();
	await assert.rejects(p, RpcAborted);
	await assert.rejects(abortable(never, ac.signal), RpcAborted);
});

const SEARCH = { query: "anything", currentSession: { sessionId: "S0", cutoff: "E0" } };

test("one server answers, survives a cancelled request, restarts after dying, stops", { skip }, async () => {
	const { server, root } = setup();
	try {
		const first = await server.request<{ hits: unknown[] }>("piEvents/search", SEARCH, [root]);
		assert.deepEqual(first.hits, []);
		const ac = new AbortController();
		const cancelled = server.request("piEvents/search", SEARCH, [root], ac.signal);
		ac.abort();
		await assert.rejects(cancelled, RpcAborted);
		assert.deepEqual((await server.request<{ hits: unknown[] }>("piEvents/search", SEARCH, [root])).hits, []);
		(server as unknown as { child: { kill(): void } }).child.kill();
		await new Promise((r) => setTimeout(r, 300));
		assert.equal(server.running, false);
		assert.deepEqual((await server.request<{ hits: unknown[] }>("piEvents/search", SEARCH, [root])).hits, [], "started again");
	} finally {
		await server.stop();
	}
	assert.equal(server.running, false);
});

test("a command that is not a server is an error naming it, with the install hint", { skip }, async () => {
	const { root } = setup();
	const settings: Settings = { ...DEFAULTS, server: ["false", "serve"], serverOrigin: "test", warnings: [] };
	const server = new EventServer(settings);
	await assert.rejects(server.request("piEvents/search", SEARCH, [root]), (err: Error) => err instanceof ServerUnavailable && /could not be started.*false serve.*pi install/s.test(err.message));
});

test("a request refused while another process opens the index is retried, within its bound", async () => {
	let calls = 0;
	const opening = (): Promise<string> => (++calls < 3 ? Promise.reject(new RpcError(-32603, `${OPENING} (migrating)`)) : Promise.resolve("answer"));
	assert.equal(await retryWhileOpening(opening, 5000), "answer");
	assert.equal(calls, 3);
	calls = 0;
	const never = (): Promise<string> => (++calls, Promise.reject(new RpcError(-32603, OPENING)));
	const started = Date.now();
	await assert.rejects(retryWhileOpening(never, 600), (e: Error) => e.message.startsWith(OPENING));
	assert.ok(Date.now() - started < 2000 && calls >= 2, `gave up after ${calls} calls`);
	calls = 0;
	const other = (): Promise<string> => (++calls, Promise.reject(new RpcError(-32001, "not found")));
	await assert.rejects(retryWhileOpening(other, 5000), /not found/);
	assert.equal(calls, 1, "other errors are not retried");
});
