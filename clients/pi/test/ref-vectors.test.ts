import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { BadArgument, parseRef } from "../src/params.ts";

interface Whole {
	text: string;
	ref: { sessionId: string; entryId: string; fragmentId?: string } | null;
}

// The table the server, the VS Code and the Neovim clients are tested against too.
const whole = (JSON.parse(readFileSync(new URL("../../../tests/data/ref-vectors.json", import.meta.url), "utf8")) as { whole: Whole[] }).whole;

test("parseRef agrees with the shared table of whole references", () => {
	assert.ok(whole.length >= 20);
	for (const w of whole) {
		if (w.ref === null) {
			assert.throws(() => parseRef(w.text), BadArgument, JSON.stringify(w.text));
			continue;
		}
		const got = parseRef(w.text);
		assert.deepEqual(
			{ sessionId: got.sessionId, entryId: got.entryId, fragmentId: got.fragment },
			{ fragmentId: undefined, ...w.ref },
			JSON.stringify(w.text),
		);
	}
});
