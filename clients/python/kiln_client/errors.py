# KilnError: the one exception the client raises for a failed RPC, carrying
# the gRPC status code's name ("NOT_FOUND", ...) and the server's message, so
# callers never need to import grpc to tell failures apart.
"""The client's error type."""

from __future__ import annotations

import grpc


class KilnError(Exception):
    """An RPC that kilnd (or the channel) answered with a non-OK status.

    Attributes:
      code: the grpc.StatusCode name, e.g. "INVALID_ARGUMENT", "NOT_FOUND".
      message: the server's message (for NOT_FOUND on a schedule selector it
        lists the kernels; for a bad model it names the node/op/layer).
    """

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> "KilnError":
        # Every RpcError raised by a call is also a grpc.Call with code() and
        # details(); guard anyway so a transport oddity still maps to UNKNOWN.
        code = error.code() if callable(getattr(error, "code", None)) else None
        details = error.details() if callable(getattr(error, "details", None)) else None
        name = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
        return cls(name, details or str(error))
