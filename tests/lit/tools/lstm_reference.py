"""The ONNX LSTM spec's equations in NumPy (float64), an oracle independent of Kiln: reads the
model's W, R, B, runs both directions over input X and compares with Kiln's Y and Y_h (.npy).
usage: lstm_reference.py MODEL.onnx X.npy Y.npy Y_H.npy  -> prints the largest abs error."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def main():
    model = onnx.load(sys.argv[1])
    weights = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    x = np.load(sys.argv[2]).astype(np.float64)  # [steps, batch, input]
    w, r, b = weights["W"], weights["R"], weights["B"]
    hidden = r.shape[2]
    steps, batch = x.shape[0], x.shape[1]
    y = np.zeros((steps, 2, batch, hidden))
    y_h = np.zeros((2, batch, hidden))
    for d in range(2):
        h = np.zeros((batch, hidden))
        c = np.zeros((batch, hidden))
        order = range(steps) if d == 0 else range(steps - 1, -1, -1)
        for t in order:
            gates = x[t] @ w[d].T + h @ r[d].T + b[d][:4 * hidden] + b[d][4 * hidden:]
            i, o, f, g = np.split(gates, 4, axis=1)  # ONNX's gate order: i, o, f, c
            c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
            h = sigmoid(o) * np.tanh(c)
            y[t, d] = h
        y_h[d] = h
    error = max(np.abs(np.load(sys.argv[3]) - y).max(), np.abs(np.load(sys.argv[4]) - y_h).max())
    print(f"largest abs error against the spec's equations: {error:.1e}")
    print("match" if error < 1e-5 else "MISMATCH")


if __name__ == "__main__":
    main()
