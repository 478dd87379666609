#!/usr/bin/python3
# The kiln-client wheel as a user installs it: pip (Debian's, offline: --no-index) into a fresh
# virtual environment that sees Debian's grpcio and protobuf (--system-site-packages), then the
# package and its kiln-py command used against a real kilnd, from outside the source and build
# trees and without PYTHONPATH.
#
# Environment: KILN_KILND, KILN_WHEEL (the built kilnd and wheel).
"""python3 tests/integration/python_wheel_test.py"""

import os
import re
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KILND = str(Path(os.environ.get("KILN_KILND", ROOT / "build/service/kilnd")).resolve())
WHEEL = str(Path(os.environ.get("KILN_WHEEL") or next((ROOT / "build/dist").glob("kiln_client-*.whl"))).resolve())
READY_LINE = re.compile(r"^kilnd: grpc=(\S+) metrics=(\S+)$", re.MULTILINE)

USER_SCRIPT = """
import sys
import kiln_client
from kiln_client import Client
from onnx import TensorProto, helper

graph = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"], name="relu1")], "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
with Client(sys.argv[1], deadline=60) as kiln:
    response = kiln.compile(model.SerializeToString(), name="relu")
print(kiln_client.__file__)
print(response.compile_id, len(response.artifacts))
"""


class PythonWheelTest(unittest.TestCase):
    def test_the_wheel_installs_offline_and_talks_to_kilnd(self):
        with tempfile.TemporaryDirectory(prefix="kiln_wheel_") as directory, \
                tempfile.TemporaryFile() as out:
            venv = Path(directory) / "venv"
            subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                           check=True)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            # Dependencies are checked, not skipped: Debian's grpcio and protobuf satisfy them.
            installed = subprocess.run([str(venv / "bin/pip"), "install", "--no-index", WHEEL],
                                       env=env, capture_output=True, text=True, cwd=directory)
            self.assertEqual(installed.returncode, 0, installed.stdout + installed.stderr)

            kilnd = subprocess.Popen([KILND, "--listen=127.0.0.1:0", "--metrics-listen=",
                                      "--workers=1"], stdout=out, stderr=subprocess.DEVNULL)
            try:
                deadline, address = time.monotonic() + 30, None
                while address is None and time.monotonic() < deadline:
                    out.seek(0)
                    match = READY_LINE.search(out.read().decode())
                    address = match.group(1) if match else None
                    time.sleep(0.05)
                self.assertIsNotNone(address, "kilnd did not start")
                script = Path(directory) / "user.py"
                script.write_text(USER_SCRIPT)
                ran = subprocess.run([str(venv / "bin/python"), str(script), address], env=env,
                                     cwd=directory, capture_output=True, text=True, timeout=120)
                self.assertEqual(ran.returncode, 0, ran.stderr)
                module_file, summary = ran.stdout.splitlines()[:2]
                # The package came from the virtual environment, not a source or build tree.
                self.assertTrue(module_file.startswith(str(venv)), module_file)
                compile_id, artifacts = summary.split()
                self.assertRegex(compile_id, r"^[0-9a-f]{64}$")
                self.assertGreater(int(artifacts), 0)
                # The console script the wheel declares.
                health = subprocess.run([str(venv / "bin/kiln-py"), "health", "--server", address],
                                        env=env, cwd=directory, capture_output=True, text=True,
                                        timeout=60)
                self.assertEqual(health.returncode, 0, health.stdout + health.stderr)
            finally:
                kilnd.terminate()
                self.assertEqual(kilnd.wait(timeout=60), 0)


if __name__ == "__main__":
    unittest.main()
