"""A symbolic sequence length against fixed ones: bench/model_zoo.py's transformer encoder with
its sequence length made an ONNX dim_param ("seq", its reshapes to [0, -1, heads, head_dim] as
exporters write them) is compiled once without input shapes (kernels over the symbol,
docs/onnx-frontend.md "Dynamic shapes: kernels over symbolic dims") and run at each length L;
the same model compiled for L (--input_shape) and ONNX Runtime 1.30 (one intra-op thread) run
the same input in the same rounds. Prints, per length, the latencies, the symbolic compile's
ratio to the fixed compile and to ONNX Runtime, its two-thread time, and the largest
difference from ONNX Runtime's outputs. A benchmark, never a test.

usage: sequence_bench.py BUILD_DIR ORT_DIR [--lengths=16,64,128,256] [--runs=N] [--rounds=N]
  ORT_DIR holds node_modules/onnxruntime-node (npm install --ignore-scripts onnxruntime-node@1.30.0)
"""
import json
import math
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

from models_bench import median_ms, run

HERE = os.path.dirname(os.path.abspath(__file__))


def with_symbolic_sequence(source, target, seq):
    """The encoder with axis 1 of its input and output the dim_param seq."""
    model = onnx.load(source)
    for tensor in model.graph.initializer:
        if tensor.data_type != onnx.TensorProto.INT64:
            continue
        shape = numpy_helper.to_array(tensor)
        if shape.ndim == 1 and len(shape) >= 3 and shape[0] == 1 and shape[1] == seq:
            shape = shape.copy()
            shape[0], shape[1] = 0, -1  # copy the batch, infer the length
            tensor.CopyFrom(numpy_helper.from_array(shape, tensor.name))
    for value in list(model.graph.input) + list(model.graph.output):
        dim = value.type.tensor_type.shape.dim[1]
        dim.Clear()
        dim.dim_param = "seq"
    onnx.save(model, target)


def main():
    build, ort_dir = sys.argv[1], sys.argv[2]
    lengths, runs, rounds = [16, 64, 128, 256], 10, 2
    for arg in sys.argv[3:]:
        if arg.startswith("--lengths="):
            lengths = [int(v) for v in arg[len("--lengths="):].split(",")]
        elif arg.startswith("--runs="):
            runs = int(arg[len("--runs="):])
        elif arg.startswith("--rounds="):
            rounds = max(1, int(arg[len("--rounds="):]))
    kiln_run = os.path.join(build, "tools/kiln-run/kiln-run")
    work = tempfile.mkdtemp(prefix="kiln-sequence-")
    zoo = run([sys.executable, os.path.join(HERE, "model_zoo.py"), work, "encoder"])
    dims = [int(d) for d in zoo.split()[1].split("x")]  # 1 x seq x width
    model = os.path.join(work, "encoder.seq.onnx")
    with_symbolic_sequence(os.path.join(work, "encoder.onnx"), model, dims[1])
    env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
    print(f"encoder (width {dims[2]}), one thread unless marked 2t")
    print(f"{'length':>6} {'symbolic ms':>11} {'fixed ms':>9} {'ort ms':>8} {'/fixed':>7} "
          f"{'/ort':>6} {'2t ms':>7} {'fixed 2t':>8} {'max rel err':>11}")
    for length in lengths:
        shape = [1, length, dims[2]]
        # The input ort_latency.js builds too: x[i] = ((i * 7) % 255) / 255 - 0.5.
        index = np.arange(int(np.prod(shape)), dtype=np.int64)
        x = (((index * 7) % 255) / 255.0 - 0.5).astype(np.float32).reshape(shape)
        input_file = os.path.join(work, f"input{length}.npy")
        np.save(input_file, x)
        out_dir = os.path.join(work, f"out{length}")
        fixed = "--input_shape=input=" + "x".join(str(d) for d in shape)
        symbolic_ms = fixed_ms = ort_ms = two_ms = fixed_two_ms = math.inf
        for _ in range(rounds):
            one = [f"--benchmark={runs}", "--threads=1", "--kernel_profile=false"]
            two = [f"--benchmark={runs}", "--threads=2", "--kernel_profile=false"]
            symbolic_ms = min(symbolic_ms, median_ms(run(
                [kiln_run, model, f"--input={input_file}", f"--output_dir={out_dir}"] + one)))
            fixed_ms = min(fixed_ms, median_ms(run([kiln_run, model, f"--input={input_file}", fixed] + one)))
            two_ms = min(two_ms, median_ms(run([kiln_run, model, f"--input={input_file}"] + two)))
            fixed_two_ms = min(fixed_two_ms, median_ms(run(
                [kiln_run, model, f"--input={input_file}", fixed] + two)))
            ort = run(["node", os.path.join(HERE, "ort_latency.js"), model, str(runs),
                       "x".join(str(d) for d in shape)], env=env).split("\n")
            ort_ms = min(ort_ms, float(ort[0]))
        reference = np.array(json.loads(ort[1]), dtype=np.float64)
        ours = np.load(os.path.join(out_dir, os.listdir(out_dir)[0])).astype(np.float64).ravel()
        scale = max(np.abs(reference).max(), 1e-30)
        error = float(np.abs(ours - reference).max() / scale) if ours.size == reference.size else math.inf
        print(f"{length:6d} {symbolic_ms:11.2f} {fixed_ms:9.2f} {ort_ms:8.2f} "
              f"{symbolic_ms / fixed_ms:7.2f} {symbolic_ms / ort_ms:6.2f} {two_ms:7.2f} "
              f"{fixed_two_ms:8.2f} {error:11.2e}", flush=True)


if __name__ == "__main__":
    main()
