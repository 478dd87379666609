"""Writes a conformance case for a squeeze-excitation block: the ONNX model (random weights),
a random input and the expected output computed here with NumPy, independently of Kiln, in the
layout of the ONNX backend test data.

  y = Conv1x1_proj(x * sigmoid(Conv1x1_up(relu(Conv1x1_down(GlobalAveragePool(x))))))

With --gated-output the gated activation x * gate is a second graph output (a second user of the
multiply, so FoldGateIntoWeights must leave it alone).

usage: se_block.py CASE_DIR [--gated-output]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from case_data import write_test_data

case = sys.argv[1]
gated_output = "--gated-output" in sys.argv[2:]
rng = np.random.default_rng(7)
C, SQUEEZE, OUT, H = 32, 8, 16, 16


def weights(*shape):
    return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


w_down, b_down = weights(SQUEEZE, C, 1, 1), weights(SQUEEZE)
w_up, b_up = weights(C, SQUEEZE, 1, 1), weights(C)
w_proj = weights(OUT, C, 1, 1)
initializers = {"down.weight": w_down, "down.bias": b_down, "up.weight": w_up, "up.bias": b_up,
                "proj.weight": w_proj}
nodes = [
    helper.make_node("GlobalAveragePool", ["x"], ["pooled"], name="se/pool"),
    helper.make_node("Conv", ["pooled", "down.weight", "down.bias"], ["down"], name="se/down"),
    helper.make_node("Relu", ["down"], ["down_relu"], name="se/relu"),
    helper.make_node("Conv", ["down_relu", "up.weight", "up.bias"], ["up"], name="se/up"),
    helper.make_node("Sigmoid", ["up"], ["gate"], name="se/gate"),
    helper.make_node("Mul", ["x", "gate"], ["gated"], name="se/mul"),
    helper.make_node("Conv", ["gated", "proj.weight"], ["y"], name="proj"),
]
graph = helper.make_graph(
    nodes, "se_block",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, H])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, OUT, H, H])] +
    ([helper.make_tensor_value_info("gated", TensorProto.FLOAT, [1, C, H, H])] if gated_output
     else []),
    [numpy_helper.from_array(v, k) for k, v in initializers.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
os.makedirs(case, exist_ok=True)
onnx.save(model, os.path.join(case, "model.onnx"))

x = rng.standard_normal((1, C, H, H)).astype(np.float32)
x64 = x.astype(np.float64)
pooled = x64.mean(axis=(2, 3))                                    # (1, C)
down = np.maximum(pooled @ w_down[:, :, 0, 0].T.astype(np.float64) + b_down, 0)
gate = 1 / (1 + np.exp(-(down @ w_up[:, :, 0, 0].T.astype(np.float64) + b_up)))
gated = x64 * gate[:, :, None, None]
y = np.einsum("nchw,oc->nohw", gated, w_proj[:, :, 0, 0].astype(np.float64))

outputs = [("y", y.astype(np.float32))]
if gated_output:
    outputs.append(("gated", gated.astype(np.float32)))
write_test_data(case, [("x", x)], outputs)
