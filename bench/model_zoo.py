"""The model families of the performance issue, built with the onnx helper API (random weights,
He-scaled, so activations keep their scale and outputs stay comparable between runtimes):

  resnet50      bottleneck residual blocks (1x1 / 3x3 / 1x1, strided downsampling)
  mobilenetv2   inverted residuals: 1x1 expand, 3x3 depthwise, 1x1 project, ReLU6 (Clip)
  efficientnet  MBConv with squeeze-excitation (GlobalAveragePool, 1x1, Sigmoid, Mul) and swish
  mobilenetv3   inverted residuals with hard-swish and squeeze-excitation (HardSigmoid)
  shufflenet    channel split (Split), shuffle (Reshape/Transpose/Reshape), Concat
  densenet      dense blocks: every layer's output concatenated onto the block's input
  encoder       transformer encoder layers: MatMul, Softmax, LayerNormalization, Gelu as Erf

usage: model_zoo.py [--small] OUT_DIR [NAME ...]   (writes OUT_DIR/NAME.onnx and prints NAME
INPUT_DIMS MACs per line: the input every model takes is 'input')

--small builds every family whole (every layer, every block) on a 32x32 image and a 16-token,
64-wide, 2-layer encoder: the whole networks the numerics check interprets in CI.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


# The image side and the encoder's (sequence, width, heads, feed-forward, layers); --small
# replaces them.
RESOLUTION = 224
ENCODER = (128, 256, 4, 1024, 4)


class Builder:
    def __init__(self, name, input_dims):
        self.name = name
        self.nodes, self.inits = [], []
        self.counter = 0
        self.macs = 0
        self.rng = np.random.default_rng(7)
        self.input_dims = input_dims
        self.inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, input_dims)]

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def weight(self, shape, lo=None, hi=None):
        if lo is None:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            hi = np.sqrt(6.0 / fan_in)
            lo = -hi
        name = self.fresh("w")
        values = self.rng.uniform(lo, hi, size=shape).astype(np.float32)
        self.inits.append(numpy_helper.from_array(values, name))
        return name

    def const(self, values, dtype=np.int64):
        name = self.fresh("c")
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def node(self, op, inputs, outputs=1, **attrs):
        names = [self.fresh(op.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=names[0], **attrs))
        return names if outputs > 1 else names[0]

    def conv(self, x, cin, cout, k, hw, stride=1, groups=1, bias=True):
        """`hw` is the input's spatial size; returns (output, output size)."""
        w = self.weight([cout, cin // groups, k, k])
        inputs = [x, w] + ([self.weight([cout], -0.1, 0.1)] if bias else [])
        pad = k // 2
        out_hw = (hw + 2 * pad - k) // stride + 1
        self.macs += cout * (cin // groups) * k * k * out_hw * out_hw
        y = self.node("Conv", inputs, kernel_shape=[k, k], strides=[stride, stride],
                      pads=[pad] * 4, group=groups)
        return y, out_hw

    def bn(self, x, c):
        return self.node("BatchNormalization", [x, self.weight([c], 0.5, 1.0),
                                                self.weight([c], -0.1, 0.1),
                                                self.weight([c], -0.1, 0.1),
                                                self.weight([c], 0.5, 1.5)])

    def relu(self, x):
        return self.node("Relu", [x])

    def relu6(self, x):
        return self.node("Clip", [x, self.const(0.0, np.float32), self.const(6.0, np.float32)])

    def swish(self, x):
        return self.node("Mul", [x, self.node("Sigmoid", [x])])

    def hardswish(self, x):
        return self.node("HardSwish", [x])

    def se(self, x, c, squeeze, gate="Sigmoid"):
        pooled = self.node("GlobalAveragePool", [x])
        s, _ = self.conv(pooled, c, squeeze, 1, 1)
        s = self.relu(s)
        e, _ = self.conv(s, squeeze, c, 1, 1)
        return self.node("Mul", [x, self.node(gate, [e])])

    def stem(self, cout, k):
        """conv k x k stride 2, BN, ReLU, 3x3 stride-2 max pool on the input image."""
        x, hw = self.conv("input", 3, cout, k, RESOLUTION, stride=2)
        x = self.relu(self.bn(x, cout))
        x = self.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        return x, hw // 2

    def classifier(self, x, c, classes=1000):
        pooled = self.node("GlobalAveragePool", [x])
        flat = self.node("Flatten", [pooled])
        self.macs += c * classes
        return self.node("Gemm", [flat, self.weight([classes, c]), self.weight([classes], -0.1, 0.1)],
                         transB=1)

    def model(self, output):
        # The output's shape from ONNX's own shape inference (on a model whose output is the
        # last value, without a declared shape).
        graph = helper.make_graph(self.nodes, self.name, self.inputs, [], self.inits)
        probe = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        inferred = onnx.shape_inference.infer_shapes(probe).graph.value_info
        output_info = next(v for v in inferred if v.name == output)
        graph = helper.make_graph(self.nodes, self.name, self.inputs, [output_info], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        return model


def resnet50():
    b = Builder("resnet50", [1, 3, RESOLUTION, RESOLUTION])
    x, hw = b.stem(64, 7)
    cin = 64
    for stage, blocks in enumerate([3, 4, 6, 3]):
        width = 64 << stage
        for i in range(blocks):
            stride = 2 if i == 0 and stage > 0 else 1
            y, _ = b.conv(x, cin, width, 1, hw)
            y = b.relu(b.bn(y, width))
            y, out_hw = b.conv(y, width, width, 3, hw, stride)
            y = b.relu(b.bn(y, width))
            y, _ = b.conv(y, width, width * 4, 1, out_hw)
            y = b.bn(y, width * 4)
            if i == 0:
                s, _ = b.conv(x, cin, width * 4, 1, hw, stride)
                s = b.bn(s, width * 4)
            else:
                s = x
            x = b.relu(b.node("Add", [y, s]))
            cin, hw = width * 4, out_hw
    return b, b.classifier(x, cin)


def inverted_residuals(name, settings, activation, se_ratio=0.0, se_gate="Sigmoid", head=1280):
    """settings: (expand, out channels, repeats, stride, kernel) per stage, MobileNetV2 style."""
    b = Builder(name, [1, 3, RESOLUTION, RESOLUTION])
    x, hw = b.conv("input", 3, 32, 3, RESOLUTION, stride=2)
    x = activation(b, b.bn(x, 32))
    cin = 32
    for expand, cout, repeats, first_stride, k in settings:
        for i in range(repeats):
            stride = first_stride if i == 0 else 1
            hidden = cin * expand
            y = x
            if expand != 1:
                y, _ = b.conv(y, cin, hidden, 1, hw)
                y = activation(b, b.bn(y, hidden))
            y, out_hw = b.conv(y, hidden, hidden, k, hw, stride, groups=hidden)
            y = activation(b, b.bn(y, hidden))
            if se_ratio > 0:
                y = b.se(y, hidden, max(8, int(cin * se_ratio)), se_gate)
            y, _ = b.conv(y, hidden, cout, 1, out_hw)
            y = b.bn(y, cout)
            if stride == 1 and cin == cout:
                y = b.node("Add", [y, x])
            x, cin, hw = y, cout, out_hw
    x, _ = b.conv(x, cin, head, 1, hw)
    x = activation(b, b.bn(x, head))
    return b, b.classifier(x, head)


MOBILENETV2 = [(1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 32, 3, 2, 3), (6, 64, 4, 2, 3),
               (6, 96, 3, 1, 3), (6, 160, 3, 2, 3), (6, 320, 1, 1, 3)]
EFFICIENTNET = [(1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3),
                (6, 112, 3, 1, 5), (6, 192, 4, 2, 5), (6, 320, 1, 1, 3)]
MOBILENETV3 = [(1, 16, 1, 2, 3), (4, 24, 2, 2, 3), (3, 40, 3, 2, 5), (6, 80, 4, 2, 3),
               (6, 112, 2, 1, 3), (6, 160, 3, 2, 5)]


def mobilenetv2():
    return inverted_residuals("mobilenetv2", MOBILENETV2, lambda b, x: b.relu6(x))


def efficientnet():
    return inverted_residuals("efficientnet", EFFICIENTNET, lambda b, x: b.swish(x), se_ratio=0.25)


def mobilenetv3():
    return inverted_residuals("mobilenetv3", MOBILENETV3, lambda b, x: b.hardswish(x),
                              se_ratio=0.25, se_gate="HardSigmoid", head=960)


def shufflenet():
    b = Builder("shufflenet", [1, 3, RESOLUTION, RESOLUTION])
    x, hw = b.stem(24, 3)
    cin = 24

    def branch(y, c, in_hw, stride, cin_branch):
        y, _ = b.conv(y, cin_branch, c, 1, in_hw)
        y = b.relu(b.bn(y, c))
        y, out_hw = b.conv(y, c, c, 3, in_hw, stride, groups=c)
        y = b.bn(y, c)
        y, _ = b.conv(y, c, c, 1, out_hw)
        return b.relu(b.bn(y, c)), out_hw

    def shuffle(y, c, size):
        y = b.node("Reshape", [y, b.const([1, 2, c // 2, size, size])])
        y = b.node("Transpose", [y], perm=[0, 2, 1, 3, 4])
        return b.node("Reshape", [y, b.const([1, c, size, size])])

    for cout, repeats in [(116, 4), (232, 8), (464, 4)]:
        half = cout // 2
        # Downsampling unit: both branches see the whole input.
        left, out_hw = b.conv(x, cin, cin, 3, hw, 2, groups=cin)
        left = b.bn(left, cin)
        left, _ = b.conv(left, cin, half, 1, out_hw)
        left = b.relu(b.bn(left, half))
        right, _ = branch(x, half, hw, 2, cin)
        x = shuffle(b.node("Concat", [left, right], axis=1), cout, out_hw)
        hw, cin = out_hw, cout
        for _ in range(repeats - 1):
            keep, work = b.node("Split", [x, b.const([half, half])], outputs=2, axis=1)
            work, _ = branch(work, half, hw, 1, half)
            x = shuffle(b.node("Concat", [keep, work], axis=1), cout, hw)
    x, _ = b.conv(x, cin, 1024, 1, hw)
    x = b.relu(b.bn(x, 1024))
    return b, b.classifier(x, 1024)


def densenet():
    b = Builder("densenet", [1, 3, RESOLUTION, RESOLUTION])
    x, hw = b.stem(64, 7)
    c, growth = 64, 32
    for block, layers in enumerate([6, 12, 24, 16]):
        for _ in range(layers):
            y = b.relu(b.bn(x, c))
            y, _ = b.conv(y, c, 4 * growth, 1, hw, bias=False)
            y = b.relu(b.bn(y, 4 * growth))
            y, _ = b.conv(y, 4 * growth, growth, 3, hw, bias=False)
            x = b.node("Concat", [x, y], axis=1)
            c += growth
        if block < 3:
            x = b.relu(b.bn(x, c))
            x, _ = b.conv(x, c, c // 2, 1, hw, bias=False)
            c //= 2
            x = b.node("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])
            hw //= 2
    x = b.relu(b.bn(x, c))
    return b, b.classifier(x, c)


def encoder():
    seq, d, heads, ff, layers = ENCODER
    b = Builder("encoder", [1, seq, d])
    x = "input"
    head_dim = d // heads

    def linear(y, fan_in, fan_out):
        # x @ W + b with W stored (fan_in, fan_out), as exporters write it.
        b.macs += seq * fan_in * fan_out
        hi = np.sqrt(6.0 / fan_in)
        w = b.fresh("w")
        b.inits.append(numpy_helper.from_array(
            b.rng.uniform(-hi, hi, size=(fan_in, fan_out)).astype(np.float32), w))
        return b.node("Add", [b.node("MatMul", [y, w]), b.weight([fan_out], -0.1, 0.1)])

    def layer_norm(y):
        return b.node("LayerNormalization", [y, b.weight([d], 0.5, 1.0), b.weight([d], -0.1, 0.1)],
                      axis=-1)

    for _ in range(layers):
        q, k, v = (linear(x, d, d) for _ in range(3))

        def heads_of(y):
            y = b.node("Reshape", [y, b.const([1, seq, heads, head_dim])])
            return b.node("Transpose", [y], perm=[0, 2, 1, 3])

        q, k, v = heads_of(q), heads_of(k), heads_of(v)
        kt = b.node("Transpose", [k], perm=[0, 1, 3, 2])
        b.macs += 2 * heads * seq * seq * head_dim
        scores = b.node("Div", [b.node("MatMul", [q, kt]),
                                b.const(np.sqrt(head_dim), np.float32)])
        attn = b.node("MatMul", [b.node("Softmax", [scores], axis=-1), v])
        attn = b.node("Reshape", [b.node("Transpose", [attn], perm=[0, 2, 1, 3]),
                                  b.const([1, seq, d])])
        x = layer_norm(b.node("Add", [x, linear(attn, d, d)]))
        h = linear(x, d, ff)
        # Gelu as PyTorch exports it: x * 0.5 * (1 + erf(x / sqrt(2))).
        g = b.node("Erf", [b.node("Div", [h, b.const(np.sqrt(2.0), np.float32)])])
        g = b.node("Mul", [b.node("Mul", [h, b.node("Add", [g, b.const(1.0, np.float32)])]),
                           b.const(0.5, np.float32)])
        x = layer_norm(b.node("Add", [x, linear(g, ff, d)]))
    return b, x


MODELS = {"resnet50": resnet50, "mobilenetv2": mobilenetv2, "efficientnet": efficientnet,
          "mobilenetv3": mobilenetv3, "shufflenet": shufflenet, "densenet": densenet,
          "encoder": encoder}


def main():
    global RESOLUTION, ENCODER
    args = sys.argv[1:]
    if args and args[0] == "--small":
        RESOLUTION, ENCODER = 32, (16, 64, 4, 128, 2)
        args = args[1:]
    out_dir, names = args[0], args[1:] or list(MODELS)
    os.makedirs(out_dir, exist_ok=True)
    for name in names:
        builder, output = MODELS[name]()
        model = builder.model(output)
        onnx.checker.check_model(model)
        onnx.save(model, f"{out_dir}/{name}.onnx")
        dims = "x".join(str(d) for d in builder.input_dims)
        print(name, dims, builder.macs)


if __name__ == "__main__":
    main()
