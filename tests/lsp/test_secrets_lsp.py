"""Issue 30 through the real server over stdio: no planted credential in any answer (search,
workspace/symbol, read, trace, hover, file history, line origin, status, piEvents/secrets); reads reveal them
only with the revealSecrets setting a person's editor sends. Issue 47: its six shapes in no answer, and
`piEvents/fileHistory` of `keys/ghp_….txt` answers alike for any value of that shape."""

from __future__ import annotations

import json
import os
import random
from typing import Any

from lsprotocol import types as t

from secretcorpus import issue47_six, oracle_other, oracle_token, write_file_session, write_session
from test_secrets import leaked


async def _ask(client: Any, method: str, params: Any) -> Any:
    return await client.protocol.send_request_async(method, params)


async def test_no_credential_in_any_answer(start, pi_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    sb, items, _ = write_session(pi_home.sessions, str(proj), random.Random(os.urandom(8)))
    client = await start([str(proj)])
    answers: list[Any] = []
    hits: dict[str, Any] = {}
    for query in ("", "key", "token", "redacted", "zephyrine", "password", "bearer", "env"):
        res = await _ask(client, "piEvents/search", {"query": query, "limit": 200})
        answers.append(res)
        hits.update({h["ref"]: h for h in res["hits"]})
        answers.append(await client.workspace_symbol_async(t.WorkspaceSymbolParams(query=query or "a")))
    assert len(hits) > 30
    for ref in hits:
        answers.append(await _ask(client, "piEvents/read", {"ref": ref, "before": 3, "after": 3}))
        answers.append(await _ask(client, "piEvents/trace", {"ref": ref}))
    note = proj / "notes.md"
    note.write_text("\n".join(hits) + "\n")
    hovers = [await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=note.as_uri()), position=t.Position(line, 12)))
        for line in range(len(hits))]
    assert "[redacted: " in repr(hovers)
    answers += hovers
    answers.append(await _ask(client, "piEvents/fileHistory", {"uri": (proj / ".env").as_uri()}))
    status = await _ask(client, "piEvents/status", {})
    audit = await _ask(client, "piEvents/secrets", {})
    answers += [status, audit]
    text = json.dumps(answers, default=repr)
    for p in items:
        assert not leaked(p.value, text), p.kind
    assert "[redacted: private-key]" in text and "[redacted: jwt]" in text
    assert status["secretEvents"] == len(audit["events"]) >= len({p.text for p in items if p.text}) - 1
    assert sum(e["count"] for e in audit["events"]) == len(items)
    secret_hits = await _ask(client, "piEvents/search", {"query": "", "limit": 200,
                                                         "filters": {"secrets": True}})
    listed = {e["ref"] for e in audit["events"]}
    assert secret_hits["hits"] and {h["ref"] for h in secret_hits["hits"]} <= listed


async def test_reveal_only_with_the_editor_setting(start, pi_home, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    sb, items, _ = write_session(pi_home.sessions, str(proj), random.Random(os.urandom(8)))
    pem = next(p for p in items if p.kind == "private-key")
    masked = await start([str(proj)])
    ref = (await _ask(masked, "piEvents/search", {"query": "redacted private"}))["hits"][0]["ref"]
    read = await _ask(masked, "piEvents/read", {"ref": ref})
    assert pem.value not in json.dumps(read) and "[redacted: private-key]" in read["fragments"][0]["text"]
    shown = await start([str(proj)], options={"piEvents": {"revealSecrets": True}})
    read = await _ask(shown, "piEvents/read", {"ref": ref})
    assert pem.value in read["fragments"][0]["text"]
    # turned off again by the editor: masked again
    shown.workspace_did_change_configuration(t.DidChangeConfigurationParams(
        settings={"piEvents": {"revealSecrets": False}}))
    read = await _ask(shown, "piEvents/read", {"ref": ref})
    assert pem.value not in json.dumps(read)


async def test_line_origin_masks_what_it_reads_back(start, pi_home, tmp_path):
    """lineOrigin reads the call's arguments back from the session file (not the masked index):
    what it shows of a written line that holds a credential is masked too."""
    from builder import SessionBuilder
    from secretcorpus import planted

    proj = tmp_path / "proj"
    proj.mkdir()
    # Each credential in the line it was planted in (its own context: an unquoted
    # `KEY=$word.` is a variable reference, never masked, so a bare `KEY=<value>` would leak
    # such a value by design, whatever lineOrigin does).
    items = [p for p in planted(random.Random(os.urandom(8))) if "\n" not in p.text]
    lines = [f"{p.text}  # ZEPHYRINE_DEPLOY_TARGET_{n}" for n, p in enumerate(items)]
    content = "\n".join(lines) + "\n"
    (proj / ".env").write_text(content)
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user("write the deploy config")
    sb.assistant(tool_calls=[("call_w", "write", {"path": str(proj / ".env"),
                                                  "content": content})])
    sb.tool_result("call_w", "write", f"Successfully wrote {len(content)} bytes")
    client = await start([str(proj)])
    answers = [await _ask(client, "piEvents/lineOrigin",
                          {"uri": (proj / ".env").as_uri(), "line": n})
               for n in range(len(lines))]
    found = [a for a in answers if a["hit"]]
    assert len(found) >= len(lines) // 2, answers
    assert "[redacted: " in json.dumps(found)
    text = json.dumps(answers)
    for p in items:
        assert not leaked(p.value, text), p.kind


async def test_line_origin_confirms_no_guess(start, pi_home, tmp_path):
    """A `write` wrote `DB_PASSWORD=<value>`: asking which event wrote a line that holds a guessed
    value gets the same answer as asking with the true value (both matched as they are shown,
    masked), so lineOrigin cannot be used to confirm a guess; lines without a credential are
    matched exactly as before."""
    from builder import SessionBuilder

    proj = tmp_path / "proj"
    proj.mkdir()
    value = "Zq8" + os.urandom(6).hex()
    content = f"DB_HOST=db.internal\nDB_PASSWORD={value}\nDB_PORT=5432\n"
    env = proj / ".env"
    env.write_text(content)
    sb = SessionBuilder(pi_home.sessions, str(proj))
    sb.user("write the database config")
    sb.assistant(tool_calls=[("call_w", "write", {"path": str(env), "content": content})])
    sb.tool_result("call_w", "write", f"Successfully wrote {len(content)} bytes")
    client = await start([str(proj)])

    async def origin(line: str) -> Any:
        env.write_text(content.replace(f"DB_PASSWORD={value}", line))
        client.text_document_did_close(t.DidCloseTextDocumentParams(t.TextDocumentIdentifier(env.as_uri())))
        return await _ask(client, "piEvents/lineOrigin", {"uri": env.as_uri(), "line": 1})

    true = await origin(f"DB_PASSWORD={value}")
    guesses = [await origin(f"DB_PASSWORD={guess}") for guess in ("hunter22", "Zq8" + "0" * 12, value[:-1])]
    assert true["hit"] is not None and value not in json.dumps(true)
    assert "[redacted: password]" in true["hit"]["snippet"] or "[redacted: password]" in json.dumps(true)
    for answer in guesses:
        assert answer == true  # nothing tells the true value from a guess
    # a line without a credential still needs its exact text
    host = await _ask(client, "piEvents/lineOrigin", {"uri": env.as_uri(), "line": 0})
    assert host["hit"] is not None and host["hit"]["ref"] == true["hit"]["ref"]
    env.write_text(content.replace("db.internal", "db.elsewhere"))
    assert (await _ask(client, "piEvents/lineOrigin", {"uri": env.as_uri(), "line": 0}))["hit"] is None


async def test_every_field_masked_and_stripped(start, pi_home, tmp_path):
    """A cwd, a tool name, an entry id and a file path holding a credential and escape sequences:
    masked and stripped in every answer of the real server (search, sessions, read, trace, file
    history, workspace/symbol, hover)."""
    from secretcorpus import write_hostile_fields

    proj = tmp_path / "proj"
    values, _ = write_hostile_fields(pi_home.sessions, proj, random.Random(os.urandom(8)))
    client = await start([str(proj)])
    found = await _ask(client, "piEvents/search", {"query": "", "limit": 200})
    answers: list[Any] = [found, await _ask(client, "piEvents/sessions", {})]
    refs = [h["ref"] for h in found["hits"]]
    assert len(refs) >= 5 and sum("[redacted: github-token]" in r for r in refs) == 1
    refs = [r for r in refs if "[redacted" not in r]  # an id that held a key cannot be asked for
    for ref in refs:
        answers.append(await _ask(client, "piEvents/read", {"ref": ref, "before": 2, "after": 2}))
        answers.append(await _ask(client, "piEvents/trace", {"ref": ref}))
    answers.append(await _ask(client, "piEvents/fileHistory", {"uri": "file:///srv"}))
    answers.append(await client.workspace_symbol_async(t.WorkspaceSymbolParams(query="hostile")))
    note = proj / "notes.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("\n".join(refs) + "\n")
    answers += [await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=note.as_uri()), position=t.Position(n, 12)))
        for n in range(len(refs))]
    text = json.dumps(answers, default=repr)
    assert "[redacted: github-token]" in text
    for value in values:
        assert not leaked(value, text)
    assert "\\u001b" not in text and "\\u0007" not in text and "owned" not in text


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


async def test_issue47_shapes_and_the_path_oracle(start, pi_home, tmp_path):
    rng = random.Random(os.urandom(8))
    proj = tmp_path / "proj"
    proj.mkdir()
    _, items, _ = write_session(pi_home.sessions, str(proj), rng)
    six = issue47_six(items)
    assert len(six) == 6
    token = oracle_token(rng)
    other = oracle_other(token)
    write_file_session(pi_home.sessions, proj, token)
    client = await start([str(proj)])
    histories = []
    for name in (token, other):
        res = await _ask(client, "piEvents/fileHistory", {"uri": (proj / "keys" / f"{name}.txt").as_uri()})
        text = json.dumps(res)
        assert token not in text and other not in text, text
        histories.append(text)
    assert histories[0] == histories[1]
    assert json.loads(histories[0])["counts"] == {"changed": 1, "read": 0}
    assert "[redacted: github-token]" in histories[0]
    answers: list[Any] = []
    hits: dict[str, Any] = {}
    for query in ("", "redis", "cache", "DB_PASS", "SMTP_PASS", "SECRET_KEY_BASE", "rails", "curl",
                  "user app", "Authorization Basic", "redacted password", "redacted basic"):
        res = await _ask(client, "piEvents/search", {"query": query, "limit": 200})
        answers.append(res)
        hits.update({h["ref"]: h for h in res["hits"]})
    for ref in hits:
        answers.append(await _ask(client, "piEvents/read", {"ref": ref, "before": 3, "after": 3}))
        answers.append(await _ask(client, "piEvents/trace", {"ref": ref}))
    note = proj / "notes.md"
    note.write_text("\n".join(hits) + "\n")
    answers += [await client.text_document_hover_async(t.HoverParams(
        text_document=t.TextDocumentIdentifier(uri=note.as_uri()), position=t.Position(line, 12)))
        for line in range(len(hits))]
    answers.append(await _ask(client, "piEvents/fileHistory", {"uri": (proj / ".env").as_uri()}))
    text = json.dumps(answers, default=repr)
    shown = "\n".join(_strings(json.loads(json.dumps(answers, default=lambda h: h.contents.value))))
    for p in six:
        assert not leaked(p.value, text), p.text
        # each was found: the text around it reached an answer, as recorded
        assert p.text.split(p.value)[0] + "[redacted: " in shown, p.text
    for kind in ("connection-string", "password", "generic-secret", "basic-auth"):
        assert f"[redacted: {kind}]" in text
