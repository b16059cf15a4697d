"""The private pygls API that server.py overrides or calls, one test each: when a pygls release
changes it, these fail by name instead of the hostile-request tests failing somewhere downstream.
pyproject pins the pygls minor version these were run against."""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import re
import tomllib
from pathlib import Path

import attrs
import pygls.io_
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

from pi_event_search.lsp.protocol import _Answered, plain_dicts
from pi_event_search.lsp.server import PiEventServer

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


class _Wire:
    """The transport pygls writes to: every frame it sends, decoded."""

    def __init__(self) -> None:
        self.raw = b""

    def write(self, data: bytes) -> None:
        self.raw += data

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, object]]:
        frames = re.findall(rb"Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n", self.raw)
        assert frames, self.raw
        bodies = re.split(rb"Content-Length: \d+\r\n(?:[^\r\n]+\r\n)*\r\n", self.raw)[1:]
        assert [len(b) for b in bodies] == [int(n) for n in frames]
        return [json.loads(b) for b in bodies]


def _server() -> tuple[PiEventServer, _Wire]:
    server = PiEventServer(None, [])
    wire = _Wire()
    server.protocol.set_writer(wire)
    return server, wire


def test_pyproject_pins_the_tested_pygls_minor():
    major, minor = (int(x) for x in importlib.metadata.version("pygls").split(".")[:2])
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    pinned = [d for d in project["dependencies"] if d.startswith("pygls")]
    assert pinned == [f"pygls>={major}.{minor},<{major}.{minor + 1}"], pinned
    assert any(d.startswith("attrs") for d in project["dependencies"]), "server.py imports attrs"


def test_converter_hooks_structure_messages_intoplain_dicts():
    """plain_dicts registers a structure hook per JSON-RPC message class, built from the
    class's attrs fields: params stay plain JSON, a missing `params` is None, unknown members
    are dropped."""
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        assert attrs.has(cls), f"pygls {cls.__name__} is no longer an attrs class"
    assert set(attrs.fields_dict(JsonRPCRequestMessage)) == {"id", "method", "params", "jsonrpc"}
    converter = plain_dicts()
    params = {"query": "x", "filters": {"kind": ["tool.result"]}}
    msg = converter.structure({"jsonrpc": "2.0", "id": 1, "method": "piEvents/search",
                               "params": params, "unknown": True}, JsonRPCRequestMessage)
    assert (msg.id, msg.method, msg.params) == (1, "piEvents/search", params)
    assert type(msg.params) is dict
    bare = converter.structure({"jsonrpc": "2.0", "method": "exit"}, JsonRPCNotification)
    assert bare.params is None


def test_structure_message_is_the_readers_object_hook_and_answers_bad_requests():
    source = inspect.getsource(pygls.io_)
    assert "object_hook=protocol.structure_message" in source, \
        "pygls no longer decodes messages through protocol.structure_message"
    assert list(inspect.signature(PiEventServer(None, []).protocol.structure_message).parameters) \
        == ["data"]
    server, wire = _server()
    answered = server.protocol.structure_message({"jsonrpc": "1.0", "id": 7, "method": "x"})
    assert isinstance(answered, _Answered)
    assert wire.messages() == [{"jsonrpc": "2.0", "id": 7,
                                "error": {"code": -32600, "message": "Invalid Request"}}]
    ok = server.protocol.structure_message({"jsonrpc": "2.0", "id": 8, "method": "piEvents/read",
                                            "params": {"ref": "S/E"}})
    assert (ok.id, ok.method, ok.params) == (8, "piEvents/read", {"ref": "S/E"})


def test_handle_message_skips_answered_messages_and_dispatches_the_rest():
    server, wire = _server()
    server.protocol.handle_message(_Answered())
    assert wire.raw == b""
    server.protocol.handle_message({"not": "json-rpc"})  # valid JSON, not a message
    assert wire.messages()[-1] == {"jsonrpc": "2.0", "id": None,
                                   "error": {"code": -32600, "message": "Invalid Request"}}
    request = server.protocol.structure_message(
        {"jsonrpc": "2.0", "id": 9, "method": "piEvents/noSuchMethod", "params": {}})
    server.protocol.handle_message(request)  # pygls' own dispatch: an unknown method
    answers = [m for m in wire.messages() if m.get("id") == 9]
    assert len(answers) == 1 and answers[0]["error"]["code"] == -32601  # type: ignore[index]


def test_send_data_frames_a_plain_dict():
    server, wire = _server()
    server.protocol._send_data({"jsonrpc": "2.0", "id": None,
                                "error": {"code": -32700, "message": "Parse error"}})
    assert wire.raw.startswith(b"Content-Length: ")
    assert wire.messages() == [{"jsonrpc": "2.0", "id": None,
                                "error": {"code": -32700, "message": "Parse error"}}]


def test_report_server_error_gets_undecodable_json_as_a_json_rpc_exception():
    """pygls' reader hands a body that is not JSON to report_server_error with the source
    JsonRpcException; the override answers it with a parse error."""
    assert "error_handler(exc, JsonRpcException)" in inspect.getsource(pygls.io_)
    server, wire = _server()
    server.report_server_error(ValueError("Expecting value"), JsonRpcException)
    assert {"jsonrpc": "2.0", "id": None,
            "error": {"code": -32700, "message": "Parse error"}} in wire.messages()


def test_own_answers_skip_cattrs_and_encode_the_same():
    """PiEventProtocol._serialize_message is pygls' `default=` for json.dumps in _send_data: a
    plain-dict answer must come out exactly as pygls' own cattrs path writes it."""
    server, wire = _server()
    assert "default=self._serialize_message" in inspect.getsource(
        type(server.protocol).__mro__[1]._send_data)
    result = {"hits": [{"ref": "pi-event:s/e", "matches": [[0, 4]], "score": 0.5,
                        "source": {"path": "/p/a.jsonl", "line": 3}, "toolName": None}],
              "nextCursor": None}
    message = JsonRPCResponseMessage(id=7, jsonrpc="2.0", result=result)
    ours = server.protocol._serialize_message(message)
    theirs = server.protocol._converter.unstructure(message)
    assert ours == theirs
    server.protocol._send_data(message)
    assert wire.messages() == [{"id": 7, "jsonrpc": "2.0", "result": result}]


def test_own_answers_are_framed_as_pygls_frames_them_with_byte_lengths():
    """PiEventProtocol._send_data encodes our answers with orjson (UTF-8, not ASCII escapes):
    pygls' frame, Content-Length counted in bytes, the same JSON; what orjson refuses (a lone
    surrogate) goes pygls' way."""
    base = type(_server()[0].protocol).__mro__[1]._send_data
    source = inspect.getsource(base)
    assert "Content-Length: {len(body)}" in source and "self.writer.write(" in source
    assert "Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}" in source
    result = {"hits": [{"snippet": "café — 日本語 ✓", "score": 0.5, "toolName": None}],
              "nextCursor": None}
    server, wire = _server()
    server.protocol._send_data(JsonRPCResponseMessage(id=3, jsonrpc="2.0", result=result))
    assert "charset=utf-8" in wire.raw.decode().lower() and "日本語".encode() in wire.raw
    assert wire.messages() == [{"id": 3, "jsonrpc": "2.0", "result": result}]
    lone = {"snippet": "a \ud800 b"}
    server, wire = _server()
    server.protocol._send_data(JsonRPCResponseMessage(id=4, jsonrpc="2.0", result=lone))
    assert b"\\ud800" in wire.raw and wire.messages() == [{"id": 4, "jsonrpc": "2.0",
                                                           "result": lone}]
