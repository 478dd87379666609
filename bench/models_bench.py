"""Kiln against ONNX Runtime on the model families of bench/model_zoo.py: per model, Kiln's
latency on one and two threads (kiln-run, the AOT entry through LLJIT), ONNX Runtime 1.30's on
one intra-op thread (bench/ort_latency.js) on the same input in the same run, the ratio, GFLOP/s,
and the largest difference between the two runtimes' outputs; then the geomean ratio and the
slowest model's per-kernel breakdown. A benchmark, never a test.

usage: models_bench.py BUILD_DIR ORT_DIR [--runs=N] [--rounds=N] [--peak=GFLOPS] [MODEL ...]
  ORT_DIR holds node_modules/onnxruntime-node (npm install --ignore-scripts onnxruntime-node@1.30.0)
  --rounds: per model, rounds of (Kiln 1 thread, Kiln 2 threads, ONNX Runtime) run one after
  another (default 3); each figure is the fastest round's median, so a burst of load from the
  VM's neighbours during one run does not move the ratio (their noise only ever adds time)
  --peak: one core's FP32 peak, for each kernel's share of it (default 215: measured on these
  machines' AMD EPYC cores with 12 independent chains of 512-bit FMAs, 1.96x that on 2 threads;
  a Zen 4 host, whose AVX-512 runs on 256-bit pipes, measures 116: pass --peak=116 there)
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def run(command, env=None):
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def median_ms(text):
    return float(re.search(r"median ([0-9.]+) ms", text).group(1))


def main():
    build, ort_dir = sys.argv[1], sys.argv[2]
    runs = 10
    rounds = 3
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
    rows, outputs_of = [], {}
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
        one_ms, two_ms, ort_ms, one = math.inf, math.inf, math.inf, ""
        for _ in range(rounds):
            text = run([kiln_run, model, f"--input={input_file}", f"--benchmark={runs}",
                        "--threads=1", f"--output_dir={out_dir}", f"--peak_gflops={peak}"])
            if median_ms(text) < one_ms:
                one_ms, one = median_ms(text), text
            two = run([kiln_run, model, f"--input={input_file}", f"--benchmark={runs}",
                       "--threads=2"])
            two_ms = min(two_ms, median_ms(two))
            ort = run(["node", os.path.join(HERE, "ort_latency.js"), model, str(runs), dims],
                      env=env).split("\n")
            ort_ms = min(ort_ms, float(ort[0]))
        reference = np.array(json.loads(ort[1]), dtype=np.float64)
        ours = np.load(os.path.join(out_dir, os.listdir(out_dir)[0])).astype(np.float64).ravel()
        scale = max(np.abs(reference).max(), 1e-30)
        error = float(np.abs(ours - reference).max() / scale) if ours.size == reference.size else math.inf
        k1, k2 = one_ms, two_ms
        gflops = 2 * int(macs) / (k1 * 1e6)
        rows.append((name, k1 / ort_ms))
        outputs_of[name] = one
        print(f"{name:<13} {int(macs) / 1e9:6.2f} {k1:10.2f} {k2:10.2f} {ort_ms:9.2f} "
              f"{k1 / ort_ms:8.2f} {gflops:8.1f} {k1 / k2:6.2f} {error:11.2e}", flush=True)
    geomean = math.exp(sum(math.log(r) for _, r in rows) / len(rows))
    print(f"geomean kiln/ort (one thread): {geomean:.2f}")
    slowest = max(rows, key=lambda row: row[1])[0]
    print(f"\nper-kernel times of the slowest model relative to ORT, {slowest} "
          f"(peak: {peak:g} GFLOP/s per core):")
    print(outputs_of[slowest][outputs_of[slowest].find("kernels"):])


if __name__ == "__main__":
    main()
