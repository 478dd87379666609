#!/usr/bin/python3
# The CMake package as a build farm uses it: Kiln installed with `cmake --install` into a fresh
# prefix, its kilnd started from there, and examples/cmake_project configured against the prefix
# (find_package(Kiln), kiln_add_model) and built: the model is compiled through kilnd at build
# time into an object and a header, linked like any library, and the program computes
# relu(2 x + 1) (worked out by hand below). An unchanged model builds nothing; a fresh build
# directory asks kilnd again, which answers from its cache by compile id without compiling.
#
# Environment: KILN_BUILD_DIR (the build tree to install from).
"""python3 tests/integration/cmake_package_test.py"""

import os
import re
import subprocess
import tempfile
import time
import unittest
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build")).resolve()
EXAMPLE = ROOT / "examples" / "cmake_project"
READY_LINE = re.compile(r"^kilnd: grpc=(\S+) metrics=(\S+)$", re.MULTILINE)


def run(*command, cwd=None):
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, command))} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def metric(address, name):
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=30) as response:
        match = re.search(rf"(?m)^{name} (\S+)$", response.read().decode())
    return float(match.group(1)) if match else -1


class CMakePackageTest(unittest.TestCase):
    def test_find_package_and_kiln_add_model_build_a_program_that_runs_the_model(self):
        with tempfile.TemporaryDirectory(prefix="kiln_cmake_") as directory, \
                tempfile.TemporaryFile() as out:
            prefix = Path(directory) / "prefix"
            run("cmake", "--install", str(BUILD), "--prefix", str(prefix))
            kilnd = subprocess.Popen([str(prefix / "bin/kilnd"), "--listen=127.0.0.1:0",
                                      "--metrics-listen=127.0.0.1:0", "--workers=1"],
                                     stdout=out, stderr=subprocess.DEVNULL)
            try:
                deadline, match = time.monotonic() + 30, None
                while match is None and time.monotonic() < deadline:
                    out.seek(0)
                    match = READY_LINE.search(out.read().decode())
                    time.sleep(0.05)
                self.assertIsNotNone(match, "the installed kilnd did not start")
                address, metrics = match.group(1), match.group(2)

                def configure_and_build(build_dir):
                    run("cmake", "-S", str(EXAMPLE), "-B", str(build_dir), "-G", "Ninja",
                        f"-DCMAKE_PREFIX_PATH={prefix}", f"-DKILN_SERVER={address}",
                        "-DPython3_EXECUTABLE=/usr/bin/python3")
                    return run("cmake", "--build", str(build_dir))

                first = Path(directory) / "build1"
                configure_and_build(first)
                # relu(2 x + 1) of (-2, -0.5, 0, 3) = (0, 0, 1, 7).
                self.assertEqual(run(str(first / "run_model"), "-2", "-0.5", "0", "3").split(),
                                 ["0", "0", "1", "7"])
                self.assertIn("no work to do", run("cmake", "--build", str(first)))
                # A fresh build directory: kiln compile runs again, kilnd does not compile again.
                second = Path(directory) / "build2"
                configure_and_build(second)
                self.assertEqual(run(str(second / "run_model"), "1", "1", "1", "1").split(),
                                 ["3", "3", "3", "3"])
                self.assertEqual(metric(metrics, "kiln_cache_misses_total"), 1)
                self.assertEqual(metric(metrics, "kiln_cache_hits_total"), 1)
            finally:
                kilnd.terminate()
                self.assertEqual(kilnd.wait(timeout=60), 0)


if __name__ == "__main__":
    unittest.main()
