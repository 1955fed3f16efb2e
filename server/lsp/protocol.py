"""JSON-RPC answers for malformed messages that pygls 2.1 would drop without a reply.

Requests whose params do not fit their LSP type (e.g. `workspace/executeCommand` with an array),
bodies that are not JSON, batches and objects without `"jsonrpc"` get the error JSON-RPC 2.0 names
(`id` null when it cannot be known); notifications that do not fit are logged and dropped.
"""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger(__name__)


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _params_hint(method: str) -> str:
    if method == types.WORKSPACE_EXECUTE_COMMAND:
        return ' must be {"command": "codeburn.server.…", "arguments": [...]}'
    return " must be an object of the type the LSP specification defines"


class CheckedProtocol(LanguageServerProtocol):
    """pygls' protocol, answering what it would otherwise drop without a reply."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if "jsonrpc" not in data or not isinstance(method, str) or "error" in data:
            return super().structure_message(data)
        cls = self.get_message_type(method)
        if cls is None:
            return super().structure_message(data)
        try:
            return self._converter.structure(data, cls)
        except Exception:
            if "id" not in data:
                log.warning("ignored the notification %s: its params do not fit", method)
                return _Rejected()
            msg_id = _reply_id(data["id"])
            log.warning("refused the request %s: its params do not fit", method)
            message = f"{JsonRpcInvalidParams.MESSAGE}: {method} params{_params_hint(method)}"
            self._send_data(_error(msg_id, JsonRpcInvalidParams.CODE, message))
            return _Rejected()

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Rejected):
            return
        if getattr(message, "jsonrpc", None) != "2.0":  # a batch, a scalar, no "jsonrpc": "2.0"
            msg_id = (
                message.get("id") if isinstance(message, dict) else getattr(message, "id", None)
            )
            log.warning("refused a message that is not one JSON-RPC 2.0 object")
            text = "Invalid Request: one JSON-RPC 2.0 object per message (LSP uses no batches)"
            self._send_data(_error(_reply_id(msg_id), JsonRpcInvalidRequest.CODE, text))
            return
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, types.EXIT) and hasattr(message, "id"):
            text = f"Invalid Request: {method} after shutdown (only exit is accepted)"
            self._send_data(_error(_reply_id(message.id), JsonRpcInvalidRequest.CODE, text))
            return
        super().handle_message(message)

    def reject_unparsable(self, exc: Exception) -> None:
        """A body that is not JSON (UTF-8): the JSON-RPC parse error, with a null id."""
        log.warning("refused a message that is not JSON: %s", exc)
        text = f"{JsonRpcParseError.MESSAGE}: the message body is not UTF-8 JSON ({exc})"
        self._send_data(_error(None, JsonRpcParseError.CODE, text))


class _Rejected:
    """A message already answered (or dropped) while it was structured."""


def _reply_id(msg_id: Any) -> int | str | None:
    return msg_id if isinstance(msg_id, int | str) and not isinstance(msg_id, bool) else None


class QuietParseErrors(logging.Filter):
    """pygls logs a traceback for a body that is not JSON; `reject_unparsable` says it in a line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (record.msg == "Unable to handle message" and isinstance(exc, ValueError))
