#!/usr/bin/python3
"""Writes the example model: y = relu(2 x + 1) over a float[4] input (usage: make_model.py OUT)."""
import sys
from onnx import TensorProto, helper
two = helper.make_tensor("two", TensorProto.FLOAT, [1], [2.0])
one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
graph = helper.make_graph(
    [helper.make_node("Mul", ["x", "two"], ["scaled"], name="scale"),
     helper.make_node("Add", ["scaled", "one"], ["shifted"], name="shift"),
     helper.make_node("Relu", ["shifted"], ["y"], name="relu")],
    "affine_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [two, one])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
open(sys.argv[1], "wb").write(model.SerializeToString())
