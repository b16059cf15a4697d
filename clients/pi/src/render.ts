/**
 * Compact views for Pi's terminal UI: the call on one line, the result as a one-line summary
 * (the full text when the row is expanded).
 */
import type { Theme } from "@mariozechner/pi-coding-agent";
import { Text } from "@mariozechner/pi-tui";
import { isGrouped } from "./protocol.ts";
import type { Details } from "./tools.ts";

type Args = Record<string, unknown>;

/** `event_search "websocket reconnect" tool=bash errors` */
export function callSummary(tool: string, args: Args): string {
	const main = typeof args.query === "string" ? JSON.stringify(args.query) : typeof args.ref === "string" ? args.ref : "";
	const extra = Object.entries(args)
		.filter(([k, v]) => k !== "query" && k !== "ref" && v !== undefined && v !== false)
		.map(([k, v]) => (v === true ? k : `${k}=${Array.isArray(v) ? v.join(",") : String(v)}`));
	return [main, ...extra].filter(Boolean).join(" ");
}

export function resultSummary(details: Details | undefined): string {
	if (!details) return "";
	switch (details.tool) {
		case "event_search": {
			const r = details.result;
			const more = r.nextCursor || details.cut ? ", more exist" : "";
			const refs = isGrouped(r) ? r.sessions.map((g) => g.top.ref) : r.hits.map((h) => h.ref);
			const n = refs.length;
			const unit = isGrouped(r) ? "session" : "hit";
			const first = refs[0];
			return `${n} ${unit}${n === 1 ? "" : "s"}${more}${n ? `: ${first ?? ""}${n > 1 ? " …" : ""}` : ""}`;
		}
		case "event_read": {
			const chars = details.result.fragments.reduce((sum, f) => sum + f.length, 0);
			return `${details.result.event.ref} · ${details.result.fragments.length} part(s), ${chars} characters${details.cut ? " (cut)" : ""}`;
		}
		case "event_trace": {
			const r = details.result;
			return `${r.children.length} child(ren), ${r.siblings.length} sibling(s)${r.towardLeaf ? `, toward leaf: ${r.towardLeaf}` : ""}`;
		}
	}
}

export function renderCall(tool: string) {
	return (args: Args, theme: Theme, context: { lastComponent?: unknown }): Text => {
		const text = (context.lastComponent as Text | undefined) ?? new Text("", 0, 0);
		text.setText(`${theme.fg("toolTitle", theme.bold(`${tool} `))}${theme.fg("muted", callSummary(tool, args))}`);
		return text;
	};
}

export function renderResult(
	result: { content: { type: string; text?: string }[]; details?: unknown },
	options: { expanded: boolean; isPartial: boolean },
	theme: Theme,
	context: { isError?: boolean },
): Text {
	if (options.isPartial) return new Text(theme.fg("warning", "searching…"), 0, 0);
	const body = result.content.map((c) => c.text ?? "").join("\n");
	if (context.isError) return new Text(theme.fg("error", body), 0, 0);
	const summary = theme.fg("success", resultSummary(result.details as Details | undefined) || "done");
	return new Text(options.expanded ? `${summary}\n${theme.fg("toolOutput", body)}` : summary, 0, 0);
}
