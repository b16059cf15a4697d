// Shared by write-sessions.mjs and open-v1.mjs: which entry each context message came from.

// Maps each message of buildSessionContext().messages back to the entry it came from.
// Pi 0.73.1 (dist/core/session-manager.js buildSessionContext) pushes `entry.message` itself for
// message entries, so those are matched by object identity. The other three kinds are built
// fresh (dist/core/messages.js): createCompactionSummaryMessage(summary, tokensBefore, ts) for
// the last compaction on the path, createCustomMessage(customType, content, display, details, ts)
// for custom_message, createBranchSummaryMessage(summary, fromId, ts) for non-empty
// branch_summary. Apart from the leading compaction summary, messages come out in path order, so
// each is matched to the first not-yet-used path entry after the previous match whose fields
// equal what the constructor copied (content/details by identity, timestamp as Date.parse). Any
// message that cannot be matched aborts the script rather than guessing.
export function mapContext(path, messages) {
  const byMessage = new Map();
  for (const e of path) if (e.type === "message") byMessage.set(e.message, e.id);
  const ids = [];
  let pos = 0;
  messages.forEach((m, i) => {
    if (m.role === "compactionSummary") {
      const comps = path.filter(
        (e) =>
          e.type === "compaction" &&
          e.summary === m.summary &&
          e.tokensBefore === m.tokensBefore &&
          Date.parse(e.timestamp) === m.timestamp,
      );
      if (i !== 0 || comps.length === 0) throw new Error(`unmapped compaction summary at ${i}`);
      ids.push(comps[comps.length - 1].id);
      return;
    }
    let match = -1;
    for (let j = pos; j < path.length && match < 0; j++) {
      const e = path[j];
      const ok =
        (e.type === "message" && byMessage.get(m) === e.id) ||
        (m.role === "custom" &&
          e.type === "custom_message" &&
          e.customType === m.customType &&
          e.content === m.content &&
          e.display === m.display &&
          e.details === m.details &&
          Date.parse(e.timestamp) === m.timestamp) ||
        (m.role === "branchSummary" &&
          e.type === "branch_summary" &&
          e.summary === m.summary &&
          e.fromId === m.fromId &&
          Date.parse(e.timestamp) === m.timestamp);
      if (ok) match = j;
    }
    if (match < 0) throw new Error(`unmapped context message ${i} (role ${m.role})`);
    ids.push(path[match].id);
    pos = match + 1;
  });
  return ids;
}
