// The oracle of entry states: what Pi's own answers say of every entry of a session file
// (write-sessions.mjs records it for the files it writes; states-of.mjs for any file, e.g. one a
// real Pi turn wrote).

import { mapContext } from "./context-map.mjs";
import { pi } from "./pi.mjs";

// Every entry's [branchState, selectionState] (docs/protocol.md) from Pi's own answers:
// - branch: "selected" on getBranch(); "alternate" below a getTree() root whose parentId is null
//   (a real root); "unknown" below an orphan (a root only because its parent is missing).
// - selection: "not-applicable" for an entry from which Pi makes no model message at all
//   (1.6: sessionEntryToContextMessages(entry) is empty; 0.73.1: not a message, custom_message,
//   compaction or non-empty branch_summary). Else "direct" when the projection has a message from
//   it; "edited-out" when buildContextEntries() keeps it and the projection has none because the
//   latest context_edit of it there has replacement null; "summarized" when it is on the path
//   before the last compaction's kept range, or a system message in that range when the compaction
//   carries the systemMessage checkpoint that replaces them; "not-selected" otherwise (another
//   branch, an older compaction in the kept range, a system message dropped with no checkpoint);
//   "unknown" when its branch is.
export function states(sm, V16) {
  const entries = sm.getEntries();
  const path = sm.getBranch();
  const context = V16
    ? sm.buildSessionProjection().entries.flatMap((p) => p.messages.map(() => p.sourceEntry.id))
    : mapContext(path, sm.buildSessionContext().messages);
  const onPath = new Set(path.map((e) => e.id));
  const rooted = new Set();
  const stack = sm.getTree().filter((n) => n.entry.parentId === null || n.entry.parentId === n.entry.id);
  while (stack.length) {
    const n = stack.pop();
    rooted.add(n.entry.id);
    stack.push(...n.children);
  }
  const inContext = new Set(context);
  const kept = new Set((V16 ? sm.buildContextEntries() : []).map((e) => e.id));
  const edits = new Map();
  if (V16) for (const e of sm.buildContextEntries()) if (e.type === "context_edit") edits.set(e.targetId, e);
  let last = -1;
  path.forEach((e, i) => {
    if (e.type === "compaction") last = i;
  });
  const compaction = last >= 0 ? path[last] : null;
  const keptFrom = compaction ? path.findIndex((e, i) => i < last && e.id === compaction.firstKeptEntryId) : -1;
  const makesContext = (e) =>
    V16
      ? pi.sessionEntryToContextMessages(e).length > 0
      : e.type === "message" || e.type === "custom_message" || e.type === "compaction" ||
        (e.type === "branch_summary" && !!e.summary);
  const isSystem = (e) => e.type === "message" && e.message.role === "system";
  const out = {};
  for (const e of entries) {
    const branch = onPath.has(e.id) ? "selected" : rooted.has(e.id) ? "alternate" : "unknown";
    let selection;
    if (!makesContext(e)) selection = "not-applicable";
    else if (branch === "unknown") selection = "unknown";
    else if (inContext.has(e.id)) selection = "direct";
    else if (kept.has(e.id) && edits.get(e.id)?.replacement === null) selection = "edited-out";
    else if (onPath.has(e.id) && compaction && e !== compaction) {
      const i = path.indexOf(e);
      const before = i < last && (keptFrom < 0 || i < keptFrom);
      if (before) selection = "summarized";
      else if (isSystem(e) && i < last) selection = compaction.systemMessage ? "summarized" : "not-selected";
      else selection = "not-selected";
    } else selection = "not-selected";
    out[e.id] = [branch, selection];
  }
  return out;
}

