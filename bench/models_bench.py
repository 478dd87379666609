"""Kiln against ONNX Runtime on the model families of bench/model_zoo.py: per model, Kiln's
latency on one and two threads (kiln-run, the AOT entry through LLJIT), ONNX Runtime 1.30's on
one intra-op thread (bench/ort_latency.js) on the same input in the same run, the ratio, GFLOP/s,
and the largest difference between the two runtimes' outputs; then the geomean ratio and the
slowest model's per-kernel breakdown. A benchmark, never a test.

Each runtime is compiled or loaded once per model, in its own process (Kiln on one thread, ONNX
Runtime on one intra-op thread, Kiln on two threads), and the rounds take turns: each round asks
each process, in an order that rotates from round to round, for the median of --runs runs, so
the three are measured in one timeline seconds apart instead of minutes apart, and the load of
the VM's neighbours, which moves these machines' speed by up to 1.5x over minutes, falls on all
of them alike. The Kiln/ORT ratio and the 2-thread
speedup are the medians of the rounds' ratios; the millisecond columns are the fastest round's
medians. Kiln runs code compiled without the per-kernel profile (it brackets every kernel with two
runtime calls); the per-kernel table comes from one more, profiled, run of the slowest model.

usage: models_bench.py BUILD_DIR ORT_DIR [--runs=N] [--rounds=N] [--peak=GFLOPS] [MODEL ...]
  ORT_DIR holds node_modules/onnxruntime-node (npm install --ignore-scripts onnxruntime-node@1.30.0)
  --runs: runs per round and process (default 10); --rounds: rounds per model (default 7)
  --peak: one core's FP32 peak, for each kernel's share of it (default 215: measured on these
  machines' AMD EPYC cores with 12 independent chains of 512-bit FMAs, 1.96x that on 2 threads;
  a Zen 4 host, whose AVX-512 runs on 256-bit pipes, measures 116: pass --peak=116 there)
"""
import collections
import json
import math
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# The longest a compile, a load or one request's runs may take.
DEADLINE_S = 600


def run(command, env=None):
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def median_ms(output):
    """The median of a `kiln-run --benchmark` run's output ("benchmark: ... median 5.0 ms, ...")."""
    for word, value in zip(output.split(), output.split()[1:]):
        if word == "median":
            return float(value)
    raise RuntimeError(f"no median in kiln-run's output: {output[-500:]}")


class Timed:
    """A process that answers run counts on stdin with `median MS` lines after printing `ready`
    (kiln-run --benchmark_requests, ort_latency.js with RUNS `-`). Every read has a deadline."""

    def __init__(self, command, env=None):
        self.command = command
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env)
        self.lines = queue.Queue()
        self.errors = collections.deque(maxlen=64)  # stderr's last lines, drained so it never blocks
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.preamble = []
        while (line := self._line(DEADLINE_S)) != "ready":
            self.preamble.append(line)

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _drain_stderr(self):
        for line in self.process.stderr:
            self.errors.append(line)

    def _line(self, timeout):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.process.kill()
            self.process.wait()
            raise RuntimeError(f"{' '.join(self.command)}: no answer in {timeout} s")
        if line is None:
            self.process.wait(timeout=DEADLINE_S)
            raise RuntimeError(f"{' '.join(self.command)}: {''.join(self.errors)[-2000:]}")
        return line

    def median(self, runs):
        self.process.stdin.write(f"{runs}\n")
        self.process.stdin.flush()
        while not (line := self._line(DEADLINE_S)).startswith("median "):
            pass
        # Let a thread pool's spinning workers settle before the next process runs.
        time.sleep(0.02)
        return float(line.split()[1])

    def close(self):
        self.process.stdin.close()
        if self.process.wait(timeout=DEADLINE_S) != 0:
            raise RuntimeError(f"{' '.join(self.command)}: {''.join(self.errors)[-2000:]}")


def main():
    build, ort_dir = sys.argv[1], sys.argv[2]
    runs = 10
    rounds = 7
    peak = 215.0
    names = []
    for arg in sys.argv[3:]:
        if arg.startswith("--runs="):
            runs = int(arg[len("--runs="):])
        elif arg.startswith("--rounds="):
            rounds = max(1, int(arg[len("--rounds="):]))
        elif arg.startswith("--peak="):
            peak = float(arg[len("--peak="):])
        else:
            names.append(arg)
    kiln_run = os.path.join(build, "tools/kiln-run/kiln-run")
    work = tempfile.mkdtemp(prefix="kiln-models-")
    zoo = run([sys.executable, os.path.join(HERE, "model_zoo.py"), work] + names)
    env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
    rows, inputs_of = [], {}
    print(f"{'model':<13} {'GMAC':>6} {'kiln 1t ms':>10} {'kiln 2t ms':>10} {'ort 1t ms':>9} "
          f"{'kiln/ort':>8} {'GFLOP/s':>8} {'2t/1t':>6} {'max rel err':>11}")
    for line in zoo.split("\n"):
        if not line.strip():
            continue
        name, dims, macs = line.split()
        shape = [int(d) for d in dims.split("x")]
        model = os.path.join(work, name + ".onnx")
        # The input ort_latency.js builds too: x[i] = ((i * 7) % 255) / 255 - 0.5.
        index = np.arange(int(np.prod(shape)), dtype=np.int64)
        x = (((index * 7) % 255) / 255.0 - 0.5).astype(np.float32).reshape(shape)
        input_file = os.path.join(work, name + ".input.npy")
        np.save(input_file, x)
        out_dir = os.path.join(work, name + ".out")
        # Three processes, each compiled or loaded once: Kiln on one thread, ONNX Runtime, Kiln on
        # two threads; each round asks each of them in turn for the median of `runs` runs.
        one = Timed([kiln_run, model, f"--input={input_file}", "--threads=1",
                     f"--output_dir={out_dir}", "--benchmark_requests"])
        ort = Timed(["node", os.path.join(HERE, "ort_latency.js"), model, "-", dims], env=env)
        two = Timed([kiln_run, model, f"--input={input_file}", "--threads=2", "--benchmark_requests"])
        times = {one: [], ort: [], two: []}
        turns = [one, ort, two]
        for r in range(rounds):
            # The order rotates, so whatever a process leaves behind (caches, clock) falls on each
            # of the others in turn.
            for timed in turns[r % 3:] + turns[:r % 3]:
                times[timed].append(timed.median(runs))
        one_ms, ort_ms, two_ms = times[one], times[ort], times[two]
        for timed in (one, ort, two):
            timed.close()
        ratio = statistics.median(k / o for k, o in zip(one_ms, ort_ms))
        speedup = statistics.median(k / t for k, t in zip(one_ms, two_ms))
        k1, k2, ort_ms = min(one_ms), min(two_ms), min(ort_ms)
        reference = np.array(json.loads(ort.preamble[-1]), dtype=np.float64)
        ours = np.load(os.path.join(out_dir, os.listdir(out_dir)[0])).astype(np.float64).ravel()
        scale = max(np.abs(reference).max(), 1e-30)
        error = float(np.abs(ours - reference).max() / scale) if ours.size == reference.size else math.inf
        gflops = 2 * int(macs) / (k1 * 1e6)
        rows.append((name, ratio))
        inputs_of[name] = (model, input_file)
        print(f"{name:<13} {int(macs) / 1e9:6.2f} {k1:10.2f} {k2:10.2f} {ort_ms:9.2f} "
              f"{ratio:8.2f} {gflops:8.1f} {speedup:6.2f} {error:11.2e}", flush=True)
    geomean = math.exp(sum(math.log(r) for _, r in rows) / len(rows))
    print(f"geomean kiln/ort (one thread): {geomean:.2f}")
    slowest = max(rows, key=lambda row: row[1])[0]
    print(f"\nper-kernel times of the slowest model relative to ORT, {slowest} "
          f"(peak: {peak:g} GFLOP/s per core):")
    model, input_file = inputs_of[slowest]
    profiled = run([kiln_run, model, f"--input={input_file}", f"--benchmark={runs}", "--threads=1",
                    f"--peak_gflops={peak}"])
    print(profiled[profiled.find("kernels"):])


if __name__ == "__main__":
    main()
