/**
 * A small JSON-RPC 2.0 client with LSP base-protocol framing (Content-Length headers) over a
 * child's stdio. Just what a tool call needs: requests with a timeout and an abort signal (which
 * sends `$/cancelRequest`), notifications both ways, and answers to the few requests the server
 * makes of its client (progress tokens, configuration).
 */
import type { Readable, Writable } from "node:stream";

export class RpcError extends Error {
	constructor(
		readonly code: number,
		message: string,
		readonly data?: unknown,
	) {
		super(message);
	}
}

/** The request took longer than its timeout (the server is still asked to cancel it). */
export class RpcTimeout extends Error {}

/** The caller's abort signal fired. */
export class RpcAborted extends Error {}

/** The connection closed (the server exited) before the answer came. */
export class RpcClosed extends Error {}

/** A JSON-RPC message from the server, as far as dispatch reads it. */
interface Message {
	id?: number | string | null;
	method?: string;
	params?: unknown;
	result?: unknown;
	error?: { code: number; message: string; data?: unknown };
}

interface Pending {
	resolve: (value: unknown) => void;
	reject: (err: Error) => void;
}

export interface CallOptions {
	timeoutMs: number;
	signal?: AbortSignal;
}

type Handler = (params: unknown) => void;

const HEADER_END = Buffer.from("\r\n\r\n");

export class RpcConnection {
	private nextId = 1;
	private readonly pending = new Map<number, Pending>();
	private readonly handlers = new Map<string, Handler>();
	private buffer = Buffer.alloc(0);
	private closedReason: string | undefined;

	constructor(
		input: Readable,
		private readonly output: Writable,
	) {
		input.on("data", (chunk: Buffer) => this.receive(chunk));
		input.on("close", () => this.close("the server closed its output"));
		output.on("error", (err: Error) => this.close(`cannot write to the server: ${err.message}`));
	}

	get closed(): boolean {
		return this.closedReason !== undefined;
	}

	onNotification(method: string, handler: Handler): void {
		this.handlers.set(method, handler);
	}

	notify(method: string, params: unknown): void {
		this.send({ jsonrpc: "2.0", method, params });
	}

	request<T>(method: string, params: unknown, options: CallOptions): Promise<T> {
		if (this.closedReason !== undefined) return Promise.reject(new RpcClosed(this.closedReason));
		if (options.signal?.aborted) return Promise.reject(new RpcAborted("cancelled"));
		const id = this.nextId++;
		return new Promise<T>((resolve, reject) => {
			const finish = (): void => {
				clearTimeout(timer);
				options.signal?.removeEventListener("abort", onAbort);
				this.pending.delete(id);
			};
			const giveUp = (err: Error): void => {
				finish();
				this.notify("$/cancelRequest", { id });
				reject(err);
			};
			const onAbort = (): void => giveUp(new RpcAborted("cancelled"));
			const timer = setTimeout(
				() => giveUp(new RpcTimeout(`${method}: no answer within ${options.timeoutMs} ms`)),
				options.timeoutMs,
			);
			options.signal?.addEventListener("abort", onAbort, { once: true });
			this.pending.set(id, {
				resolve: (v) => {
					finish();
					resolve(v as T);
				},
				reject: (e) => {
					finish();
					reject(e);
				},
			});
			this.send({ jsonrpc: "2.0", id, method, params });
		});
	}

	/** Fail every waiting request; later requests fail at once. */
	close(reason: string): void {
		if (this.closedReason !== undefined) return;
		this.closedReason = reason;
		for (const p of [...this.pending.values()]) p.reject(new RpcClosed(reason));
		this.pending.clear();
	}

	private send(message: object): void {
		if (this.closedReason !== undefined) return;
		const body = Buffer.from(JSON.stringify(message), "utf8");
		this.output.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "ascii"), body]));
	}

	private receive(chunk: Buffer): void {
		this.buffer = Buffer.concat([this.buffer, chunk]);
		for (;;) {
			const end = this.buffer.indexOf(HEADER_END);
			if (end < 0) return;
			const header = this.buffer.subarray(0, end).toString("ascii");
			const match = /content-length:\s*(\d+)/i.exec(header);
			if (!match) {
				this.close(`bad message header from the server: ${header.slice(0, 200)}`);
				return;
			}
			const length = Number(match[1]);
			const start = end + HEADER_END.length;
			if (this.buffer.length < start + length) return;
			const body = this.buffer.subarray(start, start + length).toString("utf8");
			this.buffer = this.buffer.subarray(start + length);
			this.dispatch(body);
		}
	}

	private dispatch(body: string): void {
		let parsed: unknown;
		try {
			parsed = JSON.parse(body);
		} catch {
			return; // not ours to fix; the request it belonged to will time out
		}
		// A body that is not a JSON object (`null`, a number) is no message either.
		if (typeof parsed !== "object" || parsed === null) return;
		const msg = parsed as Message;
		if (msg.method !== undefined) {
			if (msg.id !== undefined && msg.id !== null) this.answerServerRequest(msg.id, msg.method);
			else this.handlers.get(msg.method)?.(msg.params);
			return;
		}
		const pending = typeof msg.id === "number" ? this.pending.get(msg.id) : undefined;
		if (!pending) return; // an answer to a request we already gave up on
		if (msg.error) pending.reject(new RpcError(msg.error.code, msg.error.message, msg.error.data));
		else pending.resolve(msg.result ?? null);
	}

	/** The server creates progress tokens and may ask for configuration: accept, say nothing. */
	private answerServerRequest(id: number | string, method: string): void {
		const result = method === "workspace/configuration" ? [] : null;
		this.send({ jsonrpc: "2.0", id, result });
	}
}
