"""Writes a conformance case for a layer normalization written op by op, as ONNX exporters before
opset 17 write it (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add): the ONNX model
(random gamma and beta), a random input and the expected output computed here with NumPy in
float64, independently of Kiln, in the layout of the ONNX backend test data.

usage: decomposed_layer_norm.py CASE_DIR [--axes=A,B] [--square-by-mul] [--no-beta]
  --axes: the axes both means reduce (default -1); trailing axes fuse, others stay op by op
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from case_data import write_test_data

case = sys.argv[1]
options = sys.argv[2:]
axes = [-1]
for option in options:
    if option.startswith("--axes="):
        axes = [int(a) for a in option[len("--axes="):].split(",")]
square_by_mul = "--square-by-mul" in options
with_beta = "--no-beta" not in options
rng = np.random.default_rng(11)
SHAPE = (2, 6, 16)
EPS = 1e-5
# gamma and beta cover the dims from the first normalized one on (1 where a dim is not normalized)
first = min(a % len(SHAPE) for a in axes)
affine = tuple(SHAPE[d] if d in [a % len(SHAPE) for a in axes] else 1 for d in range(first, len(SHAPE)))
gamma = rng.uniform(0.5, 1.5, affine).astype(np.float32)
beta = rng.standard_normal(gamma.shape).astype(np.float32)

nodes = [
    helper.make_node("ReduceMean", ["x"], ["mu"], axes=axes, keepdims=1, name="ln/mean"),
    helper.make_node("Sub", ["x", "mu"], ["d"], name="ln/sub"),
    helper.make_node("Mul", ["d", "d"], ["sq"], name="ln/square") if square_by_mul else
    helper.make_node("Pow", ["d", "two"], ["sq"], name="ln/pow"),
    helper.make_node("ReduceMean", ["sq"], ["var"], axes=axes, keepdims=1, name="ln/var"),
    helper.make_node("Add", ["var", "eps"], ["shifted"], name="ln/add_eps"),
    helper.make_node("Sqrt", ["shifted"], ["std"], name="ln/sqrt"),
    helper.make_node("Div", ["d", "std"], ["n"], name="ln/div"),
    helper.make_node("Mul", ["n", "gamma"], ["scaled"], name="ln/gamma"),
]
if with_beta:
    nodes.append(helper.make_node("Add", ["scaled", "beta"], ["y"], name="ln/beta"))
else:
    nodes.append(helper.make_node("Identity", ["scaled"], ["y"], name="ln/out"))
initializers = {"two": np.array(2.0, np.float32), "eps": np.array(EPS, np.float32),
                "gamma": gamma, "beta": beta}
graph = helper.make_graph(
    nodes, "decomposed_layer_norm",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(SHAPE))],
    [numpy_helper.from_array(v, k) for k, v in initializers.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
os.makedirs(case, exist_ok=True)
onnx.save(model, os.path.join(case, "model.onnx"))

x = rng.standard_normal(SHAPE).astype(np.float32)
x64 = x.astype(np.float64)
mu = x64.mean(axis=tuple(axes), keepdims=True)
var = ((x64 - mu) ** 2).mean(axis=tuple(axes), keepdims=True)
y = (x64 - mu) / np.sqrt(var + EPS) * gamma.astype(np.float64)
if with_beta:
    y = y + beta.astype(np.float64)

write_test_data(case, [("x", x)], [("y", y.astype(np.float32))])
