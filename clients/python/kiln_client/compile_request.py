# Turns what a Python caller has (a model path, bytes or an onnx.ModelProto,
# and keyword options) into the CompileRequest message every RPC embeds, so
# compile, trace and schedule_record accept exactly the same options.
"""Building kiln.v1.CompileRequest from Python values."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Union

from .stubs import compiler_pb2

# A model: a path (.onnx, or .kir/.txt graph IR text), serialized ONNX bytes,
# or an in-memory onnx.ModelProto.
Model = Union[str, os.PathLike, bytes, bytearray, memoryview, object]

ONNX_SUFFIXES = (".onnx",)
GRAPH_TEXT_SUFFIXES = (".kir", ".txt")


def set_model(request: compiler_pb2.CompileRequest, model: Model) -> None:
    """Fills the request's `model` oneof from a path, bytes or a ModelProto."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        request.onnx = bytes(model)
        return
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        suffix = path.suffix.lower()
        if suffix in ONNX_SUFFIXES:
            request.onnx = path.read_bytes()
        elif suffix in GRAPH_TEXT_SUFFIXES:
            request.graph_ir_text = path.read_text(encoding="utf-8")
        else:
            known = ", ".join(ONNX_SUFFIXES + GRAPH_TEXT_SUFFIXES)
            raise ValueError(
                f"{path}: cannot tell the model format from the suffix "
                f"'{path.suffix}' (expected one of {known})")
        return
    # onnx.ModelProto, without importing onnx: anything that serializes and
    # has a graph is taken as one.
    if hasattr(model, "SerializeToString") and hasattr(model, "graph"):
        request.onnx = model.SerializeToString()
        return
    raise TypeError(
        "model must be a path (str or os.PathLike), ONNX bytes or an "
        f"onnx.ModelProto, not {type(model).__name__}")


def artifact_kind(kind: Union[int, str]) -> int:
    """An ArtifactKind number from a number or a name ("loop_ir", "LOOP_IR")."""
    if isinstance(kind, int):
        return kind
    try:
        return compiler_pb2.ArtifactKind.Value(kind.upper())
    except ValueError:
        valid = ", ".join(name for name in compiler_pb2.ArtifactKind.keys()
                          if name != "ARTIFACT_KIND_UNSPECIFIED")
        raise ValueError(f"unknown artifact kind '{kind}' (valid: {valid})") from None


def _config_value(value: object) -> str:
    # PassContext config values are strings on the wire; spell booleans the
    # way the server's config parser reads them.
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def build(
    model: Model,
    *,
    name: str = "",
    opt_level: int | None = None,
    pipeline: str = "",
    disabled_passes: Iterable[str] = (),
    required_passes: Iterable[str] = (),
    config: Mapping[str, object] | None = None,
    artifacts: Iterable[Union[int, str]] = (),
    target: Union[str, compiler_pb2.Target, None] = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    sequence_input_shapes: Mapping[str, Sequence[Sequence[int]]] | None = None,
    empty_optional_inputs: Iterable[str] = (),
    fill_spans: bool | None = None,
    enable_si_builder: bool | None = None,
) -> compiler_pb2.CompileRequest:
    """A CompileRequest; unset options keep the server's defaults."""
    request = compiler_pb2.CompileRequest(name=name)
    set_model(request, model)
    # Touch pass_options only for options that are set: an empty but present
    # submessage serializes differently from an absent one, and the request's
    # bytes should not depend on how many defaults the caller spelled out.
    options = compiler_pb2.PassOptions(
        pipeline=pipeline,
        disabled_passes=list(disabled_passes),
        required_passes=list(required_passes),
        config={key: _config_value(value) for key, value in (config or {}).items()})
    if opt_level is not None:
        options.opt_level = opt_level
    if fill_spans is not None:
        options.fill_spans = fill_spans
    if enable_si_builder is not None:
        options.enable_si_builder = enable_si_builder
    if options.ByteSize():
        request.pass_options.CopyFrom(options)
    if isinstance(target, str):
        if target:
            request.target.triple = target
    elif target is not None:
        request.target.CopyFrom(target)
    for input_name, dims in (input_shapes or {}).items():
        request.input_shapes.add(name=input_name, dims=list(dims))
    # A sequence input's element shapes, in order; an optional input left empty.
    for input_name, elements in (sequence_input_shapes or {}).items():
        sequence = request.sequence_input_shapes.add(name=input_name)
        for dims in elements:
            sequence.elements.add(dims=list(dims))
    request.empty_optional_inputs.extend(empty_optional_inputs)
    request.artifacts.extend(artifact_kind(kind) for kind in artifacts)
    return request
