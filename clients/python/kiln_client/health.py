# The standard gRPC health check (grpc.health.v1.Health/Check) without the
# grpcio-health-checking package, which Debian does not ship: the request and
# response are tiny enough to encode by hand in the protobuf wire format.
"""grpc.health.v1 Check over a generic unary call."""

from __future__ import annotations

import grpc

CHECK_METHOD = "/grpc.health.v1.Health/Check"

# HealthCheckResponse.ServingStatus, by number.
_SERVING_STATUS = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = 0
    shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint in HealthCheckResponse")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def encode_request(service: str) -> bytes:
    """HealthCheckRequest{service = 1}; the empty string encodes to nothing."""
    if not service:
        return b""
    name = service.encode("utf-8")
    return b"\x0a" + _varint(len(name)) + name


def decode_status(data: bytes) -> str:
    """The ServingStatus name of a serialized HealthCheckResponse."""
    status = 0  # proto3: an absent field is its zero value, UNKNOWN
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        field, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, pos = _read_varint(data, pos)
            if field == 1:
                status = value
        elif wire_type == 2:
            length, pos = _read_varint(data, pos)
            pos += length
        elif wire_type == 1:
            pos += 8
        elif wire_type == 5:
            pos += 4
        else:
            raise ValueError(f"unexpected wire type {wire_type} in HealthCheckResponse")
    return _SERVING_STATUS.get(status, f"STATUS_{status}")


def check(channel: grpc.Channel, service: str, *, timeout, metadata) -> str:
    """Calls Health/Check; raises grpc.RpcError like any other call."""
    # No serializers: grpc passes the bytes through unchanged.
    method = channel.unary_unary(CHECK_METHOD)
    response = method(encode_request(service), timeout=timeout, metadata=metadata)
    return decode_status(response)
