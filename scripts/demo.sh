#!/usr/bin/env bash
# Kiln demo: bootstraps, builds kiln-opt only, and prints the bundled example graph
# (examples/resnet_block.kir) in the three output formats. It becomes the service demo once
# kilnd exists.
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
cmake --build "$BUILD" -j"$JOBS" --target kiln-opt

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
