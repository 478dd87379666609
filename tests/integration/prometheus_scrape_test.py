"""promtool accepts kilnd's /metrics, a real Prometheus server scrapes it, and the pass-duration
series of a compile comes back through Prometheus's HTTP query API: the
metrics are what a Prometheus deployment can ingest, not just text that
looks right.

Environment: as python_client_test.py (KILN_KILND, KILN_PYTHONPATH), and
KILN_PROMETHEUS (default /usr/bin/prometheus).
"""
import json
import os
import re
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.parse
import urllib.request
from pathlib import Path

from python_client_test import Kilnd, conv_relu_add_model  # sets sys.path for kiln_client
from kiln_client import Client  # noqa: E402

PROMETHEUS = os.environ.get("KILN_PROMETHEUS", "/usr/bin/prometheus")
PROMTOOL = os.environ.get("KILN_PROMTOOL", "/usr/bin/promtool")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def query(port: int, promql: str):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=5) as response:
        body = json.load(response)
    return body["data"]["result"] if body.get("status") == "success" else []


class PrometheusScrapeTest(unittest.TestCase):
    def test_pass_durations_reach_prometheus(self):
        kilnd = Kilnd()
        self.addCleanup(kilnd.stop)
        metrics = re.search(r"metrics=(\S+)", kilnd.stdout_path.read_text()).group(1)
        with Client(kilnd.address) as client:
            client.compile(conv_relu_add_model().SerializeToString())

        # Prometheus's own linter accepts the exposition (names, units, help).
        exposition = urllib.request.urlopen(f"http://{metrics}/metrics", timeout=10).read()
        lint = subprocess.run([PROMTOOL, "check", "metrics"], input=exposition,
                              capture_output=True)
        self.assertEqual(lint.returncode, 0, lint.stdout + lint.stderr)

        workdir = tempfile.TemporaryDirectory(prefix="kiln_prometheus_")
        self.addCleanup(workdir.cleanup)
        config = Path(workdir.name) / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: kilnd\n"
            f"    static_configs:\n      - targets: ['{metrics}']\n")
        port = free_port()
        log = open(Path(workdir.name) / "prometheus.log", "wb")
        self.addCleanup(log.close)
        prometheus = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={workdir.name}/data",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.addCleanup(prometheus.wait)
        self.addCleanup(prometheus.terminate)

        series = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not series:
            time.sleep(0.5)
            try:
                series = query(port, 'kiln_pass_duration_seconds_count{pass="FoldConstant"}')
            except OSError:
                continue  # not listening yet
        self.assertTrue(series, (Path(workdir.name) / "prometheus.log").read_text()[-2000:])
        sample = series[0]
        self.assertEqual(sample["metric"]["stage"], "graph")
        self.assertEqual(sample["metric"]["job"], "kilnd")
        self.assertGreaterEqual(float(sample["value"][1]), 1)
        # And a histogram Prometheus can compute with.
        quantile = query(port, 'histogram_quantile(0.5, kiln_pass_duration_seconds_bucket{pass="FoldConstant"})')
        self.assertTrue(quantile)
        self.assertGreater(float(quantile[0]["value"][1]), 0)


if __name__ == "__main__":
    unittest.main()
