#!/usr/bin/python3
# Integration test of the Python client (clients/python/kiln_client) against a
# real kilnd on loopback: every RPC, health, bearer-token auth, deadlines and
# the `python3 -m kiln_client` command line, as a user of the package sees them.
#
# Environment: KILN_KILND (default /work/main/build/service/kilnd) and
# KILN_PYTHONPATH (default <kilnd's build dir>/python, which holds kiln.v1 and
# kiln_client once the build ran kiln_client_python).
"""python3 tests/integration/python_client_test.py"""

import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

KILND = Path(os.environ.get("KILN_KILND", "/work/main/build/service/kilnd"))
SOURCE_ROOT = Path(__file__).resolve().parents[2]
PYTHON_PATH = [os.environ.get("KILN_PYTHONPATH", str(KILND.parent.parent / "python")),
               # The package sources, for a build dir where kiln_client_python
               # has not run yet; the generated kiln.v1 still comes from above.
               str(SOURCE_ROOT / "clients" / "python")]
sys.path[:0] = PYTHON_PATH

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from kiln_client import Client, KilnError, pb  # noqa: E402

STARTUP_SECONDS = 30
SHUTDOWN_SECONDS = 30
READY_LINE = re.compile(r"^kilnd: grpc=(\S+) metrics=(\S+)$", re.MULTILINE)


def conv_relu_add_model() -> onnx.ModelProto:
    """X[1,3,8,8] -> Conv(W[4,3,3,3], B[4], pad 1) -> Relu -> Add(C[1,4,1,1]) -> Y."""
    def initializer(name, dims, scale):
        count = 1
        for dim in dims:
            count *= dim
        values = [scale * ((i % 7) - 3) for i in range(count)]
        return helper.make_tensor(name, TensorProto.FLOAT, dims, values)

    graph = helper.make_graph(
        [helper.make_node("Conv", ["X", "W", "B"], ["conv_out"], name="conv1",
                          kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["conv_out"], ["relu_out"], name="relu1"),
         helper.make_node("Add", ["relu_out", "C"], ["Y"], name="add1")],
        "conv_relu_add",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4, 8, 8])],
        initializer=[initializer("W", [4, 3, 3, 3], 0.1), initializer("B", [4], 0.5),
                     initializer("C", [1, 4, 1, 1], 0.25)])
    model = helper.make_model(graph, producer_name="python_client_test",
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    return model


class Kilnd:
    """A kilnd process on free loopback ports, stopped with SIGTERM."""

    def __init__(self, *extra_flags):
        if not KILND.is_file():
            raise AssertionError(f"kilnd not found at {KILND} (set KILN_KILND)")
        self._dir = tempfile.TemporaryDirectory(prefix="kiln_py_client_")
        # Files, not pipes: nothing can block kilnd on a full pipe, and the
        # output is there to show when something fails.
        self.stdout_path = Path(self._dir.name) / "stdout"
        self.stderr_path = Path(self._dir.name) / "stderr"
        try:
            with open(self.stdout_path, "wb") as stdout, \
                    open(self.stderr_path, "wb") as stderr:
                self.process = subprocess.Popen(
                    [str(KILND), "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
                     "--workers=2", *extra_flags],
                    stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL)
            self.address = self._wait_for_ready_line()
        except BaseException:
            self._dir.cleanup()
            raise

    def _wait_for_ready_line(self) -> str:
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            match = READY_LINE.search(self.stdout_path.read_text())
            if match:
                return match.group(1)
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.process.kill()
        self.process.wait()
        raise AssertionError(f"kilnd printed no ready line (exit {self.process.returncode})\n"
                             f"{self.output()}")

    def temp_path(self, name: str) -> Path:
        return Path(self._dir.name) / name

    def output(self) -> str:
        return (f"stdout:\n{self.stdout_path.read_text()}\n"
                f"stderr:\n{self.stderr_path.read_text(errors='replace')}")

    def stop(self) -> int:
        """SIGTERM, then the exit code (kills and fails after a timeout)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(SHUTDOWN_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError(f"kilnd ignored SIGTERM for {SHUTDOWN_SECONDS}s\n"
                                     f"{self.output()}")
        return self.process.returncode

    def cleanup(self) -> None:
        self._dir.cleanup()


class KilndTestCase(unittest.TestCase):
    KILND_FLAGS: tuple = ()

    def setUp(self):
        self.kilnd = Kilnd(*self.KILND_FLAGS)
        self.model = conv_relu_add_model()
        self.model_bytes = self.model.SerializeToString()

    def tearDown(self):
        try:
            code = self.kilnd.stop()
            self.assertEqual(code, 0, f"kilnd exited {code} after SIGTERM\n{self.kilnd.output()}")
        finally:
            self.kilnd.cleanup()


class PythonClientTest(KilndTestCase):
    def client(self, **kwargs) -> Client:
        return Client(self.kilnd.address, deadline=120, **kwargs)

    def test_health_reports_serving_for_the_server_and_the_compiler_service(self):
        with self.client() as kiln:
            self.assertEqual(kiln.health(), "SERVING")
            self.assertEqual(kiln.health("kiln.v1.Compiler"), "SERVING")

    def test_compile_returns_every_artifact_with_its_sha256_and_size(self):
        with self.client() as kiln:
            response = kiln.compile(self.model_bytes, name="conv_relu_add")
        self.assertRegex(response.compile_id, r"^[0-9a-f]{64}$")
        kinds = sorted(artifact.kind for artifact in response.artifacts)
        self.assertEqual(kinds, [pb.GRAPH_IR_TEXT, pb.GRAPH_IR_JSON, pb.LOOP_IR,
                                 pb.METADATA_JSON])
        for artifact in response.artifacts:
            with self.subTest(artifact=artifact.name):
                self.assertTrue(artifact.content)
                self.assertEqual(artifact.sha256, hashlib.sha256(artifact.content).hexdigest())
                self.assertEqual(artifact.size, len(artifact.content))
        self.assertEqual([tensor.name for tensor in response.signature.inputs], ["X"])
        self.assertEqual(list(response.signature.outputs[0].shape), [1, 4, 8, 8])

    def test_compile_is_deterministic_and_reads_a_path_like_bytes(self):
        path = self.kilnd.temp_path("model.onnx")
        path.write_bytes(self.model_bytes)
        with self.client() as kiln:
            from_bytes = kiln.compile(self.model_bytes, artifacts=["graph_ir_text"])
            from_path = kiln.compile(path, artifacts=[pb.GRAPH_IR_TEXT])
            from_proto = kiln.compile(self.model, artifacts=["GRAPH_IR_TEXT"])
        self.assertEqual([a.kind for a in from_bytes.artifacts], [pb.GRAPH_IR_TEXT])
        self.assertEqual(from_bytes.compile_id, from_path.compile_id)
        self.assertEqual(from_bytes.compile_id, from_proto.compile_id)
        self.assertEqual(from_bytes.artifacts[0].content, from_path.artifacts[0].content)

    def test_compile_of_graph_ir_text_from_kir_and_txt_files(self):
        text = ("def @main(%x: Tensor[(1, 4, 8, 8), float32] /* si=x */)"
                " -> Tensor[(1, 4, 8, 8), float32] {\n"
                "  %0 = nn.relu(%x) /* si=relu1 */;\n"
                "  add(%0, 1f /* si=one */) /* si=add1 */\n"
                "}\n")
        kir = self.kilnd.temp_path("relu_add.kir")
        txt = self.kilnd.temp_path("relu_add.txt")
        kir.write_text(text)
        txt.write_text(text)
        with self.client() as kiln:
            from_kir = kiln.compile(kir, opt_level=0, artifacts=["graph_ir_text"])
            from_txt = kiln.compile(txt, opt_level=0, artifacts=["graph_ir_text"])
        self.assertIn(b"nn.relu", from_kir.artifacts[0].content)
        self.assertEqual([tensor.name for tensor in from_kir.signature.inputs], ["x"])
        self.assertEqual(list(from_kir.signature.outputs[0].shape), [1, 4, 8, 8])
        self.assertEqual(from_kir.compile_id, from_txt.compile_id)

    def test_trace_streams_increasing_events_ending_in_the_compile_summary(self):
        with self.client() as kiln:
            events = list(kiln.trace(self.model_bytes, opt_level=3))
            compiled = kiln.compile(self.model_bytes, opt_level=3)
        self.assertGreater(len(events), 1)
        # Pass events arrive in the order the passes ran; the summary may come
        # in an event of its own (no pass name), whose index means nothing.
        indices = [event.index for event in events if event.pass_name]
        self.assertEqual(indices, sorted(set(indices)), "indices must strictly increase")
        with_summary = [i for i, event in enumerate(events) if event.HasField("summary")]
        self.assertEqual(with_summary, [len(events) - 1])
        self.assertEqual(events[-1].summary.compile_id, compiled.compile_id)
        self.assertEqual(len(events[-1].summary.artifacts), 0)
        names = {event.pass_name for event in events}
        self.assertIn("FoldConstant", names)
        self.assertIn("FuseOps", names)
        # ir_after is on by default: some pass's output IR arrives with it.
        self.assertTrue(any(event.ir_after for event in events))
        stages = {event.stage for event in events if event.pass_name}
        self.assertLessEqual(stages, {"graph", "loop", "llvm"})
        self.assertIn("MachineCode", names)  # LLVM made the object last

    def test_trace_stage_filter_only_sends_that_stage(self):
        with self.client() as kiln:
            events = list(kiln.trace(self.model_bytes, stages=["graph"], ir_after=False))
        passes = [event for event in events if event.pass_name]
        self.assertTrue(passes)
        self.assertEqual({event.stage for event in passes}, {"graph"})
        self.assertTrue(all(not event.ir_after for event in events))
        self.assertTrue(events[-1].HasField("summary"))

    def test_schedule_record_of_a_kernel_and_not_found_listing_the_kernels(self):
        with self.client() as kiln:
            # Call 0 reshapes the 3-channel image to NCHW1c for the blocked convolution (a view,
            # no kernel); call 1 is that convolution's kernel.
            record = kiln.schedule_record(self.model_bytes, "1", verify=True)
            with self.assertRaises(KilnError) as raised:
                kiln.schedule_record(self.model_bytes, "no_such_kernel")
        self.assertTrue(record.kernel)
        self.assertTrue(record.steps)
        self.assertEqual([step.step for step in record.steps],
                         sorted({step.step for step in record.steps}))
        for step in record.steps:
            with self.subTest(step=step.step):
                self.assertTrue(step.loop_ir)
                self.assertTrue(step.HasField("verified"), "verify=True sets every step")
                self.assertTrue(step.verified)
        self.assertEqual(raised.exception.code, "NOT_FOUND")
        self.assertIn(record.kernel, raised.exception.message)
        self.assertIn("no_such_kernel", raised.exception.message)

    def test_schedule_record_selected_by_onnx_layer_name(self):
        with self.client() as kiln:
            record = kiln.schedule_record(self.model_bytes, "conv1")
        self.assertIn("conv1", record.spans)

    def test_sequence_and_empty_optional_inputs_are_typed_by_the_request(self):
        # y = s[1] (a sequence input), z = whether the optional input o holds a value.
        sequence = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
        optional = helper.make_value_info("o", helper.make_optional_type_proto(
            helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))
        one = helper.make_tensor("one", TensorProto.INT64, [], [1])
        graph = helper.make_graph(
            [helper.make_node("SequenceAt", ["s", "one"], ["y"], name="at"),
             helper.make_node("OptionalHasElement", ["o"], ["z"], name="has")],
            "seq_opt", [sequence, optional],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
             helper.make_tensor_value_info("z", TensorProto.BOOL, [])], [one])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        with Client(self.kilnd.address, deadline=60) as kiln:
            with self.assertRaisesRegex(KilnError, "give its element shapes"):
                kiln.compile(model)
            response = kiln.compile(model, sequence_input_shapes={"s": [[2, 3], [1, 3]]},
                                    empty_optional_inputs=["o"])
        # Each element is an input of the compiled model; s[1] is the second, [1, 3].
        self.assertEqual([(i.name, list(i.shape)) for i in response.signature.inputs],
                         [("s.0", [2, 3]), ("s.1", [1, 3])])
        self.assertEqual(list(response.signature.outputs[0].shape), [1, 3])

    def test_garbage_model_is_invalid_argument(self):
        with self.client() as kiln:
            with self.assertRaises(KilnError) as raised:
                kiln.compile(b"this is not an ONNX model")
            with self.assertRaises(KilnError) as raised_in_trace:
                list(kiln.trace(b"\x08\x07garbage"))
        self.assertEqual(raised.exception.code, "INVALID_ARGUMENT")
        self.assertTrue(raised.exception.message)
        self.assertEqual(raised_in_trace.exception.code, "INVALID_ARGUMENT")

    def test_several_addresses_are_balanced_over(self):
        second = Kilnd("--workers=1")
        try:
            with Client(f"{self.kilnd.address},{second.address}", deadline=60) as kiln:
                ids = {kiln.compile(conv_relu_add_model().SerializeToString()).compile_id
                       for _ in range(4)}
            self.assertEqual(len(ids), 1)
        finally:
            self.assertEqual(second.stop(), 0)
            second.cleanup()
        with self.assertRaisesRegex(ValueError, "must be IP:PORT"):
            Client("localhost:1,127.0.0.1:2")

    def test_passes_lists_the_registry(self):
        with self.client() as kiln:
            passes = kiln.passes()
        by_name = {description.name: description for description in passes}
        self.assertIn("FoldConstant", by_name)
        self.assertIn("FuseOps", by_name)
        self.assertEqual(by_name["FuseOps"].stage, "graph")

    def test_an_expired_deadline_is_deadline_exceeded(self):
        with Client(self.kilnd.address, deadline=1e-6) as kiln:
            with self.assertRaises(KilnError) as raised:
                kiln.compile(self.model_bytes)
        self.assertEqual(raised.exception.code, "DEADLINE_EXCEEDED")

    def run_cli(self, *args):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(PYTHON_PATH))
        return subprocess.run([sys.executable, "-m", "kiln_client", *args],
                              capture_output=True, text=True, env=env, timeout=300)

    def test_cli_trace_prints_a_line_per_pass_then_the_summary(self):
        path = self.kilnd.temp_path("model.onnx")
        path.write_bytes(self.model_bytes)
        with self.client() as kiln:
            compile_id = kiln.compile(self.model_bytes).compile_id
        result = self.run_cli("trace", str(path), "--server", self.kilnd.address)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertTrue(any(re.match(r"^\s*\d+\s+graph\s+FoldConstant\s", line)
                            for line in lines), result.stdout)
        self.assertIn(f"compile_id  {compile_id}", lines)

    def test_cli_json_trace_compile_out_and_exit_codes(self):
        path = self.kilnd.temp_path("model.onnx")
        path.write_bytes(self.model_bytes)
        server = ["--server", self.kilnd.address]
        traced = self.run_cli("trace", str(path), "--json", *server)
        self.assertEqual(traced.returncode, 0, traced.stderr)
        self.assertIn('"summary"', traced.stdout.splitlines()[-1])

        out = self.kilnd.temp_path("out")
        compiled = self.run_cli("compile", str(path), "--out", str(out), *server)
        self.assertEqual(compiled.returncode, 0, compiled.stderr)
        with self.client() as kiln:
            expected = kiln.compile(self.model_bytes)
        for artifact in expected.artifacts:
            self.assertEqual((out / artifact.name).read_bytes(), artifact.content)

        missing = self.run_cli("schedule", str(path), "no_such_kernel", *server)
        self.assertEqual(missing.returncode, 1)
        self.assertTrue(missing.stderr.startswith("kiln_client: NOT_FOUND: "), missing.stderr)
        self.assertEqual(self.run_cli("trace", *server).returncode, 2)
        self.assertEqual(self.run_cli("passes", *server).returncode, 0)
        health = self.run_cli("health", *server)
        self.assertEqual((health.returncode, health.stdout), (0, "SERVING\n"))


class AuthTokenTest(KilndTestCase):
    TOKEN = "py-client-test-token"

    def setUp(self):
        token_dir = tempfile.TemporaryDirectory(prefix="kiln_py_token_")
        self.addCleanup(token_dir.cleanup)
        token_file = Path(token_dir.name) / "token"
        token_file.write_text(self.TOKEN)
        self.KILND_FLAGS = (f"--auth-token-file={token_file}",)
        super().setUp()

    def test_calls_need_the_bearer_token_but_health_does_not(self):
        with Client(self.kilnd.address, deadline=120) as anonymous:
            self.assertEqual(anonymous.health(), "SERVING")
            with self.assertRaises(KilnError) as raised:
                anonymous.passes()
        self.assertEqual(raised.exception.code, "UNAUTHENTICATED", raised.exception.message)
        with Client(self.kilnd.address, token="wrong", deadline=120) as wrong:
            with self.assertRaises(KilnError) as raised:
                wrong.compile(self.model_bytes)
        self.assertEqual(raised.exception.code, "UNAUTHENTICATED", raised.exception.message)
        with Client(self.kilnd.address, token=self.TOKEN, deadline=120) as kiln:
            self.assertIn("FuseOps", [description.name for description in kiln.passes()])


if __name__ == "__main__":
    unittest.main()
