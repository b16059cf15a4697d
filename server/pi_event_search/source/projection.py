"""Pure projection of one Pi entry into one event, its searchable fragments, relations and file evidence.

No I/O and no storage here. Thinking, images, signatures and extension payloads never become text
(but the strings an extractor registry names in a `custom` entry's data: extractors.py);
`omissions` lists them so exact reads can say what was left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pi_event_search.core import secrets
from pi_event_search.source.extractors import EMPTY, Registry
from pi_event_search.source.pitools import file_evidence, normalize_arguments, resolve_path, text_of

# Oversized fragments keep a head and a tail. The marker holds ordinary tokens, so a phrase can
# never match across the gap (FTS5 phrases need adjacent tokens).
HEAD_CHARS = 32_000
TAIL_CHARS = 16_000
PREVIEW_CHARS = 160

CONTEXT_ROLES = {
    "message": "conversation",
    "custom_message": "conversation",
    "compaction": "summary",
    "branch_summary": "summary",
    "model_change": "control",
    "thinking_level_change": "control",
    "context_edit": "control",
}
# The message roles whose content a non-null context edit replaces (Pi's projectContextEntry;
# hookMessage is custom before Pi's v3 migration). Any other role is kept in the facts: the tree
# pass needs it (tree.replaceable, tree.is_system).
REPLACEABLE_ROLES = ("user", "assistant", "toolResult", "custom", "hookMessage")


@dataclass(slots=True)
class Fragment:
    fragment_id: str
    kind: str
    text: str
    meta: str = ""  # tool name, error state, custom type: searchable, never shown as snippet
    # The text's UTF-8 when scrub_all had it at hand, for packing (not part of the fragment).
    utf8: bytes | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class Omission:
    field: str
    reason: str
    size: int
    mime_type: str | None = None


@dataclass(slots=True)
class Event:
    entry_type: str
    role: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    context_role: str = "metadata"
    fragments: list[Fragment] = field(default_factory=list)
    omissions: list[Omission] = field(default_factory=list)
    relations: list[tuple[str, str]] = field(default_factory=list)  # (type, target key)
    files: list[tuple[str, str, str]] = field(default_factory=list)  # (op, path, label)
    call_ids: list[str] = field(default_factory=list)
    tree: dict[str, Any] = field(default_factory=dict)  # facts the tree pass needs
    secrets: dict[str, int] = field(default_factory=dict)  # credentials masked, by kind
    # Facts of a typed event that reads show (tools a system message adds, a usage's tokens, what
    # a context edit does, an answer's thinking level): from the source entry, never stored.
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def preview(self) -> str:
        """The stored preview of the event's nodes (read neighbours, trace). Never a custom entry's
        text: the index holds the writer's, and each process shows its own registry's only."""
        for frag in self.fragments:
            if frag.kind == "custom.entry":
                continue
            text = " ".join(frag.text[: PREVIEW_CHARS * 2].split())
            if text:
                return text[:PREVIEW_CHARS] + ("…" if len(text) > PREVIEW_CHARS else "")
        return self.entry_type


def bound(text: str) -> str:
    """Head and tail of an oversized text around a visible omission marker."""
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    omitted = len(text) - HEAD_CHARS - TAIL_CHARS
    marker = f"\n[pi-event-search omitted {omitted} characters here]\n"
    return text[:HEAD_CHARS] + marker + text[-TAIL_CHARS:]


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def project(entry: dict[str, Any], cwd: str | None, *, bounded: bool = True,
            reveal: bool = False, extractors: Registry = EMPTY, scrubbed: bool = True) -> Event:
    """Entry -> Event, its texts scrubbed (core/secrets.py: credentials masked unless `reveal`,
    controls stripped). `bounded=False` keeps full texts (exact reads). `extractors`: the custom
    types whose data becomes `custom.entry` text. `scrubbed=False`: raw texts, for `scrub_all`
    (which also bounds them) to scrub many events at once."""
    entry_type = _s(entry.get("type")) or "unknown"
    event = Event(entry_type=entry_type, context_role=CONTEXT_ROLES.get(
        entry_type, OMP_CONTEXT_ROLES.get(entry_type, "metadata")))
    handler = _HANDLERS.get(entry_type) or _OMP_HANDLERS.get(entry_type)
    if handler is not None:
        handler(event, entry, cwd or "")
        _replay_facts(event, entry)
    elif entry_type == "custom":
        _custom(event, entry, extractors)
    if scrubbed:
        scrub_all([event], bounded=bounded, reveal=reveal)
    return event


def scrub_all(events: list[Event], *, bounded: bool = True, reveal: bool = False,
              utf8: bool = False) -> None:
    """Scrubs the texts of events projected with `scrubbed=False`, searched together. `utf8`:
    an unchanged text keeps its UTF-8 (`Fragment.utf8`), for packing."""
    frags = [f for event in events for f in event.fragments]
    scanned, encoded = secrets.scan_many([f.text for f in frags], reveal=reveal)
    for i, (frag, (text, _)) in enumerate(zip(frags, scanned, strict=True)):
        # Masked before the head and tail are cut: a private key across the cut is still one block.
        if bounded and len(text) > HEAD_CHARS + TAIL_CHARS:
            frag.text = bound(text)
        else:
            if utf8 and encoded is not None and text is frag.text:  # unchanged
                frag.utf8 = encoded[i]
            frag.text = text
    counts = iter(kinds for _, kinds in scanned)
    for event in events:
        for _ in event.fragments:
            kinds = next(counts)
            if kinds:
                _count(event.secrets, kinds)
        for key in ("name", "label"):  # shown in traces and pickers: a session name, a label
            if event.tree.get(key):
                event.tree[key], kinds = secrets.scan(event.tree[key], reveal=reveal)
                if key == "label" and kinds:
                    _count(event.secrets, kinds)
        # Paths and tool names reach tables (file_refs, events) and the full-text meta column:
        # masked as texts are, so no table holds a value and a `file` argument of a credential's
        # shape matches whichever value was recorded (query/filepaths.py masks it the same way).
        event.files = [(op, secrets.scan(path, reveal=reveal)[0], label)
                       for op, path, label in event.files]
        if event.tool_name:
            event.tool_name = secrets.scan(event.tool_name, reveal=reveal)[0]
        for frag in event.fragments:
            if frag.meta:
                frag.meta = secrets.scan(frag.meta, reveal=reveal)[0]
        for key, value in event.metadata.items():  # recorded text too: names, a usage's note
            if isinstance(value, str):
                event.metadata[key] = secrets.scan(value, reveal=reveal)[0]
            elif isinstance(value, list):
                event.metadata[key] = [secrets.scan(v, reveal=reveal)[0] for v in value]
        event.fragments = [f for f in event.fragments if f.text.strip()]


def _count(into: dict[str, int], kinds: Counter[str]) -> None:
    for kind, n in kinds.items():
        into[kind] = into.get(kind, 0) + n


# -- messages -----------------------------------------------------------------------------------
def _message(event: Event, entry: dict[str, Any], cwd: str) -> None:
    msg = entry.get("message")
    if not isinstance(msg, dict):
        return
    role = _s(msg.get("role")) or "unknown"
    event.role = role
    if role not in REPLACEABLE_ROLES:
        event.tree["role"] = role
    if role == "user":
        _blocks(event, msg.get("content"), "user.text", "message.content")
    elif role == "assistant":
        _assistant(event, msg, cwd)
    elif role == "toolResult":
        _tool_result(event, msg)
    elif role == "bashExecution":
        _bash(event, msg)
    elif role in ("custom", "hookMessage"):
        meta = _s(msg.get("customType")) or ""
        _blocks(event, msg.get("content"), "custom.message", "message.content", meta)
        _details(event, msg, "message.details")
    elif role == "system":
        _system(event, msg)
    elif role == "pythonExecution":  # Oh My Pi's roles
        _python_execution(event, msg)
    elif role == "fileMention":
        _file_mention(event, msg, cwd)


def _system(event: Event, msg: dict[str, Any]) -> None:
    """Pi 1.x's prompt and tool loadout: `sections` patch the prompt by name (null removes one),
    `toolsAdded`/`toolsRemoved` the tools. Each section is a `system.prompt` fragment (searched
    only when asked for: every session repeats them), the tools are metadata."""
    event.context_role = "control"
    if isinstance(msg.get("content"), str) and msg["content"]:
        event.fragments.append(Fragment("system.prompt:0", "system.prompt", msg["content"]))
    sections = msg.get("sections")
    removed: list[str] = []
    if isinstance(sections, dict):
        for i, (name, text) in enumerate(sections.items(), 1):
            if isinstance(text, str):
                event.fragments.append(Fragment(f"system.prompt:{i}", "system.prompt", text, name))
            elif text is None:
                removed.append(name)
        event.metadata["sections"] = [n for n, v in sections.items() if isinstance(v, str)]
    if removed:
        event.metadata["sectionsRemoved"] = removed
    for key in ("toolsAdded", "toolsRemoved"):
        tools = msg.get(key)
        if isinstance(tools, list):
            event.metadata[key] = [t["name"] for t in tools
                                   if isinstance(t, dict) and isinstance(t.get("name"), str)]


def _blocks(event: Event, content: Any, kind: str, where: str, meta: str = "") -> None:
    """Text of a string-or-blocks content; images are recorded as omitted."""
    if isinstance(content, str):
        event.fragments.append(Fragment(f"{kind}:0", kind, content, meta))
        return
    if not isinstance(content, list):
        return
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            event.fragments.append(Fragment(f"{kind}:{i}", kind, block["text"], meta))
            _truncated(event, f"{where}[{i}]", block["text"])
        elif btype == "image":  # base64 inline, or a reference to Oh My Pi's blob store
            event.omissions.append(_image_omission(f"{where}[{i}]", block))


def _assistant(event: Event, msg: dict[str, Any], cwd: str) -> None:
    content = msg.get("content")
    blocks = content if isinstance(content, list) else []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            event.fragments.append(Fragment(f"assistant.text:{i}", "assistant.text", block["text"]))
            if isinstance(block.get("textSignature"), str):
                event.omissions.append(Omission(f"message.content[{i}].textSignature", "signature",
                                                len(block["textSignature"])))
        elif btype == "thinking":
            thinking = block.get("thinking")
            event.omissions.append(Omission(f"message.content[{i}].thinking", "thinking",
                                            len(thinking) if isinstance(thinking, str) else 0))
            sig = block.get("thinkingSignature")
            if isinstance(sig, str):
                event.omissions.append(Omission(f"message.content[{i}].thinkingSignature",
                                                "signature", len(sig)))
        elif btype == "toolCall":
            _tool_call(event, i, block, cwd)
    if isinstance(content, str):
        event.fragments.append(Fragment("assistant.text:0", "assistant.text", content))
    error = _s(msg.get("errorMessage"))
    event.is_error = msg.get("stopReason") == "error"
    level = _s(msg.get("thinkingLevel"))
    if level:
        event.metadata["thinkingLevel"] = level
    if error:
        n = len(blocks)
        event.fragments.append(Fragment(f"assistant.text:{n}", "assistant.text", error, "error"))


def _tool_call(event: Event, i: int, block: dict[str, Any], cwd: str) -> None:
    name = _s(block.get("name")) or "unknown"
    args = block.get("arguments")
    event.fragments.append(Fragment(f"tool.call:{i}", "tool.call", normalize_arguments(name, args),
                                    name))
    event.tool_name = event.tool_name or name
    call_id = _s(block.get("id"))
    if call_id:
        event.call_ids.append(call_id)
    if isinstance(block.get("partialJson"), str):
        event.omissions.append(Omission(f"message.content[{i}].partialJson", "payload",
                                        len(block["partialJson"])))
    evidence = file_evidence(name, args, cwd)
    if evidence is not None:
        event.files.append((*evidence, "derived"))


def _tool_result(event: Event, msg: dict[str, Any]) -> None:
    name = _s(msg.get("toolName")) or "unknown"
    event.tool_name = name
    event.is_error = msg.get("isError") is True
    meta = f"{name} error" if event.is_error else name
    _blocks(event, msg.get("content"), "tool.result", "message.content", meta)
    call_id = _s(msg.get("toolCallId"))
    if call_id:
        event.relations.append(("tool-result-for", call_id))
    _details(event, msg, "message.details")


def _details(event: Event, msg: dict[str, Any], where: str) -> None:
    details = msg.get("details")
    if details is not None and details != {}:
        event.omissions.append(Omission(where, "details", len(text_of(details))))


def _bash(event: Event, msg: dict[str, Any]) -> None:
    event.tool_name = "bash"
    code = msg.get("exitCode")
    event.is_error = (isinstance(code, int) and code != 0) or msg.get("cancelled") is True
    meta = "bash error" if event.is_error else "bash"
    if isinstance(msg.get("command"), str):
        event.fragments.append(Fragment("bash.command:0", "bash.command", msg["command"], meta))
    if isinstance(msg.get("output"), str):
        event.fragments.append(Fragment("bash.output:1", "bash.output", msg["output"], meta))
    event.tree["excludeFromContext"] = msg.get("excludeFromContext") is True


# -- Oh My Pi -----------------------------------------------------------------------------------
# Its entry types and message roles that Pi lacks (@oh-my-pi/pi-coding-agent's session-entries.ts,
# 18.x). Text is searchable only where a person wrote or read it: a title, a subagent's task, a
# Python cell and its output, a file mentioned with `@` (what the model read), injected rule
# names. A credential pin's hash is never text (it identifies an account); model usage and the
# control entries (service tier, mode, /clear) are typed events with facts only.
# Oh My Pi cuts strings over 500k characters when it writes them (session-persistence.ts) and
# says so at the end of the string.
TRUNCATION_NOTICE = "\n\n[Session persistence truncated large content]"
BLOB_PREFIX = "blob:sha256:"  # an image moved to ~/.omp/agent/blobs (blob-store.ts)

OMP_CONTEXT_ROLES: dict[str, str] = {
    "service_tier_change": "control",
    "mode_change": "control",
    "reset_boundary": "control",
    "ttsr_injection": "control",
    "session_init": "control",
}


def _replay_facts(event: Event, entry: dict[str, Any]) -> None:
    """What Oh My Pi's context builder needs to leave answers out (tree.py, `dropped`): a failed,
    aborted or superseded answer and its calls, an answer of nothing but tool calls and those
    calls, each result's call, and the hidden note that keeps an interrupted answer in. Stored
    for Oh My Pi's sessions only (index/rows.py)."""
    msg = entry.get("message") if entry.get("type") == "message" else entry
    if not isinstance(msg, dict):
        return
    role = msg.get("role")
    if role == "assistant":
        stop = msg.get("stopReason")
        raw = msg.get("content")
        content: list[Any] = raw if isinstance(raw, list) else []
        if msg.get("retryRecovery"):
            event.tree["failed"] = "retry"
        elif stop == "error" and not any(_substantive(b) for b in content):
            event.tree["failed"] = "empty"
        elif stop in ("error", "aborted"):
            event.tree["failed"] = stop
        # a block's type as a string, or None (any other JSON value: a list is not hashable)
        types = [_s(b.get("type")) if isinstance(b, dict) else None for b in content]
        if "toolCall" in types and set(types) <= {"toolCall", "redactedThinking"}:
            event.tree["bare"] = True  # emptied when its calls have no result: then left out
        if event.tree.get("failed") or event.tree.get("bare"):
            event.tree["calls"] = [b["id"] for b in content if isinstance(b, dict)
                                   and b.get("type") == "toolCall" and isinstance(b.get("id"), str)]
    elif role == "toolResult" and isinstance(msg.get("toolCallId"), str):
        event.tree["callId"] = msg["toolCallId"]
    elif msg.get("customType") == "interrupted-thinking" and (
            role == "custom" or entry.get("type") == "custom_message"):
        event.tree["interrupted"] = True


def _substantive(block: Any) -> bool:
    """Oh My Pi's isEmptyErrorTurn, per block: anything but blank text, blank thinking or a
    fallback marker counts."""
    if not isinstance(block, dict):
        return False
    kind = block.get("type")
    if kind == "text":
        return bool(str(block.get("text") or "").strip())
    if kind == "thinking":
        return bool(str(block.get("thinking") or "").strip()
                    or str(block.get("thinkingSignature") or "").strip())
    if kind == "redactedThinking":
        return bool(str(block.get("data") or "").strip())
    return kind != "fallback"  # a tool call, or a kind it does not know: never discarded


def _truncated(event: Event, where: str, text: str) -> None:
    if text.endswith(TRUNCATION_NOTICE):
        event.omissions.append(Omission(where, "truncated by Oh My Pi", 0))


# -- Oh My Pi: message roles
def _python_execution(event: Event, msg: dict[str, Any]) -> None:
    """A Python cell the person ran (`$`/`$$`), like Pi's bashExecution."""
    event.tool_name = "python"
    code = msg.get("exitCode")
    event.is_error = (isinstance(code, int) and code != 0) or msg.get("cancelled") is True
    meta = "python error" if event.is_error else "python"
    if isinstance(msg.get("code"), str):
        event.fragments.append(Fragment("python.code:0", "python.code", msg["code"], meta))
    if isinstance(msg.get("output"), str):
        event.fragments.append(Fragment("python.output:1", "python.output", msg["output"], meta))
        _truncated(event, "message.output", msg["output"])
    event.tree["excludeFromContext"] = msg.get("excludeFromContext") is True


def _file_mention(event: Event, msg: dict[str, Any], cwd: str) -> None:
    """Files the person mentioned with `@`: their content went to the model as read."""
    files = msg.get("files")
    for i, item in enumerate(files if isinstance(files, list) else []):
        if not isinstance(item, dict):
            continue
        path = _s(item.get("path")) or ""
        content = _s(item.get("content")) or ""
        if path or content:
            event.fragments.append(Fragment(f"file.mention:{i}", "file.mention",
                                            f"{path}\n{content}" if content else path, "read"))
        resolved = resolve_path(path, cwd) if path else None
        if resolved:
            event.files.append(("read", resolved, "recorded"))
        image = item.get("image")
        if isinstance(image, dict):
            event.omissions.append(_image_omission(f"message.files[{i}].image", image))


def _image_omission(where: str, block: dict[str, Any]) -> Omission:
    """An image block: its bytes inline (base64), or a reference to Oh My Pi's blob store."""
    data = block.get("data")
    size = 0 if not isinstance(data, str) or data.startswith(BLOB_PREFIX) else len(data) * 3 // 4
    reason = "image (in Oh My Pi's blob store)" if isinstance(data, str) and \
        data.startswith(BLOB_PREFIX) else "image"
    return Omission(where, reason, size, _s(block.get("mimeType")))




# -- Oh My Pi: entry types
def _title_change(event: Event, entry: dict[str, Any], cwd: str) -> None:
    """A new session title (Oh My Pi's session name): searchable as Pi's session_info is."""
    title = _s(entry.get("title"))
    name = " ".join(title.split()) if title is not None else ""
    if name:
        event.fragments.append(Fragment("session.name:0", "session.name", name))
    event.tree["name"] = name
    _facts(event, entry, ("source", "trigger"))


def _ttsr_injection(event: Event, entry: dict[str, Any], cwd: str) -> None:
    """Rules injected into the model's context when their trigger matched (names only)."""
    rules = [r for r in entry.get("injectedRules") or [] if isinstance(r, str) and r.strip()]
    if rules:
        event.fragments.append(Fragment("ttsr.rules:0", "ttsr.rules", "\n".join(rules), "ttsr"))
        event.metadata["rules"] = rules


def _model_change(event: Event, entry: dict[str, Any], cwd: str) -> None:
    """The model a role uses from here: Pi's `{provider, modelId}`, Oh My Pi's `{model:
    "provider/id", role}` (a role other than `default`: `smol`, `slow`, ...)."""
    model = _s(entry.get("model"))
    provider, model_id = _s(entry.get("provider")), _s(entry.get("modelId"))
    if model is None and provider and model_id:
        model = f"{provider}/{model_id}"
    if model:
        event.metadata["model"] = model
    _facts(event, entry, ("role",))


def _facts(event: Event, entry: dict[str, Any], keys: tuple[str, ...]) -> None:
    """Short fields of a typed event that a read shows (names, ids, counts; never free text)."""
    for key in keys:
        value = entry.get(key)
        if isinstance(value, str | int | float | bool) or (
                isinstance(value, list) and all(isinstance(v, str) for v in value)):
            event.metadata[key] = value


def _session_init(event: Event, entry: dict[str, Any], cwd: str) -> None:
    """A subagent's start: the task it was given (searchable) and its system prompt (Pi 1.x's
    `system.prompt` kind: searched only when asked for)."""
    task = _s(entry.get("task"))
    agent = _s(entry.get("agent")) or ""
    if task:
        event.fragments.append(Fragment("session.task:0", "session.task", task, agent))
    prompt = _s(entry.get("systemPrompt"))
    if prompt:
        event.fragments.append(Fragment("system.prompt:1", "system.prompt", prompt, agent))
    _facts(event, entry, ("agent", "modelRole", "resolvedModel", "tools", "readOnly"))


def _credential_pin(event: Event, entry: dict[str, Any], cwd: str) -> None:
    """Which account served a provider: the hash identifies the account, so it is never text."""
    if isinstance(entry.get("hash"), str):
        event.omissions.append(Omission("hash", "credential", len(entry["hash"])))
    _facts(event, entry, ("provider",))


def _model_usage(event: Event, entry: dict[str, Any], cwd: str) -> None:
    """A model call outside the transcript (a title, a summary): counted, never in context."""
    event.is_error = entry.get("stopReason") == "error"
    _facts(event, entry, ("purpose", "role", "provider", "model", "stopReason"))
    usage = entry.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("totalTokens"), int | float):
        event.metadata["totalTokens"] = usage["totalTokens"]


def _payload(event: Event, entry: dict[str, Any], cwd: str) -> None:
    """Control entries whose data is facts, not text (mode data, service tiers)."""
    for key in ("data", "serviceTier"):
        if isinstance(entry.get(key), dict):
            event.omissions.append(Omission(key, "payload", len(text_of(entry[key]))))
    _facts(event, entry, ("mode",))
    tier = entry.get("serviceTier")
    if isinstance(tier, dict):
        event.metadata["serviceTier"] = {k: v for k, v in tier.items() if isinstance(v, str)}


def _nothing(event: Event, entry: dict[str, Any], cwd: str) -> None:
    """A typed event with no text (a /clear boundary, older archive and MCP selection
    entries)."""


_OMP_HANDLERS: dict[str, Callable[[Event, dict[str, Any], str], None]] = {
    "title_change": _title_change,
    "ttsr_injection": _ttsr_injection,
    "session_init": _session_init,
    "credential_pin": _credential_pin,
    "model_usage": _model_usage,
    "model_change": _model_change,
    "mode_change": _payload,
    "service_tier_change": _payload,
    "reset_boundary": _nothing,
    "archive": _nothing,
    "mcp_tool_selection": _nothing,
}


# -- other entry types -------------------------------------------------------------------------
def _compaction(event: Event, entry: dict[str, Any], cwd: str) -> None:
    summary = _s(entry.get("summary")) or ""
    event.fragments.append(Fragment("summary.compaction:0", "summary.compaction", summary))
    kept = entry.get("firstKeptEntryId")
    if isinstance(kept, str):
        event.relations.append(("compacts", kept))
        event.tree["firstKept"] = kept
    elif isinstance(entry.get("firstKeptEntryIndex"), int):
        event.tree["firstKeptIndex"] = entry["firstKeptEntryIndex"]
    _compaction_checkpoint(event, entry)
    _summary_files(event, entry, cwd)


def _branch_summary(event: Event, entry: dict[str, Any], cwd: str) -> None:
    summary = _s(entry.get("summary")) or ""
    event.fragments.append(Fragment("summary.branch:0", "summary.branch", summary))
    from_id = _s(entry.get("fromId"))
    if from_id and from_id != "root":
        event.relations.append(("branch-summary-from", from_id))
    event.tree["emptySummary"] = not summary
    _summary_files(event, entry, cwd)


def _summary_files(event: Event, entry: dict[str, Any], cwd: str) -> None:
    details = entry.get("details")
    if not isinstance(details, dict):
        return
    for key, op in (("readFiles", "read"), ("modifiedFiles", "changed")):
        paths = details.get(key)
        for raw in paths if isinstance(paths, list) else []:
            path = resolve_path(raw, cwd)
            if path:
                event.files.append((op, path, "recorded"))


def _custom_message(event: Event, entry: dict[str, Any], cwd: str) -> None:
    meta = _s(entry.get("customType")) or ""
    _blocks(event, entry.get("content"), "custom.message", "content", meta)
    if entry.get("details") is not None:
        event.omissions.append(Omission("details", "details", len(text_of(entry["details"]))))


def _session_info(event: Event, entry: dict[str, Any], cwd: str) -> None:
    name = _s(entry.get("name"))
    if name is not None:
        event.fragments.append(Fragment("session.name:0", "session.name", " ".join(name.split())))
    event.tree["name"] = " ".join(name.split()) if name is not None else ""


def _label(event: Event, entry: dict[str, Any], cwd: str) -> None:
    target = _s(entry.get("targetId"))
    if target:
        event.relations.append(("labels", target))
        event.tree["label"] = _s(entry.get("label")) or ""


def _custom(event: Event, entry: dict[str, Any], extractors: Registry) -> None:
    """An extension's state: searchable only through a registered extractor, each string it finds
    one fragment, shown after the extractor's label. The type is kept (facts) so that a changed
    registry finds the sessions to project again (index/registry.py)."""
    custom_type = _s(entry.get("customType")) or ""
    event.tree["customType"] = custom_type
    extractor = extractors.get(custom_type)
    if extractor is not None:
        for n, text in enumerate(extractor.strings(entry.get("data"))):
            event.fragments.append(Fragment(f"custom.entry:{n}", "custom.entry",
                                            f"{extractor.label}: {text}", custom_type))
    if "data" in entry:
        event.omissions.append(Omission("data", "payload", len(text_of(entry["data"]))))


def _compaction_checkpoint(event: Event, entry: dict[str, Any]) -> None:
    system = entry.get("systemMessage")
    if isinstance(system, dict):
        event.tree["systemMessage"] = True
        event.omissions.append(Omission("systemMessage", "payload", len(text_of(system))))


def _usage(event: Event, entry: dict[str, Any], cwd: str) -> None:
    """Model-attributed usage outside any answer (Pi 1.x; cache warming, ...): counted, never
    in the model context, no text."""
    for key in ("kind", "provider", "model", "note"):
        if isinstance(entry.get(key), str):
            event.metadata[key] = entry[key]
    usage = entry.get("usage")
    if isinstance(usage, dict):
        if isinstance(usage.get("totalTokens"), int | float):
            event.metadata["totalTokens"] = usage["totalTokens"]
        cost = usage.get("cost")
        if isinstance(cost, dict) and isinstance(cost.get("total"), int | float):
            event.metadata["cost"] = cost["total"]


def _context_edit(event: Event, entry: dict[str, Any], cwd: str) -> None:
    """An append-only edit of an earlier entry's part of the model context (Pi 1.x): null takes
    the target out, anything else replaces its content. The replacement's text is what the model
    read from then on: a `context.edit` fragment."""
    target = _s(entry.get("targetId"))
    if target:
        event.relations.append(("edits", target))
        event.tree["target"] = target
        event.metadata["targetId"] = target
    replacement = entry.get("replacement")
    if replacement is None and "replacement" in entry:
        event.tree["omit"] = True
        event.metadata["replacement"] = "removed"
        return
    event.metadata["replacement"] = "replaced"
    content = replacement.get("content") if isinstance(replacement, dict) else None
    _blocks(event, content, "context.edit", "replacement.content")


_HANDLERS = {
    "message": _message,
    "compaction": _compaction,
    "branch_summary": _branch_summary,
    "custom_message": _custom_message,
    "session_info": _session_info,
    "label": _label,
    "usage": _usage,
    "context_edit": _context_edit,
}
