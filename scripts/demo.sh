#!/usr/bin/env bash
# Kiln demo: bootstraps, builds kiln-opt and kiln-conformance, prints the bundled example graph
# (examples/resnet_block.kir) in the three output formats, imports a small ONNX CNN and shows
# its spans, lowers it to loop IR (spans on every statement), prints one kernel's schedule
# record, and runs a slice of the ONNX backend tests end to end through the interpreter. It
# becomes the service demo once kilnd exists.
#
# Environment: KILN_BUILD_DIR (default build/), KILN_JOBS (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

BUILD="${KILN_BUILD_DIR:-build}"
JOBS="${KILN_JOBS:-2}"
EXAMPLE=examples/resnet_block.kir

bash "$ROOT/scripts/bootstrap.sh"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target kiln-opt kiln-conformance

KILN_OPT="$BUILD/tools/kiln-opt/kiln-opt"

echo
echo "== kiln-opt $EXAMPLE   (parse, then print the canonical graph text)"
"$KILN_OPT" "$EXAMPLE"

echo
echo "== kiln-opt $EXAMPLE --format=script   (the same Doc tree, Python-like renderer)"
"$KILN_OPT" "$EXAMPLE" --format=script

echo
echo "== kiln-opt $EXAMPLE --format=json | head -40   (machine-readable IR, docs/ir-json.md)"
# Written to a file first so a kiln-opt failure is not hidden behind head closing the pipe.
"$KILN_OPT" "$EXAMPLE" --format=json >"$BUILD/resnet_block.json"
head -40 "$BUILD/resnet_block.json"

echo
echo "== an ONNX model: examples/make_small_cnn.py writes a small CNN; kiln-opt imports it"
echo "   (every node carries the ONNX layer it came from: /* si=... */)"
/usr/bin/python3 examples/make_small_cnn.py "$BUILD/small_cnn.onnx"
"$KILN_OPT" "$BUILD/small_cnn.onnx" --show-metadata=false

echo
echo "== the same model with a static batch (--input-shape input=4,3,16,16), spans hidden"
"$KILN_OPT" "$BUILD/small_cnn.onnx" --input-shape input=4,3,16,16 --hide-spans --show-metadata=false

echo
echo "== the same model optimized (-O3) and lowered to loop IR (--emit=loop), first kernel"
echo "   (BatchNorm's scale is folded into the conv weights; each statement names its layers)"
"$KILN_OPT" "$BUILD/small_cnn.onnx" --input-shape input=1,3,16,16 -O3 --emit=loop \
  >"$BUILD/small_cnn.loop.py"
sed -n '1,12p' "$BUILD/small_cnn.loop.py"

echo
echo "== the schedule record of the kernel computing ONNX layer /conv2/Conv"
echo "   (one step per primitive, each checked against the vanilla schedule by the interpreter)"
"$KILN_OPT" "$BUILD/small_cnn.onnx" --input-shape input=1,3,16,16 -O3 \
  --schedule-record=/conv2/Conv >"$BUILD/conv2.record.txt"
grep -E '^# ' "$BUILD/conv2.record.txt"

echo
echo "== kiln-conformance --filter 'node/test_(conv|relu|softmax)': ONNX backend tests end to end"
"$BUILD/tools/kiln-conformance/kiln-conformance" --filter 'node/test_(conv|relu|softmax)' | tail -12
