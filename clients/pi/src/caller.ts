/**
 * Who is asking (core-concepts, "Search corpus and authorization"): the authorization root (the Git
 * worktree root of Pi's cwd, else the cwd), the current session, and the cutoff: the entry that
 * holds the invoking tool call. The server applies all of it; this only names it.
 */
import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";

export interface CurrentSession {
	sessionId: string;
	cutoff: string | null;
}

export interface Caller {
	roots: string[];
	current: CurrentSession;
	/** The current session's file, when Pi persists the session. */
	sessionFile?: string;
}

interface BranchEntry {
	type: string;
	id: string;
	message?: { role?: string; content?: unknown };
}

export interface SessionView {
	getSessionId(): string;
	getSessionFile(): string | undefined;
	getLeafId(): string | null;
	getBranch(): BranchEntry[];
}

const rootCache = new Map<string, string>();

function canonical(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return path;
	}
}

/** The Git worktree root containing `cwd`, else `cwd` itself (both canonical). */
export function authorizationRoot(cwd: string): string {
	const cached = rootCache.get(cwd);
	if (cached) return cached;
	let root = cwd;
	try {
		const out = execFileSync("git", ["-C", cwd, "rev-parse", "--show-toplevel"], {
			encoding: "utf8",
			timeout: 5000,
			stdio: ["ignore", "pipe", "ignore"],
		}).trim();
		if (out) root = out;
	} catch {
		// not a Git worktree (or no git): the cwd is the root
	}
	const result = canonical(root);
	rootCache.set(cwd, result);
	return result;
}

function holdsCall(entry: BranchEntry, toolCallId: string): boolean {
	if (entry.type !== "message" || entry.message?.role !== "assistant") return false;
	const content = entry.message.content;
	return Array.isArray(content) && content.some((b: { type?: string; id?: string } | null) => b?.type === "toolCall" && b.id === toolCallId);
}

/**
 * The cutoff: the last entry on the branch whose assistant message holds this tool call (not the
 * leaf: sibling results may already follow it). When it cannot be found, the leaf, which excludes
 * at least as much.
 */
export function findCutoff(session: SessionView, toolCallId: string): string | null {
	const branch = session.getBranch();
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i] as BranchEntry;
		if (holdsCall(entry, toolCallId)) return entry.id;
	}
	return session.getLeafId();
}

export function callerOf(cwd: string, session: SessionView, toolCallId: string, roots?: string[]): Caller {
	return {
		roots: roots && roots.length > 0 ? roots : [authorizationRoot(cwd)],
		current: { sessionId: session.getSessionId(), cutoff: findCutoff(session, toolCallId) },
		sessionFile: session.getSessionFile(),
	};
}
