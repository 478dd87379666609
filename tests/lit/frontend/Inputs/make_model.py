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
        helper.make_node("ImageDecoder", ["a"], ["b"]),
        helper.make_node("ImageDecoder", ["b"], ["c"]),
        helper.make_node("Multinomial", ["c"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "unsupported", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


def encoder():
    # One transformer encoder layer as PyTorch exports it: named nodes
    # (/layer/attn/...), unnamed ones, initializers, a symbolic sequence
    # length, LayerNormalization, Softmax, MatMul, Gelu-as-Erf.
    d, heads, ff = 16, 2, 32
    rng = np.random.default_rng(1)

    def w(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)

    def c(name, values, dtype=np.int64):
        return numpy_helper.from_array(np.array(values, dtype=dtype), name)

    inits = [w("q.weight", d, d), w("k.weight", d, d), w("v.weight", d, d), w("o.weight", d, d),
             w("ln1.weight", d), w("ln1.bias", d), w("ff1.weight", d, ff), w("ff1.bias", ff),
             w("ff2.weight", ff, d), w("ff2.bias", d), w("ln2.weight", d), w("ln2.bias", d),
             c("heads_shape", [1, -1, heads, d // heads]), c("merge_shape", [1, -1, d]),
             numpy_helper.from_array(np.array(1 / np.sqrt(d // heads), np.float32), "scale"),
             numpy_helper.from_array(np.array(np.sqrt(0.5), np.float32), "rsqrt2"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")]
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "q.weight"], ["q"], name="/layer/attn/q/MatMul"),
        n("MatMul", ["x", "k.weight"], ["k"], name="/layer/attn/k/MatMul"),
        n("MatMul", ["x", "v.weight"], ["v"], name="/layer/attn/v/MatMul"),
        n("Reshape", ["q", "heads_shape"], ["q4"]),
        n("Reshape", ["k", "heads_shape"], ["k4"]),
        n("Reshape", ["v", "heads_shape"], ["v4"]),
        n("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]),
        n("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        n("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
        n("MatMul", ["qt", "kt"], ["scores"], name="/layer/attn/MatMul"),
        n("Mul", ["scores", "scale"], ["scaled"], name="/layer/attn/Mul"),
        n("Softmax", ["scaled"], ["probs"], name="/layer/attn/Softmax", axis=-1),
        n("MatMul", ["probs", "vt"], ["ctx"], name="/layer/attn/MatMul_1"),
        n("Transpose", ["ctx"], ["ctxt"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ctxt", "merge_shape"], ["merged"]),
        n("MatMul", ["merged", "o.weight"], ["attn"], name="/layer/attn/out/MatMul"),
        n("Add", ["x", "attn"], ["res1"], name="/layer/Add"),
        n("LayerNormalization", ["res1", "ln1.weight", "ln1.bias"], ["h1"], name="/layer/ln1",
          axis=-1, epsilon=1e-5),
        n("MatMul", ["h1", "ff1.weight"], ["f1"], name="/layer/ff1/MatMul"),
        n("Add", ["f1", "ff1.bias"], ["f1b"], name="/layer/ff1/Add"),
        n("Mul", ["f1b", "rsqrt2"], ["g1"]),
        n("Erf", ["g1"], ["g2"]),
        n("Add", ["g2", "one"], ["g3"]),
        n("Mul", ["f1b", "g3"], ["g4"]),
        n("Mul", ["g4", "half"], ["gelu"], name="/layer/gelu/Mul_1"),
        n("MatMul", ["gelu", "ff2.weight"], ["f2"], name="/layer/ff2/MatMul"),
        n("Add", ["f2", "ff2.bias"], ["f2b"], name="/layer/ff2/Add"),
        n("Add", ["h1", "f2b"], ["res2"], name="/layer/Add_1"),
        n("LayerNormalization", ["res2", "ln2.weight", "ln2.bias"], ["y"], name="/layer/ln2",
          axis=-1, epsilon=1e-5),
    ]
    graph = helper.make_graph(
        nodes, "encoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "seq", d])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def cnn():
    rng = np.random.default_rng(2)

    def w(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)

    inits = [w("conv1.weight", 8, 3, 3, 3), w("bn.scale", 8), w("bn.bias", 8), w("bn.mean", 8),
             numpy_helper.from_array(np.ones(8, np.float32), "bn.var"),
             w("conv2.weight", 8, 8, 1, 1), w("conv2.bias", 8), w("fc.weight", 4, 8),
             w("fc.bias", 4)]
    n = helper.make_node
    nodes = [
        n("Conv", ["img", "conv1.weight"], ["c1"], name="/conv1/Conv", kernel_shape=[3, 3],
          pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c1", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["b1"]),
        n("Relu", ["b1"], ["r1"]),
        n("Conv", ["r1", "conv2.weight", "conv2.bias"], ["c2"], name="/conv2/Conv"),
        n("Add", ["c2", "r1"], ["s"]),
        n("AveragePool", ["s"], ["p"], name="/pool", kernel_shape=[2, 2], strides=[2, 2]),
        n("GlobalMaxPool", ["p"], ["g"]),
        n("Flatten", ["g"], ["f"]),
        n("Gemm", ["f", "fc.weight", "fc.bias"], ["logits"], name="/fc/Gemm", transB=1),
        n("Softmax", ["logits"], ["y"], name="/softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("img", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def sequence_input():
    seq = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("SequenceLength", ["s"], ["n"], name="length"),
        helper.make_node("ConcatFromSequence", ["s"], ["y"], name="concat", axis=0),
    ]
    graph = helper.make_graph(
        nodes, "sequence_input", [seq],
        [helper.make_tensor_value_info("n", TensorProto.INT64, []),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def optional_input():
    opt = helper.make_value_info(
        "o", helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))
    nodes = [helper.make_node("OptionalHasElement", ["o"], ["has"], name="has")]
    graph = helper.make_graph(nodes, "optional_input", [opt],
                              [helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


def declared_reshape():
    # The shape is a graph input (known only at run time); the output declares [3, 1, 2].
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    shape = helper.make_tensor_value_info("shape", TensorProto.INT64, [3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 1, 2])
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")]
    graph = helper.make_graph(nodes, "declared_reshape", [x, shape], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def undeclared_reshape():
    model = declared_reshape()
    model.graph.output[0].type.tensor_type.ClearField("shape")
    return model


def attention_batch():
    # A self-attention block as torch.onnx.export writes it with dynamic_axes={"x": {0: "batch"}}:
    # the head split and merge reshape to shapes built from Shape(x)[0].
    rng = np.random.default_rng(3)
    length, width, heads = 16, 32, 4

    def w(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)

    def ints(name, values):
        return numpy_helper.from_array(np.array(values, dtype=np.int64), name)

    inits = [w("wq", width, width), w("wk", width, width), w("wv", width, width),
             w("wo", width, width), w("gamma", width), w("beta", width), ints("zero", [0]),
             ints("split_tail", [length, heads, width // heads]), ints("merge_tail", [length, width]),
             numpy_helper.from_array(np.array((width // heads) ** -0.5, np.float32), "scale")]
    n = helper.make_node
    nodes = [n("Shape", ["x"], ["s"], name="/shape"),
             n("Gather", ["s", "zero"], ["nb"], axis=0, name="/batch"),
             n("Concat", ["nb", "split_tail"], ["split_shape"], axis=0, name="/split_shape"),
             n("Concat", ["nb", "merge_tail"], ["merge_shape"], axis=0, name="/merge_shape")]
    for p in "qkv":
        nodes += [n("MatMul", ["x", "w" + p], [p], name=f"/{p}/MatMul"),
                  n("Reshape", [p, "split_shape"], [p + "r"], name=f"/{p}/Reshape"),
                  n("Transpose", [p + "r"], [p + "t"], perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3],
                    name=f"/{p}/Transpose")]
    nodes += [n("MatMul", ["qt", "kt"], ["scores"], name="/scores"),
              n("Mul", ["scores", "scale"], ["scaled"], name="/scaled"),
              n("Softmax", ["scaled"], ["probs"], axis=-1, name="/softmax"),
              n("MatMul", ["probs", "vt"], ["context"], name="/context"),
              n("Transpose", ["context"], ["merged"], perm=[0, 2, 1, 3], name="/merge/Transpose"),
              n("Reshape", ["merged", "merge_shape"], ["flat"], name="/merge/Reshape"),
              n("MatMul", ["flat", "wo"], ["o"], name="/out/MatMul"),
              n("Add", ["o", "x"], ["residual"], name="/residual"),
              n("LayerNormalization", ["residual", "gamma", "beta"], ["y"], axis=-1, name="/norm"),
              n("ReduceMean", ["y"], ["pooled"], axes=[1], keepdims=0, name="/pool")]
    graph = helper.make_graph(
        nodes, "attention", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", length, width])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", width])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def nonzero():
    # torch.nonzero as torch.onnx.export writes it: NonZero then Transpose, the output's row
    # count a symbolic dim.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, ["count", 2])
    nodes = [helper.make_node("NonZero", ["x"], ["nz"], name="/NonZero"),
             helper.make_node("Transpose", ["nz"], ["y"], name="/Transpose")]
    graph = helper.make_graph(nodes, "nonzero", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def long_lstm():
    # A bidirectional LSTM over 3,000 steps (hidden 4, input 2) as torch.onnx.export writes
    # nn.LSTM: weights as initializers, gates i, o, f, c.
    steps, hidden, inputs = 3000, 4, 2
    k = np.arange(2 * 4 * hidden * (inputs + hidden + 2), dtype=np.float64)
    values = (0.5 * np.sin(0.37 * k)).astype(np.float32)
    w = values[:2 * 4 * hidden * inputs].reshape(2, 4 * hidden, inputs)
    r = values[w.size:w.size + 2 * 4 * hidden * hidden].reshape(2, 4 * hidden, hidden)
    b = values[w.size + r.size:].reshape(2, 8 * hidden)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"),
             numpy_helper.from_array(b, "B")]
    node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y", "y_h"], hidden_size=hidden,
                            direction="bidirectional", name="/lstm/LSTM")
    graph = helper.make_graph(
        [node], "long_lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, 1, inputs])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [steps, 2, 1, hidden]),
         helper.make_tensor_value_info("y_h", TensorProto.FLOAT, [2, 1, hidden])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


MODELS = {"expanded_activations": expanded_activations, "unsupported": unsupported,
          "encoder": encoder, "cnn": cnn, "sequence_input": sequence_input,
          "declared_reshape": declared_reshape, "undeclared_reshape": undeclared_reshape,
          "attention_batch": attention_batch,
          "optional_input": optional_input, "nonzero": nonzero, "long_lstm": long_lstm}

if __name__ == "__main__":
    onnx.save(MODELS[sys.argv[1]](), sys.argv[2])
