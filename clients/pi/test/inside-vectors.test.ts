import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { test } from "node:test";
import { resolvedInside } from "../src/settings.ts";

interface Case { flavor: string; path: string; root: string; inside: boolean; note: string; links?: Record<string, string> }

const file = join(import.meta.dirname, "..", "..", "..", "tests", "data", "inside-vectors.json");
const cases = (JSON.parse(readFileSync(file, "utf8")) as { cases: Case[] }).cases;
// This machine's rules (Linux, where the tests run); relative paths never reach the check (a
// project's roots are resolved against its folder first).
const absolute = (p: string) => isAbsolute(p.replace("$TMP", "/tmp"));
const here = cases.filter((c) => c.flavor === "posix" && absolute(c.path) && absolute(c.root));

test("the shared inside vectors, as this client narrows a project's roots", () => {
	assert.ok(here.some((c) => c.links));
	for (const c of here) {
		const base = realpathSync(mkdtempSync(join(tmpdir(), "pies-inside-")));
		const fill = (p: string) => p.replaceAll("$TMP", base);
		for (const [link, target] of Object.entries(c.links ?? {})) {
			mkdirSync(dirname(fill(link)), { recursive: true });
			symlinkSync(fill(target), fill(link));
		}
		assert.equal(resolvedInside(fill(c.path), fill(c.root)), c.inside, c.note);
	}
});
