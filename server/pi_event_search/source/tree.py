"""Branch and selection states of a session's entries, derived as Pi builds its context.

The materialized leaf is the last entry in append order (Pi persists no leaf pointer). The selected
branch is the root-to-leaf path; the model context is that path, compaction-aware: the last
compaction on the path stands for everything before its `firstKeptEntryId`.

Pi 1.6 then applies context edits (`buildSessionProjection`): the latest `context_edit` in that
context for a target wins; `replacement: null` takes the target out (`edited-out`), any other keeps
it in with its content replaced (still `direct`; `States.edits` names the edit). System messages in
the kept range of the last compaction are dropped: the compaction's `systemMessage` checkpoint
stands for them.

Oh My Pi's files (`source="omp"`) follow its own buildSessionContext: its `/clear` (a
`reset_boundary` entry) ends the model context there, so when the last one on the path comes after
the last compaction, everything before it is `cleared` (a compaction after it wins instead); and a
failed, aborted or superseded answer, with its calls' results, is `dropped`.

A v1 file (no ids) is what Pi's own migration makes of it when it opens one: a straight chain in
file order (the indexer names its entries `v1~<n>` and chains their parents), whose compactions
keep from `firstKeptEntryIndex` (an index into the file's entries, header = 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

V1_PREFIX = "v1~"
SKIPPED = "skipped"  # a fact: the entry is on a line Pi's loader cannot parse
SELECTED, ALTERNATE, UNKNOWN = "selected", "alternate", "unknown"
DIRECT, SUMMARIZED, NOT_SELECTED, NOT_APPLICABLE, EDITED_OUT = (
    "direct", "summarized", "not-selected", "not-applicable", "edited-out")
CLEARED = "cleared"  # before Oh My Pi's /clear: on the selected path, out of the model context
# On the selected path, in what Pi would replay, but left out by Oh My Pi's: a failed, aborted or
# superseded answer and the results of its calls.
DROPPED = "dropped"
# The facts _drop reads (projection._replay_facts), stored for Oh My Pi's sessions only.
REPLAY_FACTS = ("failed", "calls", "bare", "callId", "interrupted")


@dataclass(slots=True)
class Node:
    seq: int
    entry_id: str
    parent_id: str | None
    entry_type: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class States:
    leaf: str | None
    branch: dict[str, str]
    selection: dict[str, str]
    path: list[str]
    # target -> the context_edit that decides its content in the model context (the latest one
    # there); only targets the edit changes: any target of a null one, the editable roles of others
    edits: dict[str, str] = field(default_factory=dict)


def makes_context(node: Node) -> bool:
    """Entries that buildSessionContext turns into model messages."""
    if node.entry_type in ("message", "custom_message"):
        return True
    if node.entry_type == "branch_summary":
        return not node.facts.get("emptySummary", False)
    return node.entry_type == "compaction"


def is_system(node: Node) -> bool:
    return node.entry_type == "message" and node.facts.get("role") == "system"


def replaceable(node: Node) -> bool:
    """Whether a non-null context edit replaces the entry's content (Pi's projectContextEntry:
    user, assistant, tool-result and custom messages; projection.py records other roles)."""
    return node.entry_type == "custom_message" or (
        node.entry_type == "message" and "role" not in node.facts)


def skipped(node: Node) -> bool:
    """Whether Pi's loader skips the entry (it shares its line with another object)."""
    return bool(node.facts.get(SKIPPED))


def compute(nodes: list[Node], has_tree: bool, leaf: str | None = None, *,
            source: str = "pi") -> States:
    """States for every node; `has_tree` is False when entries lack ids in a file whose version
    says they should have them (Pi itself cannot walk such a file: everything is unknown).
    `leaf` defaults to the last node Pi loads (the materialized leaf); an id not among them too.
    Entries Pi skips are `unknown` and take no part: Pi never sees them."""
    loaded = [n for n in nodes if not skipped(n)]
    unknown = {n.entry_id: UNKNOWN for n in nodes}
    if not loaded:
        return States(None, unknown, dict(unknown), [])
    by_id = {n.entry_id: n for n in loaded}
    leaf = leaf if leaf is not None and leaf in by_id else loaded[-1].entry_id
    path = _path(by_id, leaf) if has_tree else None
    if path is None:
        return States(leaf, unknown, dict(unknown), [])
    on_path = set(path)
    rooted = _rooted(by_id)
    branch = dict(unknown)
    branch.update({n.entry_id: SELECTED if n.entry_id in on_path
                   else ALTERNATE if rooted.get(n.entry_id) else UNKNOWN for n in loaded})
    order = {n.entry_id: i for i, n in enumerate(loaded, 1)}  # Pi's entry index (header = 0)
    selection = dict(unknown)
    edits: dict[str, str] = {}
    selection.update(_selection(loaded, [by_id[i] for i in path], branch, order, edits))
    if source == "omp":
        _clear(selection, [by_id[i] for i in path])
        _drop(selection, [by_id[i] for i in path])
    return States(leaf, branch, selection, path, edits)


def _path(by_id: dict[str, Node], leaf: str) -> list[str] | None:
    """Root-to-leaf ids, as Pi's getBranch walks them; None on a cycle."""
    path: list[str] = []
    seen: set[str] = set()
    cur: str | None = leaf
    while cur is not None and cur in by_id:
        if cur in seen:
            return None
        seen.add(cur)
        path.append(cur)
        parent = by_id[cur].parent_id
        cur = parent if parent != cur else None
    path.reverse()
    return path


def _rooted(by_id: dict[str, Node]) -> dict[str, bool]:
    """Whether each entry's ancestor chain reaches a real root (parentId null) without a cycle."""
    result: dict[str, bool] = {}
    for start in by_id:
        chain: list[str] = []
        cur: str | None = start
        ok = False
        while True:
            if cur is None:
                ok = True
                break
            if cur in result:
                ok = result[cur]
                break
            node = by_id.get(cur)
            if node is None or cur in chain:
                ok = False
                break
            chain.append(cur)
            cur = node.parent_id if node.parent_id != cur else None
        for item in chain:
            result[item] = ok
    return result


def _selection(nodes: list[Node], path: list[Node], branch: dict[str, str],
               order: dict[str, int], edits: dict[str, str]) -> dict[str, str]:
    selection: dict[str, str] = {}
    for n in nodes:
        if not makes_context(n):
            selection[n.entry_id] = NOT_APPLICABLE
        elif branch[n.entry_id] == UNKNOWN:
            selection[n.entry_id] = UNKNOWN
        else:
            selection[n.entry_id] = NOT_SELECTED
    last = max((i for i, n in enumerate(path) if n.entry_type == "compaction"), default=None)
    if last is None:
        context = path
    else:
        compaction = path[last]
        kept_id = _first_kept(compaction, nodes, order)
        kept = next((i for i in range(last) if path[i].entry_id == kept_id), last)
        folded = SUMMARIZED if compaction.facts.get("systemMessage") else NOT_SELECTED
        for i in range(last):
            n = path[i]
            if makes_context(n) and i < kept:
                selection[n.entry_id] = SUMMARIZED
            elif is_system(n):
                # Pi drops system messages from the kept range: the compaction's prompt
                # checkpoint (systemMessage) holds what they said.
                selection[n.entry_id] = folded
            elif n.entry_type == "compaction":
                # An older compaction inside the kept range: Pi drops its summary from the context.
                selection[n.entry_id] = NOT_SELECTED
        context = [compaction] + [n for n in path[kept:last] if not is_system(n)] + path[last + 1:]
    # Pi's buildSessionProjection: the latest edit of a target among the context entries wins
    # (an edit on another branch, or summarized away, changes nothing).
    latest: dict[str, Node] = {}
    for n in context:
        target = n.facts.get("target") if n.entry_type == "context_edit" else None
        if isinstance(target, str):
            latest[target] = n
    for i, n in enumerate(context):
        if not makes_context(n) or (i > 0 and n.entry_type == "compaction"):
            continue
        edit = latest.get(n.entry_id)
        omitted = edit is not None and edit.facts.get("omit") is True
        selection[n.entry_id] = EDITED_OUT if omitted else DIRECT
        if edit is not None and (omitted or replaceable(n)):
            edits[n.entry_id] = edit.entry_id
    return selection


def _clear(selection: dict[str, str], path: list[Node]) -> None:
    """Oh My Pi's reset boundary: the last one on the path, unless a later compaction supersedes
    it, takes everything before it out of the model context (the compaction before it too)."""
    reset = max((i for i, n in enumerate(path) if n.entry_type == "reset_boundary"), default=-1)
    compaction = max((i for i, n in enumerate(path) if n.entry_type == "compaction"), default=-1)
    if reset < 0 or reset < compaction:
        return
    for n in path[:reset]:
        if selection[n.entry_id] in (DIRECT, SUMMARIZED):
            selection[n.entry_id] = CLEARED


def _drop(selection: dict[str, str], path: list[Node]) -> None:
    """The answers Oh My Pi's buildSessionContext leaves out of the model context, in its order:
    a retry's superseded attempt and an error turn with nothing in it; an answer of nothing but
    tool calls none of which has a result in the context (stripped, then empty); then, from the
    last message back, every other error or aborted answer unless the hidden interrupted-thinking
    note follows it, with the results of its calls that come after it."""
    dropped = {n.entry_id for n in path if selection[n.entry_id] == DIRECT
               and n.facts.get("failed") in ("retry", "empty")}
    context = [n for n in path if selection[n.entry_id] == DIRECT and n.entry_id not in dropped]
    paired = {n.facts["callId"] for n in context if isinstance(n.facts.get("callId"), str)}
    dropped |= {n.entry_id for n in context if n.facts.get("bare")
                and not any(c in paired for c in n.facts.get("calls") or [])}
    context = [n for n in context if n.entry_id not in dropped]
    i = len(context) - 1
    while i >= 0:
        n = context[i]
        if n.facts.get("failed") in ("error", "aborted") and not (
                i + 1 < len(context) and context[i + 1].facts.get("interrupted")):
            calls = set(n.facts.get("calls") or [])
            dropped.add(n.entry_id)
            gone = {m.entry_id for m in context[i + 1:] if m.facts.get("callId") in calls}
            dropped |= gone
            context = context[:i] + [m for m in context[i + 1:] if m.entry_id not in gone]
        i -= 1
    for entry_id in dropped:
        selection[entry_id] = DROPPED


def _first_kept(compaction: Node, loaded: list[Node], order: dict[str, int]) -> str | None:
    kept = compaction.facts.get("firstKept")
    if isinstance(kept, str):
        return kept
    index = compaction.facts.get("firstKeptIndex")
    if not isinstance(index, int) or not compaction.entry_id.startswith(V1_PREFIX):
        return None
    # Pi's migrateV1ToV2 assigns ids in the order of the entries it loaded while it converts the
    # index, so an index pointing at a later entry (or the header) resolves to nothing.
    own = order.get(compaction.entry_id, 0)
    return loaded[index - 1].entry_id if 1 <= index <= own else None
