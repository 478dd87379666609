"""Exits 0 when every tensor file after the first (.pb TensorProto or .npy) equals the first."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def load(path):
    if path.endswith(".npy"):
        return np.load(path)
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


expected = load(sys.argv[1])
for path in sys.argv[2:]:
    actual = load(path)
    if actual.shape != expected.shape or not np.allclose(actual, expected, rtol=1e-5, atol=1e-5):
        sys.exit(f"{path} differs from {sys.argv[1]}:\n{actual}\nexpected\n{expected}")
print("equal")
