"""Writes small ONNX models for the frontend lit tests, built with the onnx
helper API (an independent producer: not Kiln's code).

usage: make_model.py KIND OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def expanded_activations():
    # Named Elu (one ONNX node -> several graph ops), an unnamed HardSigmoid,
    # and an initializer: every graph op must carry its layer's name.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])
    bias = numpy_helper.from_array(np.arange(4, dtype=np.float32), "bias")
    nodes = [
        helper.make_node("Elu", ["x"], ["e"], name="block1/elu", alpha=0.5),
        helper.make_node("HardSigmoid", ["e"], ["h"]),
        helper.make_node("Add", ["h", "bias"], ["y"], name="block1/add"),
    ]
    graph = helper.make_graph(nodes, "activations", [x], [y], [bias])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def unsupported():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"]),
        helper.make_node("Det", ["a"], ["b"]),
        helper.make_node("Det", ["b"], ["c"]),
        helper.make_node("GridSample", ["c", "c"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "unsupported", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


MODELS = {"expanded_activations": expanded_activations, "unsupported": unsupported}

if __name__ == "__main__":
    onnx.save(MODELS[sys.argv[1]](), sys.argv[2])
