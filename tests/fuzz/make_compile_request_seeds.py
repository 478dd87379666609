#!/usr/bin/env python3
"""Writes the seed corpus of the CompileRequest fuzzer (tests/fuzz/corpus/
compile_request/): serialized kiln.v1.CompileRequest messages covering ONNX
and graph-text models, pipelines, config, input shapes and artifacts.

Run with the build's generated Python stubs on the path:
  PYTHONPATH=build/python /usr/bin/python3 tests/fuzz/make_compile_request_seeds.py
"""
import os

import onnx
from onnx import TensorProto, helper

from kiln.v1 import compiler_pb2 as pb

ROOT = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(ROOT, "corpus", "compile_request")


def small_onnx():
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("ReduceMean", ["r"], ["y"], name="pool", axes=[2, 3], keepdims=0),
    ]
    weights = helper.make_tensor("w", TensorProto.FLOAT, [2, 1, 3, 3], [0.5] * 18)
    graph = helper.make_graph(
        nodes, "seed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])], [weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def constant_of_shape_onnx():
    shape = helper.make_tensor("shape", TensorProto.INT64, [1], [16])
    nodes = [
        helper.make_node("ConstantOfShape", ["shape"], ["f"], name="fill",
                         value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
        helper.make_node("ReduceMax", ["f"], ["y"], name="max", keepdims=0),
    ]
    graph = helper.make_graph(nodes, "seed", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], [shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {}
    r = pb.CompileRequest(onnx=small_onnx(), name="small")
    r.input_shapes.add(name="x", dims=[1, 1, 4, 4])
    seeds["onnx_input_shapes"] = r
    r = pb.CompileRequest(onnx=constant_of_shape_onnx(), name="fill")
    r.pass_options.opt_level = 3
    seeds["onnx_folding"] = r
    r = pb.CompileRequest(onnx=small_onnx(), name="pipeline")
    r.input_shapes.add(name="x", dims=[2, 1, 4, 4])
    r.pass_options.pipeline = "SimplifyInference,Sequential(InferType,FoldConstant),FuseOps{fuse_opt_level=1}"
    r.pass_options.config["te.keep_schedule_record"] = "false"
    r.artifacts.append(pb.LOOP_IR)
    seeds["onnx_pipeline"] = r
    r = pb.CompileRequest(name="text", graph_ir_text=(
        "def @main(%x: Tensor[(2, 3), float32]) {\n"
        "  %0 = nn.relu(%x) /* si=relu */;\n"
        "  %1 = shape_of(%0) /* si=shape */;\n"
        "  (add(%0, 1f), %1)\n"
        "}\n"))
    r.pass_options.opt_level = 2
    r.pass_options.disabled_passes.append("FoldScaleAxis")
    seeds["graph_text"] = r
    for name, request in seeds.items():
        with open(os.path.join(OUT, name + ".bin"), "wb") as f:
            f.write(request.SerializeToString())


if __name__ == "__main__":
    main()
