import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";
import { RpcAborted, RpcClosed, RpcConnection, RpcError, RpcTimeout } from "../src/rpc.ts";

/** A connection and the other end: what it wrote (parsed) and a way to answer. */
function pair() {
	const toClient = new PassThrough();
	const fromClient = new PassThrough();
	const sent: Record<string, unknown>[] = [];
	let buf = "";
	fromClient.on("data", (chunk: Buffer) => {
		buf += chunk.toString("utf8");
		for (;;) {
			const m = /^Content-Length: (\d+)\r\n\r\n/.exec(buf);
			if (!m) return;
			const start = m[0].length;
			const len = Number(m[1]);
			if (Buffer.byteLength(buf) < start + len) return;
			sent.push(JSON.parse(buf.slice(start, start + len)) as Record<string, unknown>);
			buf = buf.slice(start + len);
		}
	});
	const reply = (msg: object, split = false) => {
		const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...msg }));
		const all = Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
		if (!split) toClient.write(all);
		else for (const b of all) toClient.write(Buffer.from([b])); // one byte at a time
	};
	return { conn: new RpcConnection(toClient, fromClient), sent, reply, toClient };
}

const tick = () => new Promise((r) => setTimeout(r, 10));

test("a request gets its answer, even split into single bytes with multibyte text", async () => {
	const { conn, sent, reply } = pair();
	const p = conn.request<{ v: string }>("piEvents/search", { query: "q" }, { timeoutMs: 1000 });
	await tick();
	assert.deepEqual(sent[0], { jsonrpc: "2.0", id: 1, method: "piEvents/search", params: { query: "q" } });
	reply({ id: 1, result: { v: "é😀" } }, true);
	assert.deepEqual(await p, { v: "é😀" });
});

test("errors carry the server's code", async () => {
	const { conn, reply } = pair();
	const p = conn.request("piEvents/read", {}, { timeoutMs: 1000 });
	await tick();
	reply({ id: 1, error: { code: -32001, message: "Event not found: x" } });
	await assert.rejects(p, (e: Error) => e instanceof RpcError && e.code === -32001);
});

test("a timeout rejects and asks the server to cancel", async () => {
	const { conn, sent } = pair();
	await assert.rejects(conn.request("piEvents/search", {}, { timeoutMs: 30 }), RpcTimeout);
	await tick();
	assert.deepEqual(sent.at(-1), { jsonrpc: "2.0", method: "$/cancelRequest", params: { id: 1 } });
});

test("the abort signal cancels the request with $/cancelRequest", async () => {
	const { conn, sent } = pair();
	const ac = new AbortController();
	const p = conn.request("piEvents/search", {}, { timeoutMs: 5000, signal: ac.signal });
	ac.abort();
	await assert.rejects(p, RpcAborted);
	await tick();
	assert.deepEqual(sent.at(-1), { jsonrpc: "2.0", method: "$/cancelRequest", params: { id: 1 } });
	await assert.rejects(conn.request("x", {}, { timeoutMs: 100, signal: ac.signal }), RpcAborted);
});

test("the server closing fails what waits and what comes later", async () => {
	const { conn, toClient } = pair();
	const p = conn.request("piEvents/search", {}, { timeoutMs: 5000 });
	toClient.destroy();
	await assert.rejects(p, RpcClosed);
	await assert.rejects(conn.request("piEvents/search", {}, { timeoutMs: 5000 }), RpcClosed);
});

test("notifications reach their handler; server requests are answered", async () => {
	const { conn, sent, reply } = pair();
	const seen: unknown[] = [];
	conn.onNotification("piEvents/indexChanged", (p) => seen.push(p));
	reply({ method: "piEvents/indexChanged", params: { generation: 2 } });
	reply({ id: 9, method: "window/workDoneProgress/create", params: { token: "t" } });
	await tick();
	assert.deepEqual(seen, [{ generation: 2 }]);
	assert.deepEqual(sent.at(-1), { jsonrpc: "2.0", id: 9, result: null });
});

test("a body that is not a JSON object is passed over; the next answer still arrives", async () => {
	const { conn, toClient, reply } = pair();
	const p = conn.request<{ v: number }>("piEvents/search", {}, { timeoutMs: 1000 });
	for (const body of ["null", "7", "{not json"]) toClient.write(`Content-Length: ${body.length}\r\n\r\n${body}`);
	reply({ id: 1, result: { v: 1 } });
	assert.deepEqual(await p, { v: 1 });
});
