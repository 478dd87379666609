#!/usr/bin/env bash
# Regenerates the golden files: tests/golden/printer/* from the hand-built modules in
# tests/unit/printer/golden_test.cc, and tests/golden/frontend/* from the ONNX models built in
# tests/unit/frontend/cnn_golden_test.cc. Never edit a golden by hand: change the printer or the
# module, run this, and review `git diff tests/golden` against docs/graph-text-format.md.
#
# Usage: tests/update_goldens.sh [BUILD_DIR]   (default: build)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"

cmake --build "$build" --target kiln_printer_test kiln_frontend_test
KILN_UPDATE_GOLDENS=1 "$build/tests/unit/printer/kiln_printer_test" --gtest_filter='Printer/GoldenTest.*'
KILN_UPDATE_GOLDENS=1 "$build/tests/unit/frontend/kiln_frontend_test" --gtest_filter='OnnxCnnGoldenTest.*'
git -C "$root" status --short -- tests/golden || true
