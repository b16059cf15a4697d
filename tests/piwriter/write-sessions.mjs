#!/usr/bin/env node
// Writes genuine Pi session files with Pi's own SessionManager (pi.mjs: Pi 1.6 unless
// PIWRITER_PI=0.73; no LLM, no network), then writes an oracle of what Pi itself considers the
// selected branch, the model context and so the state of every entry of every file written.
//
// Usage: node write-sessions.mjs DIR OUT.json
//
// Layout: DIR is a Pi sessions root. Each session lands in DIR/<encoded cwd>/<ts>_<uuid>.jsonl,
// the encoding being Pi's own (session-manager.js getDefaultSessionDir:
// "--" + cwd without its leading slash, with "/", "\" and ":" turned into "-", + "--").
//
// Oracle (OUT.json): {"pi_version", "sessions": [...]} with one record per file:
//   path, scenario, sessionId, cwd, parentSession, entries (ids in file order, header excluded),
//   leafId (last entry: what Pi resumes from), selected (getBranch() ids, root..leaf),
//   context (for each model-context message, the id of the entry it came from), contextRoles,
//   thinkingLevel, model, roots (getTree() root ids), labels ({targetId: label}),
//   name (getSessionName()), marks ({symbolic name: entry id}), notes, and
//   states ({entry id: [branchState, selectionState]}, see `states` below).
// Everything is computed on a fresh SessionManager.open(path), i.e. from the file alone, exactly
// as Pi sees it when resuming that file. The context comes from Pi 1.6's buildSessionProjection()
// (each message with its source entry), or for 0.73.1 from buildSessionContext() mapped back to
// entries (context-map.mjs).
//
// Ids and timestamps are Pi's own (random ids, wall clock); all texts are fixed. After each
// append the script waits for the millisecond clock to move, so entry timestamps strictly
// increase within a run (Pi sorts tree children by timestamp).

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { mapContext } from "./context-map.mjs";
import { states } from "./oracle.mjs";
import { PI, PI_VERSION, pi, SessionManager } from "./pi.mjs";

const [dirArg, outArg] = process.argv.slice(2);
if (!dirArg || !outArg) {
  console.error("usage: node write-sessions.mjs DIR OUT.json");
  process.exit(2);
}
const ROOT = resolve(dirArg);
mkdirSync(ROOT, { recursive: true });
const V16 = PI === "1.6";

// ---------------------------------------------------------------------------------------------
// helpers

function encodedDir(cwd) {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

function sessionDirFor(cwd) {
  const d = join(ROOT, encodedDir(cwd));
  mkdirSync(d, { recursive: true });
  return d;
}

function tick() {
  const t = Date.now();
  while (Date.now() <= t) {
    // busy-wait at most ~1 ms so the next timestamp differs
  }
}

// Wraps a SessionManager so that every call that writes an entry is followed by tick().
function ticking(sm) {
  return new Proxy(sm, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      const name = String(prop);
      const writes =
        name.startsWith("append") || name === "branchWithSummary" || name === "createBranchedSession";
      return (...args) => {
        const r = v.apply(target, args);
        if (writes) tick();
        return r;
      };
    },
  });
}

function create(cwd, options = undefined) {
  return ticking(SessionManager.create(cwd, sessionDirFor(cwd), options));
}

const usage = {
  input: 120,
  output: 45,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 165,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
// 1x1 transparent PNG
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const text = (t) => ({ type: "text", text: t });
const user = (t, extra = []) => ({ role: "user", content: [text(t), ...extra], timestamp: Date.now() });
const asst = (content, stopReason = "stop", extra = {}) => ({
  role: "assistant",
  content: typeof content === "string" ? [text(content)] : content,
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  usage,
  stopReason,
  timestamp: Date.now(),
  ...extra,
});
const call = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });
const result = (toolCallId, toolName, content, isError = false, details = undefined) => ({
  role: "toolResult",
  toolCallId,
  toolName,
  content: typeof content === "string" ? [text(content)] : content,
  details,
  isError,
  timestamp: Date.now(),
});
const thinking = (t) => ({ type: "thinking", thinking: t, thinkingSignature: "c2lnbmF0dXJl" });
const bashExec = (command, output, extra = {}) => ({
  role: "bashExecution",
  command,
  output,
  exitCode: 0,
  cancelled: false,
  truncated: false,
  timestamp: Date.now(),
  ...extra,
});

// A user/assistant turn; returns {u, a} ids.
function turn(sm, n, topic) {
  const u = sm.appendMessage(user(`turn ${n}: ${topic}`));
  const a = sm.appendMessage(asst(`answer ${n}: done with ${topic}`));
  return { u, a };
}

// ---------------------------------------------------------------------------------------------
// oracle

const records = [];

function record(file, scenario, marks = {}, notes = undefined) {
  const sm = SessionManager.open(file); // fresh: what Pi sees when resuming this file
  const header = sm.getHeader();
  const entries = sm.getEntries();
  const path = sm.getBranch();
  const ctx = sm.buildSessionContext();
  const projected = V16 ? sm.buildSessionProjection() : null;
  const context = projected
    ? projected.entries.flatMap((p) => p.messages.map(() => p.sourceEntry.id))
    : mapContext(path, ctx.messages);
  const labels = {};
  for (const e of entries) {
    const l = sm.getLabel(e.id);
    if (l !== undefined) labels[e.id] = l;
  }
  const firstLine = readFileSync(file, "utf8").split("\n", 1)[0];
  if (JSON.parse(firstLine).type !== "session") throw new Error(`${file}: no header`);
  records.push({
    path: file,
    scenario,
    sessionId: header.id,
    cwd: header.cwd,
    parentSession: header.parentSession ?? null,
    entries: entries.map((e) => e.id),
    leafId: sm.getLeafId(),
    selected: path.map((e) => e.id),
    context,
    contextRoles: ctx.messages.map((m) => m.role),
    thinkingLevel: ctx.thinkingLevel,
    model: ctx.model,
    roots: sm.getTree().map((n) => n.entry.id),
    labels,
    name: sm.getSessionName() ?? null,
    marks,
    states: states(sm, V16),
    ...(notes ? { notes } : {}),
  });
}

// ---------------------------------------------------------------------------------------------
// scenarios

// a. linear chat: every entry type and message role, tool calls, images, errors, bash mode.
{
  const sm = create("/home/dev/proj");
  const m = {};
  m.model = sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  m.thinking = sm.appendThinkingLevelChange("medium");
  m.u1 = sm.appendMessage(
    user("fix the flaky websocket reconnect test, see screenshot", [
      { type: "image", data: PNG, mimeType: "image/png" },
    ]),
  );
  m.a1 = sm.appendMessage(
    asst(
      [
        thinking("The reconnect test probably races the retry timer."),
        text("Let me look at the test and the client."),
        call("toolu_read_1", "read", { path: "src/ws.ts" }),
        call("toolu_bash_1", "bash", { command: "rg -n reconnect src/ tests/" }),
      ],
      "toolUse",
    ),
  );
  m.r_read = sm.appendMessage(
    result("toolu_read_1", "read", "export function reconnect() {\n  setTimeout(open, 1000);\n}\n"),
  );
  m.r_bash = sm.appendMessage(
    result("toolu_bash_1", "bash", "src/ws.ts:42: reconnect()\ntests/ws.test.ts:7: reconnect"),
  );
  m.a2 = sm.appendMessage(
    asst(
      [
        text("The retry uses a fixed delay; switching to backoff."),
        call("toolu_edit_1", "edit", {
          path: "src/ws.ts",
          edits: [
            { oldText: "setTimeout(open, 1000);", newText: "setTimeout(open, backoff(attempt));" },
            { oldText: "export function reconnect() {", newText: "export function reconnect(attempt = 0) {" },
          ],
        }),
        call("toolu_write_1", "write", {
          path: "src/backoff.ts",
          content: "export const backoff = (n: number) => Math.min(30000, 250 * 2 ** n);\n",
        }),
        call("toolu_read_2", "read", { path: "docs/missing.md" }),
      ],
      "toolUse",
    ),
  );
  m.r_edit = sm.appendMessage(
    result("toolu_edit_1", "edit", "Successfully replaced 2 block(s) in src/ws.ts.", false, {
      diff: "-  setTimeout(open, 1000);\n+  setTimeout(open, backoff(attempt));",
      firstChangedLine: 1,
    }),
  );
  m.r_write = sm.appendMessage(
    result("toolu_write_1", "write", "Successfully wrote 68 bytes to src/backoff.ts"),
  );
  m.r_error = sm.appendMessage(
    result(
      "toolu_read_2",
      "read",
      "ENOENT: no such file or directory, open '/home/dev/proj/docs/missing.md'",
      true,
      {},
    ),
  );
  m.a3 = sm.appendMessage(
    asst(
      [thinking("Take a screenshot of the diagram."), call("toolu_read_3", "read", { path: "docs/arch.png" })],
      "toolUse",
    ),
  );
  m.r_image = sm.appendMessage(
    result("toolu_read_3", "read", [
      text("Read image file [image/png]"),
      { type: "image", data: PNG, mimeType: "image/png" },
    ]),
  );
  m.a4 = sm.appendMessage(asst("Backoff is in place; the diagram matches."));
  m.bash_in = sm.appendMessage(
    bashExec("npm test -- ws", "PASS tests/ws.test.ts\n1 passed", { excludeFromContext: false }),
  );
  m.bash_out = sm.appendMessage(
    bashExec("git status --short", " M src/ws.ts\n?? src/backoff.ts", { excludeFromContext: true }),
  );
  m.bash_rpc = sm.appendMessage(bashExec("false", "", { exitCode: 1 })); // key absent (RPC path)
  m.model2 = sm.appendModelChange("openai", "gpt-5");
  m.thinking2 = sm.appendThinkingLevelChange("high");
  m.u2 = sm.appendMessage(user("now run the whole suite"));
  m.a5 = sm.appendMessage(
    asst([], "error", {
      provider: "openai",
      api: "openai-responses",
      model: "gpt-5",
      errorMessage: "429 rate limited",
    }),
  );
  m.a6 = sm.appendMessage(
    asst("All 212 tests pass.", "stop", { provider: "openai", api: "openai-responses", model: "gpt-5" }),
  );
  m.name = sm.appendSessionInfo("  websocket reconnect fix  ");
  m.label = sm.appendLabelChange(m.u1, "start");
  m.custom = sm.appendCustomEntry("test-extension:state", { counter: 3, tags: ["ws"] });
  m.custom_msg = sm.appendCustomMessageEntry(
    "enriched-prompt",
    "Project context: TypeScript, vitest.",
    true,
    { source: "fixture" },
  );
  m.custom_msg_hidden = sm.appendCustomMessageEntry(
    "volatile-project-context",
    [text("branch: main, 2 files changed")],
    false,
  );
  m.custom_role = sm.appendMessage({
    role: "custom",
    customType: "legacy-hook",
    content: "message entry with role custom",
    display: true,
    timestamp: Date.now(),
  });
  m.u3 = sm.appendMessage(user("thanks, commit it"));
  m.a7 = sm.appendMessage(
    asst("Committed as a1b2c3d.", "stop", { provider: "openai", api: "openai-responses", model: "gpt-5" }),
  );
  record(sm.getSessionFile(), "a-linear", m);
}

// b. core-concepts example: A -> B -> C -> D, branch(B), E -> F.
{
  const sm = create("/home/dev/proj");
  const m = {};
  m.A = sm.appendMessage(user("A: add a --verbose flag"));
  m.B = sm.appendMessage(asst("B: which command should get it?"));
  m.C = sm.appendMessage(user("C: the build command"));
  m.D = sm.appendMessage(asst("D: added --verbose to build"));
  sm.branch(m.B);
  m.E = sm.appendMessage(user("E: actually the test command"));
  m.F = sm.appendMessage(asst("F: added --verbose to test"));
  record(sm.getSessionFile(), "b-core-concepts", m);
}

// c. compaction, twice, with file lists.
{
  const sm = create("/home/dev/proj/server");
  const m = {};
  m.model = sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  for (let n = 1; n <= 6; n++) Object.assign(m, prefix(`t${n}`, turn(sm, n, `step ${n} of the parser`)));
  m.c1 = sm.appendCompaction(
    "Summary 1: parser steps 1-3 done; tokenizer rewritten.",
    m.t4u,
    48123,
    { readFiles: ["src/lexer.py"], modifiedFiles: ["src/parser.py", "src/tokens.py"] },
    false,
  );
  for (let n = 7; n <= 9; n++) Object.assign(m, prefix(`t${n}`, turn(sm, n, `step ${n} of the parser`)));
  m.c2 = sm.appendCompaction(
    "Summary 2: parser finished through step 7.",
    m.t8u,
    51200,
    { readFiles: ["src/lexer.py", "tests/test_parser.py"], modifiedFiles: ["src/parser.py"] },
  );
  Object.assign(m, prefix("t10", turn(sm, 10, "final cleanup")));
  record(sm.getSessionFile(), "c-compaction", m);
}

// c2. compaction whose firstKeptEntryId is on no path (unknown id): Pi keeps nothing before it.
{
  const sm = create("/home/dev/proj/server");
  const m = {};
  for (let n = 1; n <= 3; n++) Object.assign(m, prefix(`t${n}`, turn(sm, n, `topic ${n}`)));
  m.c1 = sm.appendCompaction("Summary: topics 1-3.", "deadbeef", 9000);
  Object.assign(m, prefix("t4", turn(sm, 4, "topic 4")));
  record(sm.getSessionFile(), "c2-compaction-unknown-first-kept", m);
}

// c3. rewind past a compaction: the selected path no longer contains it.
{
  const sm = create("/home/dev/proj/server");
  const m = {};
  for (let n = 1; n <= 4; n++) Object.assign(m, prefix(`t${n}`, turn(sm, n, `idea ${n}`)));
  m.c1 = sm.appendCompaction("Summary: ideas 1-2.", m.t3u, 7000);
  Object.assign(m, prefix("t5", turn(sm, 5, "idea 5")));
  sm.branch(m.t2a);
  Object.assign(m, prefix("t6", turn(sm, 6, "idea 6 instead of 3")));
  record(sm.getSessionFile(), "c3-rewind-past-compaction", m);
}

// c4. a later compaction whose firstKeptEntryId lies before an earlier compaction: the kept range
// then contains the earlier compaction entry, which is not a message and contributes nothing.
{
  const sm = create("/home/dev/proj/server");
  const m = {};
  for (let n = 1; n <= 3; n++) Object.assign(m, prefix(`t${n}`, turn(sm, n, `module ${n}`)));
  m.c1 = sm.appendCompaction("Summary 1: modules 1-2.", m.t3u, 8000);
  Object.assign(m, prefix("t4", turn(sm, 4, "module 4")));
  m.c2 = sm.appendCompaction("Summary 2: modules 1-3.", m.t3u, 9000);
  Object.assign(m, prefix("t5", turn(sm, 5, "module 5")));
  record(sm.getSessionFile(), "c4-compaction-keeps-earlier-compaction", m);
}

// d. branchWithSummary after a rewind (as /tree "Summarize" does when re-editing user C: the
// new position is C's parent B), then more messages.
{
  const sm = create("/home/dev/proj");
  const m = {};
  m.A = sm.appendMessage(user("A: speed up the importer"));
  m.B = sm.appendMessage(asst("B: profile first?"));
  m.C = sm.appendMessage(user("C: try multiprocessing"));
  m.D = sm.appendMessage(asst("D: multiprocessing made it slower"));
  m.S = sm.branchWithSummary(
    m.B,
    "Abandoned branch: multiprocessing was slower because of pickling.",
    { readFiles: ["importer.py"], modifiedFiles: [] },
    false,
  );
  m.E = sm.appendMessage(user("E: batch the inserts instead"));
  m.F = sm.appendMessage(asst("F: batching gave 4x"));
  record(sm.getSessionFile(), "d-branch-summary", m);
}

// d2. a summary at the root (branchWithSummary(null, ...): parentId null, fromId "root"), then an
// empty branch summary on the selected path (a tree node, but no context message).
{
  const sm = create("/home/dev/proj");
  const m = {};
  m.A = sm.appendMessage(user("A: write a changelog"));
  m.B = sm.appendMessage(asst("B: drafted CHANGELOG.md"));
  m.S_root = sm.branchWithSummary(null, "Abandoned: the whole changelog attempt.");
  m.C = sm.appendMessage(user("C: start over with release notes"));
  m.D = sm.appendMessage(asst("D: release notes drafted"));
  m.E = sm.appendMessage(user("E: make them shorter"));
  m.F = sm.appendMessage(asst("F: shortened"));
  m.S_empty = sm.branchWithSummary(m.D, "");
  m.G = sm.appendMessage(user("G: add dates instead"));
  m.H = sm.appendMessage(asst("H: dates added"));
  record(sm.getSessionFile(), "d2-root-and-empty-branch-summary", m);
}

// e. rewind to the root: resetLeaf(), then a second root.
{
  const sm = create("/home/dev/proj/web");
  const m = {};
  m.model = sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  m.A = sm.appendMessage(user("A: build a login page"));
  m.B = sm.appendMessage(asst("B: login page built"));
  sm.resetLeaf();
  m.A2 = sm.appendMessage(user("A2: build a signup page instead"));
  m.B2 = sm.appendMessage(asst("B2: signup page built"));
  record(sm.getSessionFile(), "e-second-root", m);
}

// f. a fork (/fork at user U3 => createBranchedSession(parent of U3)). The source path has a
// label entry in its middle, as labels are tree nodes.
{
  const sm = create("/home/dev/proj");
  const m = {};
  m.model = sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  m.thinking = sm.appendThinkingLevelChange("low");
  m.U1 = sm.appendMessage(user("U1: add retries to the fetcher"));
  m.A1 = sm.appendMessage(asst("A1: retries added"));
  m.L1 = sm.appendLabelChange(m.U1, "retries");
  m.U2 = sm.appendMessage(user("U2: cap them at 5"));
  m.A2 = sm.appendMessage(asst("A2: capped at 5"));
  m.U3 = sm.appendMessage(user("U3: add jitter"));
  m.A3 = sm.appendMessage(asst("A3: jitter added"));
  const source = sm.getSessionFile();
  const fork = sm.createBranchedSession(m.A2);
  const fm = { ...m };
  fm.U4 = sm.appendMessage(user("U4: use full jitter instead"));
  fm.A4 = sm.appendMessage(asst("A4: full jitter added"));
  record(source, "f-fork-source", m);
  record(fork, "f-fork", fm, [
    "createBranchedSession drops label entries from the copied path and re-creates them at the end;",
    V16
      ? "Pi 1.6 re-chains the path around them (U2's parent becomes A1)."
      : "copied entries keep their parentId, so U2 points at the dropped label L1 (absent here) and " +
        "Pi's getBranch/buildSessionContext stop there.",
  ].join(" "));
}

// f2. a cross-project fork: SessionManager.forkFrom copies all entries raw under a new header.
{
  const src = records.find((r) => r.scenario === "b-core-concepts");
  const sm = ticking(
    SessionManager.forkFrom(src.path, "/home/dev/proj/sub", sessionDirFor("/home/dev/proj/sub")),
  );
  const m = { ...src.marks };
  m.G = sm.appendMessage(user("G: port the flag to the sub project"));
  m.H = sm.appendMessage(asst("H: ported"));
  record(sm.getSessionFile(), "f2-fork-from", m);
}

// g. a long session with one 5 MiB toolResult text (a single line of text). SessionManager does
// not cap anything (only Pi's tools truncate their output), so the JSONL line is > 5 MiB.
{
  const sm = create("/home/dev/proj");
  const m = {};
  const HUGE = 5 * 1024 * 1024;
  for (let n = 1; n <= 40; n++) turn(sm, n, `long session topic ${n}`);
  m.u = sm.appendMessage(user("dump the generated bundle"));
  m.a = sm.appendMessage(
    asst([call("toolu_big_1", "bash", { command: "cat dist/bundle.js" })], "toolUse"),
  );
  const unit = "var bundledModuleFiller = 0123456789; ";
  const head = "BUNDLE_START_MARKER ";
  const tail = " BUNDLE_END_MARKER";
  const big =
    head + unit.repeat(Math.ceil((HUGE - head.length - tail.length) / unit.length)) + tail;
  m.big = sm.appendMessage(result("toolu_big_1", "bash", big));
  m.a2 = sm.appendMessage(asst("That bundle is 5 MiB of filler."));
  for (let n = 41; n <= 60; n++) turn(sm, n, `long session topic ${n}`);
  record(sm.getSessionFile(), "g-long-5mib-tool-result", m, `toolResult text is ${big.length} chars`);
}

if (V16) {
  // Pi 1.6 scenarios: what 0.73.1 could not write.
  await import("./write-sessions-16.mjs").then((m) =>
    m.scenarios({ create, record, turn, user, asst, call, result, text, usage, records, prefix, sessionDirFor, ticking }),
  );
}

writeFileSync(resolve(outArg), `${JSON.stringify({ pi: PI, pi_version: PI_VERSION, sessions: records }, null, 1)}\n`);

function prefix(p, o) {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [`${p}${k}`, v]));
}
