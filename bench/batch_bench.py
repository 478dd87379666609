"""A symbolic batch against a fixed one: per model of bench/model_zoo.py, the model with its
batch made an ONNX dim_param ("N", as torch.onnx.export's dynamic_axes writes it) is compiled
once without input shapes (Kiln compiles it per sample: <prefix>_run_dynamic) and run on a batch
of B; the same model compiled for a fixed batch of B (--input_shape) and ONNX Runtime 1.30 (one
intra-op thread) run the same input in the same process run. Prints, per model, the latencies,
the per-sample compile's ratio to the fixed-batch compile and to ONNX Runtime, its ratio to B
runs of one sample (what the per-sample loop costs), and the largest difference from ONNX
Runtime's outputs. A benchmark, never a test.

usage: batch_bench.py BUILD_DIR ORT_DIR [--batch=B] [--runs=N] [--rounds=N] [MODEL ...]
  ORT_DIR holds node_modules/onnxruntime-node (npm install --ignore-scripts onnxruntime-node@1.30.0)
  --rounds: rounds of (per sample, fixed batch, one sample, ONNX Runtime) run one after another
  (default 2); each figure is the fastest round's median (the VM's neighbours only add time)
"""
import json
import math
import os
import sys
import tempfile

import numpy as np
import onnx

from models_bench import median_ms, run

HERE = os.path.dirname(os.path.abspath(__file__))


def with_symbolic_batch(source, target):
    """The model with axis 0 of its graph inputs and outputs the dim_param N."""
    model = onnx.load(source)
    initializers = {tensor.name for tensor in model.graph.initializer}
    for value in list(model.graph.input) + list(model.graph.output):
        if value.name in initializers:
            continue
        dim = value.type.tensor_type.shape.dim[0]
        dim.Clear()
        dim.dim_param = "N"
    onnx.save(model, target)


def main():
    build, ort_dir = sys.argv[1], sys.argv[2]
    batch, runs, rounds, names = 8, 10, 2, []
    for arg in sys.argv[3:]:
        if arg.startswith("--batch="):
            batch = int(arg[len("--batch="):])
        elif arg.startswith("--runs="):
            runs = int(arg[len("--runs="):])
        elif arg.startswith("--rounds="):
            rounds = max(1, int(arg[len("--rounds="):]))
        else:
            names.append(arg)
    names = names or ["mobilenetv2", "efficientnet", "resnet50"]
    kiln_run = os.path.join(build, "tools/kiln-run/kiln-run")
    work = tempfile.mkdtemp(prefix="kiln-batch-")
    zoo = run([sys.executable, os.path.join(HERE, "model_zoo.py"), work] + names)
    env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
    print(f"batch {batch}; one thread, and two (2t: the per-sample run puts one sample on each "
          f"thread, the fixed batch splits each kernel's parallel loops)")
    print(f"{'model':<13} {'per-sample ms':>13} {'fixed ms':>9} {'1 sample ms':>11} {'ort ms':>8} "
          f"{'/fixed':>7} {'/ort':>6} {'/(B x 1)':>8} {'2t ms':>7} {'fixed 2t':>8} {'2t/1t':>6} "
          f"{'max rel err':>11}")
    for line in zoo.split("\n"):
        if not line.strip():
            continue
        name, dims, _ = line.split()
        shape = [batch] + [int(d) for d in dims.split("x")][1:]
        source = os.path.join(work, name + ".onnx")
        model = os.path.join(work, name + ".batch.onnx")
        with_symbolic_batch(source, model)
        # The input ort_latency.js builds too: x[i] = ((i * 7) % 255) / 255 - 0.5.
        index = np.arange(int(np.prod(shape)), dtype=np.int64)
        x = (((index * 7) % 255) / 255.0 - 0.5).astype(np.float32).reshape(shape)
        input_file = os.path.join(work, name + ".input.npy")
        np.save(input_file, x)
        np.save(os.path.join(work, name + ".one.npy"), x[:1])
        out_dir = os.path.join(work, name + ".out")
        fixed_shape = "input=" + "x".join(str(d) for d in shape)
        per_sample_ms = fixed_ms = one_ms = ort_ms = two_ms = fixed_two_ms = math.inf
        for _ in range(rounds):
            # No per-kernel timing: its counters would make samples run one at a time.
            common = [f"--benchmark={runs}", "--threads=1", "--kernel_profile=false"]
            two = [f"--benchmark={runs}", "--threads=2", "--kernel_profile=false"]
            two_ms = min(two_ms, median_ms(run([kiln_run, model, f"--input={input_file}"] + two)))
            fixed_two_ms = min(fixed_two_ms, median_ms(run(
                [kiln_run, model, f"--input={input_file}", f"--input_shape={fixed_shape}"] + two)))
            per_sample_ms = min(per_sample_ms, median_ms(run(
                [kiln_run, model, f"--input={input_file}", f"--output_dir={out_dir}"] + common)))
            fixed_ms = min(fixed_ms, median_ms(run(
                [kiln_run, model, f"--input={input_file}", f"--input_shape={fixed_shape}"] + common)))
            one_ms = min(one_ms, median_ms(run(
                [kiln_run, model, f"--input={os.path.join(work, name + '.one.npy')}"] + common)))
            ort = run(["node", os.path.join(HERE, "ort_latency.js"), model, str(runs),
                       "x".join(str(d) for d in shape)], env=env).split("\n")
            ort_ms = min(ort_ms, float(ort[0]))
        reference = np.array(json.loads(ort[1]), dtype=np.float64)
        ours = np.load(os.path.join(out_dir, os.listdir(out_dir)[0])).astype(np.float64).ravel()
        scale = max(np.abs(reference).max(), 1e-30)
        error = float(np.abs(ours - reference).max() / scale) if ours.size == reference.size else math.inf
        print(f"{name:<13} {per_sample_ms:13.2f} {fixed_ms:9.2f} {one_ms:11.2f} {ort_ms:8.2f} "
              f"{per_sample_ms / fixed_ms:7.2f} {per_sample_ms / ort_ms:6.2f} "
              f"{per_sample_ms / (batch * one_ms):8.2f} {two_ms:7.2f} {fixed_two_ms:8.2f} "
              f"{per_sample_ms / two_ms:6.2f} {error:11.2e}", flush=True)


if __name__ == "__main__":
    main()
