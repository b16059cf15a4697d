#!/usr/bin/env node
// Writes the sessions of tests/lsp/test_file_history.py with Pi's own SessionManager
// (pi.mjs: Pi 1.6 unless PIWRITER_PI=0.73), using the argument shapes Pi's edit and write tools
// accept (dist/core/tools/edit.js, write.js): edit {path, edits: [{oldText, newText}]}, the legacy
// edit {path, oldText, newText}, edits sent as a JSON string, and write {path, content}.
//
// Usage: node write-file-history.mjs DIR PROJ OTHER OUTSIDE LINK OUT.json
//   PROJ: the project (its src/ws.ts is the file asked about); OTHER: another checkout of the
//   same repository; OUTSIDE: a directory outside the project; LINK: a symlink to PROJ.
// OUT.json: {"sessions": {name: sessionId}, "marks": {name: entry id}}. Sessions are written one
// after another, so their entries' timestamps increase in the order below.

import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SessionManager } from "./pi.mjs";

const [dir, proj, other, outside, link, out] = process.argv.slice(2);
if (!out) {
  console.error("usage: node write-file-history.mjs DIR PROJ OTHER OUTSIDE LINK OUT.json");
  process.exit(2);
}
const ROOT = resolve(dir);

const tick = () => {
  const t = Date.now();
  while (Date.now() <= t) {
    // entry timestamps strictly increase
  }
};
const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });
const asst = (content, stopReason = "stop") => ({ role: "assistant", content, api: "anthropic-messages",
  provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason, timestamp: Date.now() });
const call = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });
const result = (id, name, text, isError = false) => ({ role: "toolResult", toolCallId: id, toolName: name,
  content: [{ type: "text", text }], isError, timestamp: Date.now() });

const sessions = {};
const marks = {};

function session(name, cwd, body) {
  const d = join(ROOT, `--${cwd.replace(/^\//, "").replace(/[/\\:]/g, "-")}--`);
  mkdirSync(d, { recursive: true });
  const sm = SessionManager.create(cwd, d);
  const append = (msg) => {
    const id = sm.appendMessage(msg);
    tick();
    return id;
  };
  body(append, sm);
  sessions[name] = sm.getSessionId();
}

const V1 = [
  'import { backoff } from "./backoff";',
  "",
  "export function reconnect() {",
  "  const delay = 1000;",
  "  setTimeout(open, delay);",
  "  return delay;",
  "}",
  "",
].join("\n");

// A: writes the file, then reads it.
session("A", proj, (append) => {
  append(user("write the reconnect helper"));
  marks.A_write = append(asst([{ type: "text", text: "Writing it." },
    call("w1", "write", { path: "src/ws.ts", content: V1 })], "toolUse"));
  append(result("w1", "write", `Successfully wrote ${V1.length} bytes to src/ws.ts`));
  marks.A_read = append(asst([call("r1", "read", { path: "src/ws.ts" })], "toolUse"));
  append(result("r1", "read", V1));
  append(asst([{ type: "text", text: "Done." }]));
});

// B: edits the signature and the delay (edits array), then compacts, naming the file.
session("B", proj, (append, sm) => {
  const u = append(user("use backoff with jitter"));
  marks.B_edit = append(asst([call("e1", "edit", { path: "src/ws.ts", edits: [
    { oldText: "export function reconnect() {", newText: "export function reconnect(attempt = 0) {" },
    { oldText: "  const delay = 1000;", newText: "  const delay = backoff(attempt) + jitter();" },
  ] })], "toolUse"));
  append(result("e1", "edit", "Successfully replaced 2 block(s) in src/ws.ts."));
  append(asst([{ type: "text", text: "Backoff with jitter is in." }]));
  marks.B_compaction = sm.appendCompaction("Summary: backoff with jitter in src/ws.ts.", u, 5000,
    { readFiles: ["src/backoff.ts"], modifiedFiles: ["src/ws.ts"] }, false);
  tick();
});

// C: the delay line had been changed by hand; writes it back (legacy edit shape). The file's
// `setTimeout` line is carried along as context: C did not write it.
session("C", proj, (append) => {
  append(user("put the jitter back"));
  marks.C_edit = append(asst([call("e2", "edit", { path: "./src/ws.ts",
    oldText: "  const delay = backoff(attempt);\n  setTimeout(open, delay);",
    newText: "  const delay = backoff(attempt) + jitter();\n  setTimeout(open, delay);" })], "toolUse"));
  append(result("e2", "edit", "Successfully replaced 1 block(s) in src/ws.ts."));
});

// D: an edit that failed (its oldText was not found): it wrote nothing.
session("D", proj, (append) => {
  append(user("once more"));
  marks.D_failed = append(asst([call("e3", "edit", { path: "src/ws.ts",
    edits: JSON.stringify([{ oldText: "const delay = 5;", newText: "  const delay = backoff(attempt) + jitter();" }]) })],
    "toolUse"));
  append(result("e3", "edit", "Could not find the exact text in src/ws.ts.", true));
});

// E: another checkout of the same repository, same relative path.
session("E", other, (append) => {
  append(user("same change in the copy"));
  marks.E_edit = append(asst([call("e4", "edit", { path: "src/ws.ts", edits: [
    { oldText: "  const delay = 1000;", newText: "  const delay = backoff(attempt) + jitter();" }] })],
    "toolUse"));
  append(result("e4", "edit", "Successfully replaced 1 block(s) in src/ws.ts."));
});

// F: a session outside the project that changed the project's file by its absolute path.
session("F", outside, (append) => {
  append(user("touch the project from outside"));
  marks.F_edit = append(asst([call("e5", "write", { path: `${proj}/src/ws.ts`,
    content: "  const delay = backoff(attempt) + jitter();\n" })], "toolUse"));
  append(result("e5", "write", "Successfully wrote 46 bytes"));
});

// G: recorded under a symlink to the project: the same file, by its canonical path.
session("G", link, (append) => {
  append(user("read it through the link"));
  marks.G_read = append(asst([call("r2", "read", { path: "src/ws.ts" })], "toolUse"));
  append(result("r2", "read", "..."));
});

// H: annotates the return (edits sent as a JSON string, which Pi parses).
session("H", proj, (append) => {
  append(user("say the unit"));
  marks.H_edit = append(asst([call("e6", "edit", { path: "src/ws.ts", edits: JSON.stringify([
    { oldText: "  return delay;", newText: "  return delay; // milliseconds" }]) })], "toolUse"));
  append(result("e6", "edit", "Successfully replaced 1 block(s) in src/ws.ts."));
});

// I: writes a file longer than the index keeps of one fragment (its middle is left out there).
session("I", proj, (append) => {
  const lines = Array.from({ length: 3000 }, (_, i) => `export const filler${i} = "${"x".repeat(20)}";`);
  append(user("generate the big table"));
  marks.I_write = append(asst([call("w2", "write", { path: "src/big.ts", content: `${lines.join("\n")}\n` })],
    "toolUse"));
  append(result("w2", "write", "Successfully wrote the big table"));
});

writeFileSync(resolve(out), `${JSON.stringify({ sessions, marks }, null, 1)}\n`);
