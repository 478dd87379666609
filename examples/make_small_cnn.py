"""Writes a small CNN as an ONNX model (conv, batch norm, relu, pool, a
residual add, global pool, flatten, gemm), built with the onnx helper API.
Some nodes are named like a PyTorch export, some are unnamed, to show both
kinds of span. Used by scripts/demo.sh.

usage: make_small_cnn.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)


def weight(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)


inits = [
    weight("conv1.weight", 8, 3, 3, 3),
    weight("bn1.scale", 8), weight("bn1.bias", 8), weight("bn1.mean", 8),
    numpy_helper.from_array(np.ones(8, np.float32), "bn1.var"),
    weight("conv2.weight", 8, 8, 3, 3),
    weight("fc.weight", 10, 8), weight("fc.bias", 10),
]
nodes = [
    helper.make_node("Conv", ["input", "conv1.weight"], ["c1"], name="/conv1/Conv",
                     kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c1", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"],
                     ["b1"], name="/bn1/BatchNormalization"),
    helper.make_node("Relu", ["b1"], ["r1"]),
    helper.make_node("Conv", ["r1", "conv2.weight"], ["c2"], name="/conv2/Conv",
                     kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Add", ["c2", "r1"], ["s"], name="/residual/Add"),
    helper.make_node("MaxPool", ["s"], ["p"], name="/pool/MaxPool", kernel_shape=[2, 2],
                     strides=[2, 2]),
    helper.make_node("GlobalAveragePool", ["p"], ["g"]),
    helper.make_node("Flatten", ["g"], ["f"]),
    helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="/fc/Gemm",
                     transB=1),
]
graph = helper.make_graph(
    nodes, "small_cnn",
    [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, 16, 16])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="kiln-example")
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
