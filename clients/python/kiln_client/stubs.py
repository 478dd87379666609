# The generated kiln.v1 modules, imported in one place so a missing build step
# fails with the fix in the message instead of a bare ModuleNotFoundError.
"""Access to the generated kiln.v1 protobuf and gRPC modules."""

try:
    from kiln.v1 import compiler_pb2, compiler_pb2_grpc
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "kiln_client needs the generated modules kiln.v1.compiler_pb2 and "
        "kiln.v1.compiler_pb2_grpc: build the CMake target kiln_client_python "
        "(it builds kiln_proto_python) and set PYTHONPATH=<build>/python"
    ) from error

__all__ = ["compiler_pb2", "compiler_pb2_grpc"]
