#!/usr/bin/env node
// Pi's view of session files it (or anyone) wrote: per file, every entry's [branchState,
// selectionState] as oracle.mjs derives them from Pi's getBranch() and buildSessionProjection()
// (pi.mjs: Pi 1.6 unless PIWRITER_PI=0.73). Opens copies: SessionManager.open() may rewrite a file.
//
// Usage: node states-of.mjs OUT.json FILE...   OUT.json: {"files": [{"path", "sessionId", "states"}]}

import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { states } from "./oracle.mjs";
import { PI, SessionManager } from "./pi.mjs";

const [out, ...files] = process.argv.slice(2);
if (!out || files.length === 0) {
  console.error("usage: node states-of.mjs OUT.json FILE...");
  process.exit(2);
}
const scratch = mkdtempSync(join(tmpdir(), "pi-states-"));
const results = files.map((path, i) => {
  const copy = join(scratch, `${i}-${basename(path)}`);
  copyFileSync(path, copy);
  const sm = SessionManager.open(copy, scratch);
  return { path, sessionId: sm.getHeader().id, states: states(sm, PI === "1.6") };
});
writeFileSync(out, JSON.stringify({ files: results }));
