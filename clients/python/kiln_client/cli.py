# The command line of `python3 -m kiln_client`: one subcommand per RPC, human
# readable lines by default and one JSON object per line with --json.
# Exit codes: 0 ok, 1 the server (or the channel) failed the call, 2 usage.
"""python3 -m kiln_client {trace,compile,schedule,passes,health} ..."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

from google.protobuf import json_format

from .client import DEFAULT_ADDRESS, Client
from .errors import KilnError

EXIT_OK, EXIT_SERVER_ERROR, EXIT_USAGE = 0, 1, 2
PROG = "kiln_client"


class UsageError(Exception):
    """A command line or local input problem (exit 2)."""


def _to_json(message) -> str:
    # The proto3 JSON mapping (int64 as strings), with zero values spelled out
    # so that index 0 and changed=false are visible.
    as_dict = json_format.MessageToDict(message, preserving_proto_field_name=True,
                                        including_default_value_fields=True)
    return json.dumps(as_dict, sort_keys=True)


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got '{text}'")
    return key, value


def _input_shape(text: str) -> tuple[str, list[int]]:
    name, dims = _key_value(text)
    try:
        return name, [int(dim) for dim in dims.split(",") if dim]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected NAME=D0,D1,... with integer dims, got '{text}'") from None


def _parser() -> argparse.ArgumentParser:
    connection = argparse.ArgumentParser(add_help=False)
    group = connection.add_argument_group("connection")
    group.add_argument("--server", default=os.environ.get("KILN_SERVER", DEFAULT_ADDRESS),
                       help="kilnd host:port, a DNS name, or IP:PORT,IP:PORT,... (calls balanced "
                            "round-robin; default: $KILN_SERVER or %(default)s)")
    group.add_argument("--token", default=os.environ.get("KILN_TOKEN"),
                       help="bearer token (default: $KILN_TOKEN)")
    group.add_argument("--tls-ca", metavar="PEM", help="CA certificate; enables TLS")
    group.add_argument("--tls-cert", metavar="PEM", help="client certificate (mutual TLS)")
    group.add_argument("--tls-key", metavar="PEM", help="client key (mutual TLS)")
    group.add_argument("--deadline", type=float, metavar="SECONDS",
                       help="deadline of the call (default: the server's)")

    compile_options = argparse.ArgumentParser(add_help=False)
    group = compile_options.add_argument_group("compile options")
    group.add_argument("model", help="a .onnx model or .kir/.txt graph IR text")
    group.add_argument("--name", default="", help="a name for logs and artifacts")
    group.add_argument("-O", "--opt-level", type=int, choices=range(4), metavar="{0..3}")
    group.add_argument("--pipeline", default="", help='e.g. "FoldConstant,FuseOps"')
    group.add_argument("--disable", action="append", default=[], metavar="PASS")
    group.add_argument("--require", action="append", default=[], metavar="PASS")
    group.add_argument("--config", action="append", default=[], type=_key_value,
                       metavar="KEY=VALUE", help="a PassContext config option")
    group.add_argument("--input-shape", action="append", default=[], type=_input_shape,
                       metavar="NAME=D0,D1,...", help="fix a symbolic input shape")
    group.add_argument("--target", default="", metavar="TRIPLE")

    parser = argparse.ArgumentParser(prog=PROG,
                                     description="Client of kilnd, the Kiln compile service.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    trace = commands.add_parser("trace", parents=[connection, compile_options],
                                help="compile and print one line per pass as it runs")
    trace.add_argument("--json", action="store_true", help="one JSON PassEvent per line")
    trace.add_argument("--ir-before", action="store_true", help="print each pass's input IR")
    trace.add_argument("--ir-after", action="store_true", help="print each pass's output IR")
    trace.add_argument("--only-changed", action="store_true",
                       help="IR only for passes that changed the module")
    trace.add_argument("--pass-filter", action="append", default=[], metavar="TEXT",
                       help="only passes whose name contains TEXT")
    trace.add_argument("--stage", action="append", default=[], choices=["graph", "loop", "llvm"])
    trace.add_argument("--format", default="text", choices=["text", "json"],
                       help="IR format with --ir-before/--ir-after")

    compile_ = commands.add_parser("compile", parents=[connection, compile_options],
                                   help="compile and write the artifacts")
    compile_.add_argument("--out", metavar="DIR", help="write the artifacts into DIR")
    compile_.add_argument("--artifact", action="append", default=[], metavar="KIND",
                          help="graph_ir_text, graph_ir_json, loop_ir, metadata_json "
                               "(default: all)")

    schedule = commands.add_parser("schedule", parents=[connection, compile_options],
                                   help="the loop IR of one kernel after every schedule step")
    schedule.add_argument("selector", help="call index, kernel name or ONNX layer name")
    schedule.add_argument("--verify", action="store_true",
                          help="check every step against the first in the interpreter")
    schedule.add_argument("--ir", action="store_true",
                          help="print every step's loop IR (default: the last one)")
    schedule.add_argument("--json", action="store_true")

    passes = commands.add_parser("passes", parents=[connection], help="list the registered passes")
    passes.add_argument("--json", action="store_true")

    health = commands.add_parser("health", parents=[connection],
                                 help="grpc.health.v1 status (exit 1 unless SERVING)")
    health.add_argument("--service", default="", help='"" (default) or kiln.v1.Compiler')
    return parser


def _compile_options(args) -> dict:
    return dict(name=args.name, opt_level=args.opt_level, pipeline=args.pipeline,
                disabled_passes=args.disable, required_passes=args.require,
                config=dict(args.config), input_shapes=dict(args.input_shape),
                target=args.target)


def _summary_lines(summary) -> list[str]:
    timings = summary.pass_timings
    changed = sum(1 for timing in timings if timing.changed)
    # Nested passes' time is inside their parent's: add up the outermost only.
    top = min((timing.depth for timing in timings), default=0)
    total_ms = sum(timing.duration_ms for timing in timings if timing.depth == top)
    lines = [f"compile_id  {summary.compile_id}",
             f"kiln        {summary.kiln_version}",
             f"passes      {len(timings)} run, {changed} changed, {total_ms:.3f} ms"]
    for label, tensors in (("input", summary.signature.inputs),
                           ("output", summary.signature.outputs)):
        for tensor in tensors:
            dims = ",".join(str(dim) for dim in tensor.shape)
            lines.append(f"{label:<11} {tensor.name} {tensor.dtype}[{dims}]")
    for diagnostic in summary.diagnostics:
        about = f" [{', '.join(diagnostic.spans)}]" if diagnostic.spans else ""
        lines.append(f"{diagnostic.severity}: {diagnostic.pass_name}: "
                     f"{diagnostic.message}{about}")
    return lines


def _event_line(event) -> str:
    name = "  " * event.depth + event.pass_name
    changed = "changed" if event.changed else "-"
    return (f"{event.index:4d}  {event.stage:<5}  {name:<40}  {changed:<7}  "
            f"{event.duration_ms:10.3f} ms")


def _print_ir(title: str, ir: str) -> None:
    print(f"---- {title}")
    print(ir.rstrip("\n"))


def _trace(client: Client, args) -> int:
    events = client.trace(args.model, ir_before=args.ir_before, ir_after=args.ir_after,
                          only_changed=args.only_changed, pass_filter=args.pass_filter,
                          stages=args.stage, format=args.format, **_compile_options(args))
    for event in events:
        if args.json:
            print(_to_json(event), flush=True)
            continue
        if event.pass_name:
            print(_event_line(event), flush=True)
            if event.ir_before:
                _print_ir(f"IR before {event.pass_name}", event.ir_before)
            if event.ir_after:
                _print_ir(f"IR after {event.pass_name}", event.ir_after)
        if event.HasField("summary"):
            print("\n".join(_summary_lines(event.summary)), flush=True)
    return EXIT_OK


def _compile(client: Client, args) -> int:
    response = client.compile(args.model, artifacts=args.artifact, **_compile_options(args))
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    status = EXIT_OK
    for artifact in response.artifacts:
        digest = hashlib.sha256(artifact.content).hexdigest()
        note = ""
        if digest != artifact.sha256:
            note = f"  SHA-256 MISMATCH (server said {artifact.sha256})"
            status = EXIT_SERVER_ERROR
        if out is not None:
            # Only the base name: a server must not be able to write elsewhere.
            (out / Path(artifact.name).name).write_bytes(artifact.content)
        print(f"{artifact.name:<28} {len(artifact.content):>10}  {digest}{note}")
    print("\n".join(_summary_lines(response)))
    return status


def _schedule(client: Client, args) -> int:
    record = client.schedule_record(args.model, args.selector, verify=args.verify,
                                    **_compile_options(args))
    if args.json:
        print(_to_json(record))
        return EXIT_OK
    print(f"kernel      {record.kernel}")
    print(f"spans       {', '.join(record.spans)}")
    print(f"compile_id  {record.compile_id}")
    status = EXIT_OK
    for position, step in enumerate(record.steps):
        verified = ""
        if step.HasField("verified"):
            verified = "  verified" if step.verified else "  MISMATCH"
            if not step.verified:
                status = EXIT_SERVER_ERROR
        print(f"step {step.step}: {step.primitive}({', '.join(step.arguments)}){verified}")
        if args.ir or position == len(record.steps) - 1:
            print(step.loop_ir.rstrip("\n"))
    return status


def _passes(client: Client, args) -> int:
    response = client.list_passes()
    if args.json:
        print(_to_json(response))
        return EXIT_OK
    for description in response.passes:
        print(f"{description.name:<32} {description.stage:<5} O{description.opt_level}  "
              f"{description.summary}")
    return EXIT_OK


def _health(client: Client, args) -> int:
    status = client.health(args.service)
    print(status)
    return EXIT_OK if status == "SERVING" else EXIT_SERVER_ERROR


_COMMANDS = {"trace": _trace, "compile": _compile, "schedule": _schedule,
             "passes": _passes, "health": _health}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)  # exits 2 on a usage error
    try:
        with Client(args.server, token=args.token, tls_ca=args.tls_ca,
                    tls_client_cert=args.tls_cert, tls_client_key=args.tls_key,
                    deadline=args.deadline) as client:
            return _COMMANDS[args.command](client, args)
    except KilnError as error:
        print(f"{PROG}: {error.code}: {error.message}", file=sys.stderr)
        return EXIT_SERVER_ERROR
    except BrokenPipeError:
        # `... | head`: the reader left, which is not an error. Point stdout
        # at /dev/null so the interpreter's final flush stays quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except (OSError, ValueError, TypeError) as error:
        # The model (or a certificate) could not be read: nothing was sent.
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
