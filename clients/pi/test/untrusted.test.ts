import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { stripControls } from "../src/untrusted.ts";

interface Case {
	name: string;
	in: string;
	out: string;
}

// The control-byte cases the server, the Neovim and the VS Code clients run too.
const cases = (JSON.parse(readFileSync(new URL("../../../tests/data/control-vectors.json", import.meta.url), "utf8")) as { cases: Case[] }).cases;

test("stripControls agrees with the shared control-byte vectors", () => {
	assert.ok(cases.length >= 30);
	for (const c of cases) assert.equal(stripControls(c.in), c.out, c.name);
});
