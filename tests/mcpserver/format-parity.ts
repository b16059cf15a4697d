/**
 * The Pi tools' formatter (clients/pi/src/format.ts) on server results given as JSON, for
 * test_modeltext_parity.py to compare with the MCP server's (modeltext.py). Usage, from clients/pi:
 *   node --import jiti/register ../../tests/mcpserver/format-parity.ts CASES.json
 */
import { readFileSync } from "node:fs";
import { formatGroups, formatRead, formatSearch, formatTrace } from "../../clients/pi/src/format.ts";
import { FRAME_CLOSE, FRAME_OPEN } from "../../clients/pi/src/untrusted.ts";

interface Case {
	kind: "search" | "groups" | "read" | "trace";
	result: never;
	query?: string;
	root?: string;
	current?: boolean;
	maxChars: number;
}

const cases = JSON.parse(readFileSync(process.argv[2] as string, "utf8")) as Case[];
const out = cases.map((c) => {
	const view = { query: c.query ?? "", maxChars: c.maxChars, root: c.root ?? "", currentSession: c.current ?? false };
	if (c.kind === "search") return formatSearch(c.result, view).text;
	if (c.kind === "groups") return formatGroups(c.result, view).text;
	if (c.kind === "read") return formatRead(c.result, c.maxChars).text;
	return formatTrace(c.result, c.maxChars).text;
});
process.stdout.write(JSON.stringify({ frame: [FRAME_OPEN, FRAME_CLOSE], out }));
