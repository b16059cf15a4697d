import assert from "node:assert/strict";
import { test } from "node:test";
import { bootstrapPythons, noPython } from "../src/installer.ts";

test("each platform runs the bootstrap with its own Python and says its own fix", () => {
	assert.deepEqual(bootstrapPythons("win32"), [["py", "-3"], ["python"], ["python3"]]);
	assert.deepEqual(bootstrapPythons("darwin").slice(0, 2), [["python3"], ["/opt/homebrew/bin/python3"]]);
	assert.deepEqual(bootstrapPythons("linux"), [["python3"], ["python"]]);
	assert.match(noPython("win32"), /tried py -3, python, python3\). On Windows: `winget install Python\.Python\.3\.13`/);
	assert.doesNotMatch(noPython("win32"), /apt/);
	assert.match(noPython("darwin"), /brew install python@3\.13/);
	assert.match(noPython("linux"), /sudo apt install python3 python3-venv/);
});
