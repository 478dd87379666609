"""Recurrent layers (LSTM, GRU) in Kiln against ONNX Runtime, by sequence length: per model,
Kiln's compile time (kiln-run's "compiled in"), its latency on one thread (the AOT entry through
LLJIT), ONNX Runtime 1.30's on one intra-op thread (bench/ort_latency.js) on the same input in
the same run, their ratio, and the largest difference between the two runtimes' outputs; then
how compile time grows with the sequence (the longest's over the shortest's: Kiln compiles one
step's loop body whatever the length). A benchmark, never a test.

usage: recurrent_bench.py BUILD_DIR ORT_DIR [--runs=N] [--rounds=N] [--steps=S,S,...]
  ORT_DIR holds node_modules/onnxruntime-node (npm install --ignore-scripts onnxruntime-node@1.30.0)
  --rounds: per model, rounds of (Kiln, ONNX Runtime) one after the other (default 3); each figure
  is the fastest round's median (the VM's neighbours' noise only ever adds time)
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH, INPUT, HIDDEN = 1, 128, 256


def run(command, env=None):
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def recurrent_model(op, steps, path):
    """One bidirectional `op` layer (LSTM or GRU) over `steps` steps, random weights."""
    gates = {"LSTM": 4, "GRU": 3}[op]
    rng = np.random.default_rng(0)
    scale = 1 / math.sqrt(HIDDEN)
    w = numpy_helper.from_array(
        (rng.standard_normal((2, gates * HIDDEN, INPUT)) * scale).astype(np.float32), "W")
    r = numpy_helper.from_array(
        (rng.standard_normal((2, gates * HIDDEN, HIDDEN)) * scale).astype(np.float32), "R")
    b = numpy_helper.from_array(
        (rng.standard_normal((2, 2 * gates * HIDDEN)) * scale).astype(np.float32), "B")
    node = helper.make_node(op, ["x", "W", "R", "B"], ["y"], hidden_size=HIDDEN,
                            direction="bidirectional")
    graph = helper.make_graph(
        [node], op.lower(), [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, BATCH, INPUT])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [steps, 2, BATCH, HIDDEN])],
        [w, r, b])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    # Multiply-adds per run: the input projection and the recurrent product of every step.
    return 2 * steps * BATCH * gates * HIDDEN * (INPUT + HIDDEN)


def main():
    build, ort_dir = sys.argv[1], sys.argv[2]
    runs, rounds, lengths = 20, 3, [16, 256, 2048]
    for arg in sys.argv[3:]:
        if arg.startswith("--runs="):
            runs = int(arg[len("--runs="):])
        elif arg.startswith("--rounds="):
            rounds = max(1, int(arg[len("--rounds="):]))
        elif arg.startswith("--steps="):
            lengths = [int(s) for s in arg[len("--steps="):].split(",")]
    kiln_run = os.path.join(build, "tools/kiln-run/kiln-run")
    work = tempfile.mkdtemp(prefix="kiln-recurrent-")
    env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
    print(f"{'model':<10} {'steps':>6} {'compile ms':>10} {'kiln 1t ms':>10} {'ort 1t ms':>9} "
          f"{'kiln/ort':>8} {'GFLOP/s':>8} {'max rel err':>11}")
    ratios, compile_ms = [], {}
    for op in ("LSTM", "GRU"):
        for steps in lengths:
            name = f"{op.lower()}_{steps}"
            model = os.path.join(work, name + ".onnx")
            macs = recurrent_model(op, steps, model)
            dims = f"{steps}x{BATCH}x{INPUT}"
            index = np.arange(steps * BATCH * INPUT, dtype=np.int64)
            x = (((index * 7) % 255) / 255.0 - 0.5).astype(np.float32).reshape(steps, BATCH, INPUT)
            input_file = os.path.join(work, name + ".input.npy")
            np.save(input_file, x)
            out_dir = os.path.join(work, name + ".out")
            kiln_ms, ort_ms, compiled = math.inf, math.inf, math.inf
            for _ in range(rounds):
                text = run([kiln_run, model, f"--input={input_file}", f"--benchmark={runs}",
                            "--threads=1", "--kernel_profile=false", f"--output_dir={out_dir}"])
                kiln_ms = min(kiln_ms, float(re.search(r"median ([0-9.]+) ms", text).group(1)))
                compiled = min(compiled, float(re.search(r"compiled in ([0-9.]+) ms", text).group(1)))
                ort = run(["node", os.path.join(HERE, "ort_latency.js"), model, str(runs), dims],
                          env=env).split("\n")
                ort_ms = min(ort_ms, float(ort[0]))
            reference = np.array(json.loads(ort[1]), dtype=np.float64)
            ours = np.load(os.path.join(out_dir, os.listdir(out_dir)[0])).astype(np.float64).ravel()
            scale = max(np.abs(reference).max(), 1e-30)
            error = (float(np.abs(ours - reference).max() / scale)
                     if ours.size == reference.size else math.inf)
            ratios.append(kiln_ms / ort_ms)
            compile_ms[(op, steps)] = compiled
            print(f"{op:<10} {steps:>6} {compiled:10.1f} {kiln_ms:10.3f} {ort_ms:9.3f} "
                  f"{kiln_ms / ort_ms:8.2f} {2 * macs / (kiln_ms * 1e6):8.1f} {error:11.2e}",
                  flush=True)
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geomean kiln/ort (one thread): {geomean:.2f}")
    for op in ("LSTM", "GRU"):
        longest, shortest = compile_ms[(op, lengths[-1])], compile_ms[(op, lengths[0])]
        print(f"{op} compile time, {lengths[-1]} steps over {lengths[0]}: "
              f"{longest / shortest:.2f}x")


if __name__ == "__main__":
    main()
