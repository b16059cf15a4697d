"""The JSON-RPC layer under the language server: custom methods' params and results as plain
dicts, and an answer for every request, even one that cannot be decoded.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import attrs
import orjson
from lsprotocol import converters
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidRequest
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCProtocol,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)


def plain_dicts() -> Any:
    """Custom methods get plain dicts (pygls would turn them into namedtuples). `params` is
    optional in JSON-RPC 2.0 and unknown members are ignored."""
    c = converters.get_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        c.register_structure_hook(cls, lambda obj, cls: cls(**{
            name: obj.get(name) for name in attrs.fields_dict(cls)}))
    return c


class _Answered:
    """A message that was answered with an error while it was being decoded."""


def _valid_id(msg_id: Any) -> bool:
    return isinstance(msg_id, int | str) and not isinstance(msg_id, bool)


class PiEventProtocol(LanguageServerProtocol):
    """Every request gets an answer, even one that cannot be decoded (JSON-RPC 2.0 §5.1)."""

    def _serialize_message(self, data: Any) -> Any:
        """Answers of our own methods are plain JSON dicts: json encodes them in C, where cattrs
        would first walk every hit in Python (as long as the search itself, for a rare word)."""
        if type(data) is JsonRPCResponseMessage and isinstance(data.result, dict):
            return {"id": data.id, "jsonrpc": data.jsonrpc, "result": data.result}
        return super()._serialize_message(data)

    def _send_data(self, data: Any) -> None:
        """Answers of our own methods are encoded by orjson (pygls' json.dumps took a third of
        the event loop's time on a search's answer); anything orjson refuses (a lone surrogate,
        a huge integer) and every other message go pygls' way. The frame is pygls' own, with
        Content-Length in bytes (orjson writes UTF-8, not ASCII escapes)."""
        if type(data) is not JsonRPCResponseMessage or not isinstance(data.result, dict) \
                or self.writer is None:
            super()._send_data(data)
            return
        try:
            body = orjson.dumps(self._serialize_message(data))
        except TypeError:
            super()._send_data(data)
            return
        header = (f"Content-Length: {len(body)}\r\n"
                  f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n")
        try:
            written = self.writer.write(header.encode("ascii") + body)
            if inspect.isawaitable(written):
                asyncio.ensure_future(written)
        except BrokenPipeError:
            raise
        except Exception as error:  # as pygls: reported, the server goes on
            self._server._report_server_error(error, JsonRpcInternalError)

    def _error(self, msg_id: Any, exc: JsonRpcException) -> None:
        error = exc.to_response_error()
        self._send_data({"jsonrpc": "2.0", "id": msg_id if _valid_id(msg_id) else None,
                         "error": {"code": error.code, "message": error.message}})

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" in data and "method" in data and "id" in data:
            if data["jsonrpc"] != JsonRPCProtocol.VERSION or not isinstance(data["method"], str) \
                    or not _valid_id(data["id"]):
                self._error(data["id"], JsonRpcInvalidRequest())
                return _Answered()
            try:
                return super().structure_message(data)
            except JsonRpcException as exc:
                self._error(data["id"], exc)
                return _Answered()
        return super().structure_message(data)

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Answered):
            return
        if not hasattr(message, "jsonrpc"):  # valid JSON, but not a JSON-RPC message
            self._error(message.get("id") if isinstance(message, dict) else None,
                        JsonRpcInvalidRequest())
            return
        super().handle_message(message)
