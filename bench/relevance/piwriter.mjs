#!/usr/bin/env node
// Writes the relevance set's "pi" sessions with Pi's own SessionManager
// (@mariozechner/pi-coding-agent from tests/piwriter; no LLM, no network).
//
// Usage: node bench/relevance/piwriter.mjs SPEC.json OUT.json
// SPEC: {"sessionsDir", "sessions": [{"key", "cwd", "startMs", "steps": [...]}]} with the steps
// of bench/relevance/sessions.py. OUT: {key: {"sessionId", "path", "marks": {mark: entryId}}}.
// Pi stamps entries with the wall clock; the clock is replaced by the session's own (startMs,
// then a few seconds per entry), so these sessions sit in time among the others of the corpus.

import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const PI = resolve(HERE, "../../tests/piwriter/node_modules/@mariozechner/pi-coding-agent/dist/index.js");

let clock = 0;
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...a) {
    if (a.length === 0) super(clock);
    else super(...a);
  }
  static now() {
    return clock;
  }
};

const { SessionManager } = await import(pathToFileURL(PI).href);
const [specPath, outPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));

const usage = { input: 120, output: 45, cacheRead: 0, cacheWrite: 0, totalTokens: 165,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const text = (t) => ({ type: "text", text: t });
const asst = (content, stopReason) => ({ role: "assistant", content, api: "anthropic-messages",
  provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason, timestamp: clock });

function encodedDir(cwd) {
  return `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

const out = {};
for (const s of spec.sessions) {
  clock = s.startMs;
  const dir = join(spec.sessionsDir, encodedDir(s.cwd));
  mkdirSync(dir, { recursive: true });
  const sm = SessionManager.create(s.cwd, dir);
  const marks = {};
  const pending = [];
  let n = 0;
  const step = () => { clock += 1500 + ((n++ * 7919) % 20000); };
  step();
  sm.appendModelChange("anthropic", "claude-sonnet-4-5");
  for (const st of s.steps) {
    step();
    const [kind, mark] = st;
    let id;
    if (kind === "u") {
      id = sm.appendMessage({ role: "user", content: [text(st[2])], timestamp: clock });
    } else if (kind === "a") {
      id = sm.appendMessage(asst([text(st[2])], "stop"));
    } else if (kind === "c") {
      const content = st[2] ? [text(st[2])] : [];
      for (const [tool, args] of st[3]) {
        const cid = `toolu_${s.key.replace(/\W/g, "")}_${n}_${pending.length}`;
        pending.push([cid, tool]);
        content.push({ type: "toolCall", id: cid, name: tool, arguments: args });
      }
      id = sm.appendMessage(asst(content, "toolUse"));
    } else if (kind === "r") {
      const [cid, tool] = pending.shift();
      id = sm.appendMessage({ role: "toolResult", toolCallId: cid, toolName: tool,
        content: [text(st[2])], isError: st[3], timestamp: clock });
    } else if (kind === "b") {
      id = sm.appendMessage({ role: "bashExecution", command: st[2], output: st[3],
        exitCode: st[4], cancelled: false, truncated: false, timestamp: clock });
    } else if (kind === "n") {
      id = sm.appendSessionInfo(st[2]);
    } else {
      throw new Error(`unknown step ${kind}`);
    }
    if (mark) marks[mark] = id;
  }
  out[s.key] = { sessionId: sm.getSessionId(), path: sm.getSessionFile(), marks };
}
writeFileSync(outPath, JSON.stringify(out));
