"""Writes a conformance case for examples/make_small_cnn.py's model: a random
input and the expected logits computed here with NumPy, independently of
Kiln (direct convolution loops, batch norm, relu, max pool, global average
pool, gemm), in the layout of the ONNX backend test data.

usage: small_cnn_reference.py CASE_DIR   (CASE_DIR/model.onnx must exist)
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

from case_data import write_test_data

case = sys.argv[1]
model = onnx.load(os.path.join(case, "model.onnx"))
w = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def conv3x3_pad1(x, weight):
    n, c, h, wd = x.shape
    padded = np.zeros((n, c, h + 2, wd + 2), np.float64)
    padded[:, :, 1:-1, 1:-1] = x
    out = np.zeros((n, weight.shape[0], h, wd), np.float64)
    for i in range(3):
        for j in range(3):
            patch = padded[:, :, i:i + h, j:j + wd]  # (n, c, h, w)
            out += np.einsum("nchw,oc->nohw", patch, weight[:, :, i, j])
    return out


x = np.random.default_rng(1).standard_normal((2, 3, 16, 16)).astype(np.float32)
c1 = conv3x3_pad1(x.astype(np.float64), w["conv1.weight"].astype(np.float64))
scale = w["bn1.scale"] / np.sqrt(w["bn1.var"] + 1e-5)
b1 = (c1 - w["bn1.mean"][None, :, None, None]) * scale[None, :, None, None] + \
    w["bn1.bias"][None, :, None, None]
r1 = np.maximum(b1, 0)
s = conv3x3_pad1(r1, w["conv2.weight"].astype(np.float64)) + r1
p = s.reshape(2, 8, 8, 2, 8, 2).max(axis=(3, 5))
g = p.mean(axis=(2, 3))
logits = g @ w["fc.weight"].T.astype(np.float64) + w["fc.bias"]

write_test_data(case, [("input", x)], [("logits", logits.astype(np.float32))])
