#!/usr/bin/python3
# The container image's entrypoint and healthcheck, run outside a container (no Docker engine on
# these machines): deploy/docker/entrypoint.sh starts the real kilnd with flags from the KILN_*
# environment, the Dockerfile's HEALTHCHECK command reports it healthy, and SIGTERM sent to the
# entrypoint's process reaches kilnd itself (exec), which drains and exits 0.
#
# Environment: KILN_KILND and KILN_CLI (the built binaries standing in for /usr/local/bin/...).
"""python3 tests/integration/container_entrypoint_test.py"""

import json
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "deploy" / "docker"
KILND = os.environ.get("KILN_KILND", str(ROOT / "build/service/kilnd"))
KILN = os.environ.get("KILN_CLI", str(ROOT / "build/clients/cli/kiln"))
STARTUP_SECONDS = 30


def dockerfile_instruction(name):
    """The argument of the runtime stage's last `name` instruction (continuations joined)."""
    text = (DOCKER / "Dockerfile").read_text().replace("\\\n", " ")
    found = re.findall(rf"^{name}\s+(.*)$", text, re.MULTILINE)
    return found[-1].strip()


READY_LINE = re.compile(r"^kilnd: grpc=(\S+) metrics=(\S+)$", re.MULTILINE)


def ready_line(out, process):
    """kilnd's (grpc, metrics) addresses from the line it prints once serving."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        out.seek(0)
        match = READY_LINE.search(out.read().decode())
        if match:
            return match.group(1), match.group(2)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError("kilnd printed no ready line")


class ContainerEntrypointTest(unittest.TestCase):
    def test_entrypoint_healthcheck_and_sigterm(self):
        entrypoint = json.loads(dockerfile_instruction("ENTRYPOINT"))
        self.assertEqual(entrypoint, ["/usr/local/bin/kiln-entrypoint"])
        self.assertIn("COPY deploy/docker/entrypoint.sh /usr/local/bin/kiln-entrypoint",
                      (DOCKER / "Dockerfile").read_text())
        health = dockerfile_instruction("HEALTHCHECK")
        command = json.loads(health[health.index("CMD") + 3:].strip())
        self.assertEqual(command[0], "/usr/local/bin/kiln")
        self.assertIn("--server=127.0.0.1:50051", command)

        env = dict(os.environ, KILN_KILND_BINARY=KILND, KILN_LISTEN="127.0.0.1:0",
                   KILN_METRICS_LISTEN="127.0.0.1:0", KILN_WORKERS="3",
                   KILN_QUEUE_DEPTH="5", KILN_GRACE_PERIOD="5s")
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            process = subprocess.Popen([str(DOCKER / "entrypoint.sh"), "--max-event-bytes=1048576"],
                                       env=env, stdout=out, stderr=err)
            try:
                address, metrics_address = ready_line(out, process)
                # The image's healthcheck, pointed at this port and the built CLI.
                check = [KILN] + [arg.replace("127.0.0.1:50051", address)
                                  for arg in command[1:]]
                deadline = time.monotonic() + STARTUP_SECONDS
                healthy = False
                while not healthy and time.monotonic() < deadline:
                    healthy = subprocess.run(check, capture_output=True).returncode == 0
                    if not healthy:
                        self.assertIsNone(process.poll(), "kilnd exited")
                        time.sleep(0.1)
                self.assertTrue(healthy, "the HEALTHCHECK command never passed")
                # exec: the entrypoint's process is kilnd now.
                self.assertEqual(os.path.realpath(f"/proc/{process.pid}/exe"),
                                 os.path.realpath(KILND))
                # The environment became flags.
                with urllib.request.urlopen(f"http://{metrics_address}/metrics",
                                            timeout=30) as response:
                    metrics = response.read().decode()
                self.assertRegex(metrics, r"(?m)^kiln_workers 3$")
                self.assertRegex(metrics, r"(?m)^kiln_queue_capacity 5$")
                process.send_signal(signal.SIGTERM)
                self.assertEqual(process.wait(timeout=60), 0)
                self.assertNotEqual(subprocess.run(check, capture_output=True).returncode, 0)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()


if __name__ == "__main__":
    unittest.main()
