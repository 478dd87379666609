"""Writes a conformance case's tensors in the layout of the ONNX backend test data:
CASE_DIR/test_data_set_0/input_<i>.pb and output_<i>.pb, each a serialized TensorProto."""
import os

from onnx import numpy_helper


def write_test_data(case, inputs, outputs):
    """inputs, outputs: lists of (name, numpy array) in graph order."""
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    for kind, tensors in (("input", inputs), ("output", outputs)):
        for i, (name, value) in enumerate(tensors):
            with open(os.path.join(data, f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(value, name).SerializeToString())
