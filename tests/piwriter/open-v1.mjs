#!/usr/bin/env node
// Asks Pi (pi.mjs: 1.6 unless PIWRITER_PI=0.73) what it makes of v1 session files (no ids):
// SessionManager.open() migrates a file in memory and rewrites it as v3, so each file is first
// copied and the copy is opened.
//
// Usage: node open-v1.mjs OUT.json FILE...
// OUT.json: {"files": [{"path", "entries": n, "selected": [file positions, 0-based, header
// excluded], "context": [file position of the entry behind each context message]}]}
// Migrated ids are random, so everything is reported as positions in the file's entry order.

import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { SessionManager } from "./pi.mjs";
import { mapContext } from "./context-map.mjs";

const [out, ...files] = process.argv.slice(2);
if (!out || files.length === 0) {
  console.error("usage: node open-v1.mjs OUT.json FILE...");
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), "pi-v1-"));
const results = files.map((path, i) => {
  const copy = join(scratch, `${i}-${basename(path)}`);
  copyFileSync(path, copy);
  const sm = SessionManager.open(copy, scratch);
  const position = new Map(sm.getEntries().map((e, n) => [e.id, n]));
  const branch = sm.getBranch();
  return {
    path,
    entries: position.size,
    version: sm.getHeader().version,
    selected: branch.map((e) => position.get(e.id)),
    context: mapContext(branch, sm.buildSessionContext().messages).map((id) => position.get(id)),
  };
});
writeFileSync(out, JSON.stringify({ files: results }));
