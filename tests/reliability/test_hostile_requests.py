"""Hostile requests to the language server over its real stdio, through our own Content-Length
framing: malformed JSON-RPC, wrong types, 1 MB queries, unknown methods, 1,000 concurrent
requests, cancellation storms, hypothesis query strings. The server answers every request (a
result or an error code of the protocol) and keeps serving."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder import SessionBuilder, sample_session
from reliability.relsupport import FIGURES, RawLsp, guard_cmd, guard_env, size, violations
from support import PiHome, tree_digest

# Codes a request may legitimately end with (JSON-RPC, LSP, docs/protocol.md); never -32603.
# In FRAMES, code 0 means any answer (a result or one of these).
ALLOWED = {-32700, -32600, -32601, -32602, -32800, -32001, -32002, -32003, -32004}
QUERIES = size(300, 3000)
CONCURRENT = 1000


class Server:
    def __init__(self, root: Path) -> None:
        self.home = PiHome(root, root / "agent", root / "agent" / "sessions", root / "i.sqlite3")
        self.home.sessions.mkdir(parents=True)
        self.project = root / "proj"
        self.project.mkdir()
        self.inside = sample_session(self.home.sessions, str(self.project))
        for i in range(40):
            sb = SessionBuilder(self.home.sessions, str(self.project))
            sb.user(f"bulk question {i} about sockets and retries")
            sb.assistant(f"bulk answer {i}", tool_calls=[(f"c{i}", "bash", {"command": f"make t{i}"})])
            sb.tool_result(f"c{i}", "bash", "error: sockets closed" if i % 2 else "ok")
        self.log = root / "guard.log"
        self.digest = tree_digest(self.home.agent)
        env = guard_env(self.home.env(), [self.home.agent], self.log)
        self.client = RawLsp(guard_cmd("serve"), env, cwd=str(root))
        self.client.initialize(str(self.project))
        self.requests = 0

    def ok(self) -> dict[str, Any]:
        """The server still serves: a real search answers with hits."""
        res = self.client.call("piEvents/search", {"query": "sockets", "limit": 5})
        assert res.get("result", {}).get("hits"), res
        return res

    def answer(self, method: str, params: Any = None) -> dict[str, Any]:
        self.requests += 1
        res = self.client.call(method, params)
        if "error" in res:
            assert res["error"]["code"] in ALLOWED, (method, params, res)
        return res


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = Server(tmp_path_factory.mktemp("lsp"))
    yield s
    rc = s.client.close()
    assert rc == 0, b"".join(s.client.stderr).decode(errors="replace")[-2000:]
    assert tree_digest(s.home.agent) == s.digest
    assert not violations(s.log), violations(s.log)
    FIGURES.add("hostile requests", "requests answered", s.requests)


def _errors_since(c: RawLsp, n: int) -> list[dict[str, Any]]:
    return [m for m in c.messages[n:] if "error" in m and "method" not in m]


FRAMES: list[tuple[str, bytes, int | None]] = [
    ("truncated JSON", b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700),
    ("invalid UTF-8", b'{"jsonrpc":"2.0","id":2,"method":"piEvents/search","params":{"query":"\xff\xfe"}}',
     -32700),
    ("NUL bytes", b"\x00\x00\x00", -32700),
    ("an array", b"[1,2,3]", -32600),
    ("a number", b"42", -32600),
    ("a string", b'"hello"', -32600),
    ("null", b"null", -32600),
    ("jsonrpc 1.0", b'{"jsonrpc":"1.0","id":3,"method":"piEvents/status"}', -32600),
    ("no jsonrpc member", b'{"id":4,"method":"piEvents/status"}', -32600),
    ("id is an object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"piEvents/status"}', -32600),
    ("id is true", b'{"jsonrpc":"2.0","id":true,"method":"piEvents/status"}', -32600),
    ("method is a number", b'{"jsonrpc":"2.0","id":5,"method":5}', -32600),
    ("params is a string", b'{"jsonrpc":"2.0","id":6,"method":"piEvents/search","params":"x"}', -32602),
    ("params is a list", b'{"jsonrpc":"2.0","id":7,"method":"piEvents/read","params":[1]}', -32602),
    ("hover with wrong types", b'{"jsonrpc":"2.0","id":8,"method":"textDocument/hover",'
     b'"params":{"textDocument":5,"position":"x"}}', -32602),
    ("symbol query is a number", b'{"jsonrpc":"2.0","id":9,"method":"workspace/symbol",'
     b'"params":{"query":5}}', 0),
    ("unknown method", b'{"jsonrpc":"2.0","id":10,"method":"nope/nothing","params":{}}', -32601),
    ("unknown $/ request", b'{"jsonrpc":"2.0","id":11,"method":"$/nothing","params":{}}', -32601),
    ("unknown notification", b'{"jsonrpc":"2.0","method":"nope/note","params":{}}', None),
    ("response to nothing", b'{"jsonrpc":"2.0","id":999,"result":{}}', None),
    ("error response to nothing", b'{"jsonrpc":"2.0","id":998,"error":{"code":1,"message":"x"}}', None),
    ("deeply nested params", b'{"jsonrpc":"2.0","id":12,"method":"piEvents/search","params":'
     + b'{"filters":' * 5000 + b"{}" + b"}" * 5000 + b"}", -32700),
    ("duplicate members", b'{"jsonrpc":"2.0","id":13,"method":"piEvents/search","params":{"query":1,'
     b'"query":"sockets"}}', 0),
]


def test_malformed_messages_get_errors_and_the_server_keeps_serving(server: Server) -> None:
    c = server.client
    for name, body, code in FRAMES:
        n = len(c.messages)
        c.send_raw(c.frame(body))
        server.ok()
        got = _errors_since(c, n)
        if code == 0:  # answered: a result or an allowed error
            msg_id = json.loads(body)["id"]
            res = c.response(msg_id)
            assert "result" in res or res["error"]["code"] in ALLOWED, (name, res)
        elif code is None:
            assert not [e for e in got if e["error"]["code"] not in ALLOWED], (name, got)
        else:
            assert any(e["error"]["code"] == code for e in got), (name, got)
        FIGURES.add("hostile requests", "malformed messages")
    # a request without params is valid JSON-RPC
    res = c.call("piEvents/status")
    assert "result" in res, res
    server.requests += len(FRAMES) + 1


@pytest.mark.parametrize("header", [
    b"Content-Length: 1000000000000\r\n\r\n",
    b"Content-Length: 9223372036854775808\r\n\r\n",
    b"Content-Length: 1" + b"0" * 40 + b"\r\n\r\n",
    b"Content-Length: -5\r\n\r\n",
    b"Content-Length: 0\r\n\r\n",
    b"Content-Length: abc\r\n\r\n",
    b"X-Nothing: 1\r\n\r\n",
    b"\r\n\r\n\r\n",
    b"Content-Type: application/json\r\nContent-Length: 20\r\n\r\n" + b"x" * 20,
])
def test_bad_framing(server: Server, header: bytes) -> None:
    c = server.client
    n = len(c.messages)
    c.send_raw(header + b'{"jsonrpc":"2.0"}\r\n')
    time.sleep(0.2)
    assert c.proc.poll() is None, "the server survives the frame"
    server.ok()
    for e in _errors_since(c, n):
        assert e["error"]["code"] in ALLOWED
    if b"1000000000000" in header or b"0" * 40 in header or b"9223372036854775808" in header:
        assert any(e["error"]["code"] == -32700 for e in _errors_since(c, n)), "huge length refused"
    FIGURES.add("hostile requests", "bad frames")


def test_wrong_types_in_params(server: Server) -> None:
    bad: list[Any] = [None, True, 0, -1, 2**70, 1.5, "", "x" * 300, [], [1, "a"], {}, {"a": {"b": []}}]
    methods = {
        "piEvents/search": ["query", "limit", "cursor", "prefixLast", "filters", "currentSession"],
        "piEvents/read": ["ref", "sessionId", "entryId", "fragment", "offset", "length", "before",
                          "after", "order"],
        "piEvents/trace": ["ref", "sessionId", "entryId"],
        "piEvents/status": ["anything"],
        "piEvents/reindex": ["anything"],
    }
    filters = ["kind", "role", "tool", "sessionId", "cwd", "since", "until", "errors", "branchState",
               "selectionState", "file"]
    ref = f"pi-event:{server.inside.session_id}/{server.inside.ids[2]}"
    n = 0
    for method, keys in methods.items():
        for key in keys:
            for value in bad:
                base: dict[str, Any] = {"ref": ref} if method != "piEvents/search" else {"query": "x"}
                server.answer(method, {**base, key: value})
                n += 1
    for key in filters:
        for value in bad:
            server.answer("piEvents/search", {"query": "sockets", "filters": {key: value}})
            n += 1
    server.ok()
    FIGURES.add("hostile requests", "wrong-type params", n)


def test_one_megabyte_queries(server: Server) -> None:
    mb = 1 << 20
    for q in ("a" * mb, "sockets " * (mb // 8), '"' * mb, "OR " * (mb // 3), "\u00e9" * mb,
              "NEAR(" * (mb // 5), "*" * mb):
        for method, params in (("piEvents/search", {"query": q}),
                               ("workspace/symbol", {"query": q}),
                               ("piEvents/read", {"ref": q}),
                               ("piEvents/trace", {"sessionId": q, "entryId": q})):
            res = server.answer(method, params)
            if method == "piEvents/search":
                assert res.get("error", {}).get("code") == -32003, res
        FIGURES.add("hostile requests", "1 MB queries", 4)
    server.ok()


def test_thousand_concurrent_requests(server: Server) -> None:
    c = server.client
    ref = f"pi-event:{server.inside.session_id}/{server.inside.ids[2]}"
    kinds = [("piEvents/search", {"query": "bulk sockets", "limit": 50}),
             ("piEvents/status", {}),
             ("piEvents/read", {"ref": ref}),
             ("piEvents/trace", {"ref": ref}),
             ("workspace/symbol", {"query": "bulk"}),
             ("piEvents/search", {"query": "sockets", "prefixLast": True})]
    started = time.monotonic()
    ids = [c.request(*kinds[i % len(kinds)], msg_id=f"conc-{i}") for i in range(CONCURRENT)]
    answers = [c.response(i, timeout=120) for i in ids]
    elapsed = time.monotonic() - started
    errors = [a for a in answers if "error" in a]
    assert not errors, errors[:3]
    server.requests += CONCURRENT
    server.ok()
    FIGURES.add("hostile requests", "concurrent requests", CONCURRENT)
    FIGURES.set("hostile requests", "1,000 concurrent requests s", round(elapsed, 1))


def test_cancellation_storm(server: Server) -> None:
    c = server.client
    n = size(500, 5000)
    ids = []
    for i in range(n):
        msg_id = f"storm-{i}"
        c.request("piEvents/search", {"query": "bulk sockets retries", "limit": 200}, msg_id=msg_id)
        c.notify("$/cancelRequest", {"id": msg_id})
        if i % 10 == 0:
            c.notify("$/cancelRequest", {"id": f"never-{i}"})
            c.notify("$/cancelRequest", {"id": {"weird": i}})
            c.notify("$/cancelRequest", None)
        ids.append(msg_id)
    cancelled = 0
    for msg_id in ids:
        res = c.response(msg_id, timeout=120)
        if "error" in res:
            assert res["error"]["code"] in (-32800,), res
            cancelled += 1
    server.requests += n
    server.ok()
    FIGURES.add("hostile requests", "cancelled requests (storm)", n)
    FIGURES.add("hostile requests", "of which answered -32800", cancelled)


FTS_SYNTAX = st.sampled_from(['"', "*", ":", "^", "-", "+", "(", ")", "OR", "AND", "NOT", "NEAR",
                              "NEAR(", "{", "}", "'", "\\", "\x00", "\ud800", "\u200b", "col:", "*:",
                              "sockets", "bulk", " ", "\t", "\n", "é", "日本", "🙂", "%", "_"])
QUERY = st.one_of(
    st.text(max_size=60),
    st.lists(FTS_SYNTAX, max_size=12).map("".join),
    st.lists(st.one_of(FTS_SYNTAX, st.text(max_size=5)), max_size=10).map(" ".join),
)


def test_hypothesis_query_strings(server: Server) -> None:
    seen = {"n": 0}

    @settings(max_examples=QUERIES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(QUERY, st.booleans())
    def run(query: str, prefix: bool) -> None:
        res = server.answer("piEvents/search", {"query": query, "prefixLast": prefix, "limit": 5})
        if "error" in res:
            assert res["error"]["code"] == -32003, res  # only "too long" is a query error
        sym = server.answer("workspace/symbol", {"query": query})
        assert "result" in sym, sym
        seen["n"] += 1

    run()
    server.ok()
    FIGURES.add("hostile requests", "hypothesis query strings", seen["n"])


def test_server_stays_small(server: Server) -> None:
    """After all of the above the server's memory is bounded (nothing kept per request)."""
    status = Path(f"/proc/{server.client.proc.pid}/status")
    if not status.exists():
        pytest.skip("no /proc on this system: memory is not measured")
    rss_kb = int(status.read_text().split("VmRSS:")[1].split()[0])
    FIGURES.set("hostile requests", "server RSS MB after the storm", rss_kb // 1024)
    assert rss_kb < 1024 * 1024, f"server uses {rss_kb // 1024} MB"
    assert json.loads(json.dumps(server.ok()))
    assert os.getpid() != server.client.proc.pid
