"""Checks the provenance property on kiln-opt's IR JSON: every call node of
every function (fused ones included) carries at least one span, and every
source name in every span is a node name (or <op_type>_<k> for an unnamed
node), a graph input or an initializer of the ONNX model. Names come from the
model itself, read with the onnx package, not from Kiln.

usage: check_provenance.py MODEL.onnx IR.json
"""
import json
import sys

import onnx

model = onnx.load(sys.argv[1])
graph = model.graph
names = {i.name for i in graph.input} | {t.name for t in graph.initializer}
for k, node in enumerate(graph.node):
    names.add(node.name if node.name else f"{node.op_type}_{k}")

with open(sys.argv[2]) as f:
    ir = json.load(f)

calls = unspanned = 0
unknown = set()
for function in ir["functions"]:
    for node in function["nodes"]:
        for name in node["spans"]:
            if name not in names:
                unknown.add(name)
        if node["kind"] == "Call":
            calls += 1
            if not node["spans"]:
                unspanned += 1
print(f"calls: {calls}, without spans: {unspanned}, unknown source names: {sorted(unknown)}")
sys.exit(1 if unspanned or unknown or calls == 0 else 0)
