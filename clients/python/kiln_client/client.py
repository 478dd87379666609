# Client: one gRPC channel to kilnd and a Python method per RPC. It owns the
# call conventions (bearer token, deadline, message size limit, TLS) and turns
# every failed call into KilnError, so callers see Python values, not grpc.
"""The kilnd client."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Union

import grpc

from . import compile_request, health as health_check
from .errors import KilnError
from .stubs import compiler_pb2, compiler_pb2_grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
# Artifacts of a large model (the LOOP_IR script, the graph JSON) outgrow
# gRPC's default 4 MiB receive limit by far.
MAX_RECEIVE_BYTES = 512 * 1024 * 1024

_IR_FORMATS = {"text": compiler_pb2.TEXT, "json": compiler_pb2.JSON}

PemSource = Union[str, os.PathLike, bytes, None]

# Round-robin over every address of the target and retries of UNAVAILABLE on another replica:
# the service config the kiln CLI uses too (clients/service_config.json).
SERVICE_CONFIG = (Path(__file__).parent / "service_config.json").read_text()


def channel_target(address: str) -> str:
    """The gRPC target for `address`: one host:port or DNS name as given (every address a name
    resolves to is balanced over), or several IP:PORT addresses separated by commas."""
    if "," not in address:
        return address
    parts = address.split(",")
    ipv6 = parts[0].startswith("[")
    for part in parts:
        host, _, port = part.rpartition(":")
        try:
            if ipv6:
                if not (host.startswith("[") and host.endswith("]")):
                    raise ValueError(part)
                ipaddress.IPv6Address(host[1:-1])
            else:
                ipaddress.IPv4Address(host)
            if not 0 < int(port) < 65536:
                raise ValueError(part)
        except ValueError:
            raise ValueError(f"{part!r} in a list of addresses must be IP:PORT (all IPv4, or all "
                             "[IPv6]:PORT); to balance over a name's addresses, give the one "
                             "name") from None
    return ("ipv6:" if ipv6 else "ipv4:") + address


def _pem(source: PemSource) -> bytes | None:
    if source is None or isinstance(source, bytes):
        return source
    return Path(source).read_bytes()


class Client:
    """A connection to kilnd.

    Use as a context manager (or call close()):

        with Client("127.0.0.1:50051", token="s3cret", deadline=60) as kiln:
            response = kiln.compile("model.onnx", opt_level=2)

    Args:
      address: host:port of kilnd's gRPC listener, a DNS name (calls are balanced round-robin
        over every address it resolves to), or several IP:PORT separated by commas; a call
        refused with UNAVAILABLE (a replica gone or draining) is retried on another.
      token: sent as `authorization: Bearer <token>` on every call (kilnd
        started with --auth-token-file requires it; health stays open).
      tls_ca: PEM root certificate(s) (a path or bytes) that signed kilnd's
        --tls-cert; setting it switches the channel to TLS.
      tls_client_cert, tls_client_key: PEM client certificate and key (paths
        or bytes) for a kilnd started with --tls-client-ca (mutual TLS).
      deadline: seconds each call may take (a trace: the whole stream);
        None leaves it to the server's --default-deadline.

    Every RPC method raises KilnError when the call fails, and ValueError /
    TypeError / OSError for a model it cannot read before sending anything.
    """

    def __init__(self, address: str = DEFAULT_ADDRESS, *, token: str | None = None,
                 tls_ca: PemSource = None, tls_client_cert: PemSource = None,
                 tls_client_key: PemSource = None, deadline: float | None = None):
        options = [("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
                   ("grpc.service_config", SERVICE_CONFIG),
                   ("grpc.enable_retries", 1)]
        target = channel_target(address)
        if tls_ca is not None or tls_client_cert is not None:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_pem(tls_ca),
                private_key=_pem(tls_client_key),
                certificate_chain=_pem(tls_client_cert))
            self._channel = grpc.secure_channel(target, credentials, options=options)
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        self._stub = compiler_pb2_grpc.CompilerStub(self._channel)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self.address = address
        self.deadline = deadline

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _unary(self, method, request):
        try:
            return method(request, timeout=self.deadline, metadata=self._metadata)
        except grpc.RpcError as error:
            raise KilnError.from_rpc_error(error) from error

    def compile(self, model, *, name: str = "", opt_level: int | None = None,
                pipeline: str = "", disabled_passes=(), required_passes=(),
                config=None, artifacts=(), **more_options) -> compiler_pb2.CompileResponse:
        """Compiles a model and returns the kiln.v1.CompileResponse message.

        model: a path (.onnx is sent as ONNX bytes, .kir/.txt as graph IR
          text), serialized ONNX bytes, or an onnx.ModelProto.
        opt_level: 0..3 (None: the server's default, 3); ignored by the server
          when `pipeline` is set. config: PassContext options (values are
          sent as strings; booleans as "true"/"false").
        artifacts: ArtifactKind numbers or names ("GRAPH_IR_TEXT", "loop_ir");
          empty means all of them.
        more_options: target (a triple or a Target), input_shapes
          ({input: dims}), sequence_input_shapes ({input: [dims, ...]}, a sequence
          input's element shapes), empty_optional_inputs ([input, ...]), fill_spans,
          enable_si_builder.
        """
        request = compile_request.build(
            model, name=name, opt_level=opt_level, pipeline=pipeline,
            disabled_passes=disabled_passes, required_passes=required_passes,
            config=config, artifacts=artifacts, **more_options)
        return self._unary(self._stub.Compile, request)

    def trace(self, model, *, ir_before: bool = False, ir_after: bool = True,
              only_changed: bool = False, pass_filter=(), stages=(),
              format: str = "text", **compile_options) -> Iterator[compiler_pb2.PassEvent]:
        """Compiles a model and yields one kiln.v1.PassEvent per pass as it
        finishes; the last event carries `summary` (the CompileResponse
        without artifacts).

        pass_filter: only passes whose name contains one of these strings.
        stages: "graph" and/or "loop" (empty: both). format: "text" or "json"
        for the attached IR. compile_options: as for compile().

        The call starts at once; a failure (also one mid-stream) raises
        KilnError from the iteration. Closing the generator early cancels the
        call.
        """
        if format not in _IR_FORMATS:
            raise ValueError(f"format must be 'text' or 'json', not {format!r}")
        request = compiler_pb2.TraceRequest(
            compile=compile_request.build(model, **compile_options),
            ir_before=ir_before, ir_after=ir_after, only_changed=only_changed,
            pass_filter=list(pass_filter), stages=list(stages),
            format=_IR_FORMATS[format])
        try:
            call = self._stub.TracePass(request, timeout=self.deadline,
                                        metadata=self._metadata)
        except grpc.RpcError as error:
            raise KilnError.from_rpc_error(error) from error
        return self._events(call)

    @staticmethod
    def _events(call) -> Iterator[compiler_pb2.PassEvent]:
        try:
            for event in call:
                yield event
        except grpc.RpcError as error:
            raise KilnError.from_rpc_error(error) from error
        finally:
            # Does nothing after the stream ended; stops the server's work when
            # the caller stopped reading early.
            call.cancel()

    def schedule_record(self, model, selector: str, *, verify: bool = False,
                        **compile_options) -> compiler_pb2.ScheduleRecord:
        """The kiln.v1.ScheduleRecord of one kernel: its loop IR after every
        schedule primitive.

        selector: a call index in the optimized main ("3"), a kernel name
          ("fused_nn_conv2d_add_nn_relu") or an ONNX layer name ("/conv2/Conv");
          an unknown one raises KilnError NOT_FOUND listing the kernels.
        verify: run every step in the interpreter and compare with the first
          (sets each step's `verified`).
        """
        request = compiler_pb2.ScheduleRecordRequest(
            compile=compile_request.build(model, **compile_options),
            selector=selector, verify=verify)
        return self._unary(self._stub.GetScheduleRecord, request)

    def list_passes(self) -> compiler_pb2.ListPassesResponse:
        """The whole registry answer: passes and the PassContext config keys."""
        return self._unary(self._stub.ListPasses, compiler_pb2.ListPassesRequest())

    def passes(self) -> list[compiler_pb2.PassDescription]:
        """Every registered pass (kiln.v1.PassDescription), in registry order."""
        return list(self.list_passes().passes)

    def health(self, service: str = "") -> str:
        """grpc.health.v1 status: "SERVING", "NOT_SERVING" (also "UNKNOWN",
        "SERVICE_UNKNOWN"). service: "" (the server) or "kiln.v1.Compiler"."""
        try:
            return health_check.check(self._channel, service, timeout=self.deadline,
                                      metadata=self._metadata)
        except grpc.RpcError as error:
            raise KilnError.from_rpc_error(error) from error
