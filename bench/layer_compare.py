#!/usr/bin/env python3
"""Kiln's kernels next to ONNX Runtime's nodes, layer by layer, for one model (a diagnostic for
the performance issue, never a CI gate).

Kiln's per-kernel times come from `kiln-run --benchmark` (one thread), ONNX Runtime's from its
profiler (bench/ort_profile.js, one intra-op thread). A kernel is matched to the ONNX Runtime
nodes whose names (less ORT's `_nchwc` / fusion suffixes) are among the ONNX layers in the
kernel's span (`kiln-opt --emit=loop` prints them as `# si=[...]`). Profiling slows ONNX Runtime
a little; compare rows, not totals. Usage:
  bench/layer_compare.py BUILD ORT_DIR MODEL.onnx [--dims=1x3x224x224] [--runs=30] [--rows=30]
ORT_DIR holds node_modules/onnxruntime-node (npm install --ignore-scripts onnxruntime-node@1.30.0).
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def ort_node_times(ort_dir, model, dims, runs):
    """Mean milliseconds per run of each ONNX Runtime node, and its op type."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
        out = subprocess.run(["node", os.path.join(HERE, "ort_profile.js"), model, str(runs), dims,
                              os.path.join(tmp, "profile")],
                             env=env, check=True, capture_output=True, text=True).stdout.strip()
        path = out.splitlines()[-1]
        if not os.path.isabs(path):
            path = (glob.glob(os.path.join(tmp, "profile*.json")) or [path])[0]
        events = json.load(open(path))
    total = collections.defaultdict(float)
    count = collections.Counter()
    op = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            name = e["name"][:-len("_kernel_time")]
            total[name] += e["dur"]
            count[name] += 1
            op[name] = e.get("args", {}).get("op_name", "?")
    runs_seen = max(count.values()) if count else 1
    return {n: total[n] / runs_seen / 1000 for n in total}, op


def kiln_kernel_times(build, model, runs):
    out = subprocess.run([os.path.join(build, "tools/kiln-run/kiln-run"), model,
                          f"--benchmark={runs}", "--threads=1", "--top_kernels=100000"],
                         check=True, capture_output=True, text=True).stdout
    times = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 5 and re.match(r"^[\d.]+$", parts[0]) and parts[-1].startswith("fused"):
            times[parts[-1]] = float(parts[0])
    return times


def kernel_layers(build, model):
    loop = subprocess.run([os.path.join(build, "tools/kiln-opt/kiln-opt"), model, "-O3",
                           "--emit=loop"], check=True, capture_output=True, text=True).stdout
    layers = {}
    for m in re.finditer(r"def (\w+)\(.*?# si=(\[[^\]]*\]|\S+)", loop):
        layers[m.group(1)] = m.group(2).strip("[]").split(", ")
    return layers


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build")
    parser.add_argument("ort_dir")
    parser.add_argument("model")
    parser.add_argument("--dims", default="1x3x224x224")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--rows", type=int, default=30)
    args = parser.parse_args()

    ort, ort_op = ort_node_times(args.ort_dir, args.model, args.dims, args.runs)
    kiln = kiln_kernel_times(args.build, args.model, args.runs)
    layers = kernel_layers(args.build, args.model)
    rows, matched = [], set()
    for kernel, ms in kiln.items():
        names = set(layers.get(kernel, []))
        nodes = [n for n in ort if re.sub(r"(_nchwc|/.*)$", "", n) in names]
        matched.update(nodes)
        rows.append((ms, sum(ort[n] for n in nodes), kernel, ",".join(nodes)))
    rows.sort(key=lambda r: r[1] - r[0])
    print(f"Kiln kernels {sum(r[0] for r in rows):.3f} ms, ONNX Runtime nodes (profiled) "
          f"{sum(ort.values()):.3f} ms")
    print(f"{'kiln ms':>8} {'ort ms':>8} {'gap':>7}  kernel  <- ONNX Runtime nodes")
    for ms, ort_ms, kernel, nodes in sorted(rows, key=lambda r: r[1] - r[0])[:args.rows]:
        print(f"{ms:8.3f} {ort_ms:8.3f} {ms - ort_ms:+7.3f}  {kernel}  <- {nodes[:80]}")
    unmatched = {n: t for n, t in ort.items() if n not in matched}
    by_op = collections.defaultdict(float)
    for n, t in unmatched.items():
        by_op[ort_op.get(n, "?")] += t
    print("ONNX Runtime nodes no kernel matched: " +
          ", ".join(f"{op} {t:.3f} ms" for op, t in sorted(by_op.items(), key=lambda x: -x[1])))


if __name__ == "__main__":
    sys.exit(main())
