# kiln_client: the Python client of kilnd, Kiln's compile service. Client has
# one method per RPC (compile, trace, schedule_record, passes) plus health;
# failures raise KilnError. The generated messages are re-exported as pb.
"""Python client of kilnd (kiln.v1.Compiler)."""

from .client import DEFAULT_ADDRESS, MAX_RECEIVE_BYTES, Client
from .errors import KilnError
from .stubs import compiler_pb2 as pb

__all__ = ["Client", "KilnError", "pb", "DEFAULT_ADDRESS", "MAX_RECEIVE_BYTES"]
