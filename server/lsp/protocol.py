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

from codeburn.server.lsp.initialize import answerable

log = logging.getLogger(__name__)


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _params_hint(method: str) -> str:
    if method == types.WORKSPACE_EXECUTE_COMMAND:
        return ' must be {"command": "codeburn.server.…", "arguments": [...]}'
    if method == types.INITIALIZE:
        return (
            ' must be {"capabilities": {...}, ...} as the LSP specification defines '
            "(capabilities.general.positionEncodings: a list of strings)"
        )
    return " must be an object of the type the LSP specification defines"


class CheckedProtocol(LanguageServerProtocol):
    """pygls' protocol, answering what it would otherwise drop without a reply."""

    def cancel_pending(self) -> None:
        """Cancel the requests in flight but the one being handled (what pygls' `shutdown`
        does, over a copy: cancelling a request of the editor's that is still being handled
        removes it from the dict pygls iterates, which then raised "dictionary changed size
        during iteration" and answered the shutdown with an error)."""
        current = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current and not future.done():
                future.cancel()

    def structure_message(self, data: dict[str, Any]) -> Any:
        if "jsonrpc" in data and (problem := _not_a_message(data)) is not None:
            msg_id = _reply_id(data.get("id"))
            log.warning("refused a message that is not a JSON-RPC request or response: %s", problem)
            self._send_data(
                _error(msg_id, JsonRpcInvalidRequest.CODE, f"Invalid Request: {problem}")
            )
            return _Rejected()
        method = data.get("method")
        if "jsonrpc" not in data or not isinstance(method, str) or "error" in data:
            return super().structure_message(data)
        cls = self.get_message_type(method)
        if cls is None:
            return super().structure_message(data)
        try:
            if method == types.INITIALIZE and not answerable(data.get("params")):
                raise TypeError("initialize params of the wrong shape")  # cattrs lets some pass
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
        if isinstance(exc, RecursionError):
            why = "the message body is nested too deeply to parse"
        else:
            why = f"the message body is not UTF-8 JSON ({exc})"
        self._send_data(_error(None, JsonRpcParseError.CODE, f"{JsonRpcParseError.MESSAGE}: {why}"))

    def _send_response(
        self, msg_id: Any, result: Any | None = None, error: types.ResponseError | None = None
    ) -> None:
        """pygls' answer, except that an internal error never carries a traceback."""
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            message = f"{error.message}: an internal error; the CodeBurn log has the details"
            error = types.ResponseError(code=error.code, message=message)
        super()._send_response(msg_id, result, error)


class _Rejected:
    """A message already answered (or dropped) while it was structured."""


def _not_a_message(data: dict[str, Any]) -> str | None:
    """Why a `"jsonrpc"` object is neither a request, a notification nor a response; or None."""
    if "id" in data and data["id"] is not None and _reply_id(data["id"]) is None:
        return '"id" must be a number or a string'
    if "method" in data:
        if not isinstance(data["method"], str):
            return '"method" must be a string (the name of an LSP request or notification)'
        return None
    if "id" in data and "result" not in data and "error" not in data:
        return 'a message with an "id" needs a "method" (a request) or a "result" (a response)'
    return None


def _reply_id(msg_id: Any) -> int | str | None:
    return msg_id if isinstance(msg_id, int | str) and not isinstance(msg_id, bool) else None


class QuietParseErrors(logging.Filter):
    """pygls logs a traceback for a body that is not JSON; `reject_unparsable` says it in a line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        unparsable = isinstance(exc, ValueError | RecursionError)
        return not (record.msg == "Unable to handle message" and unparsable)
