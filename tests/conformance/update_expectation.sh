#!/usr/bin/env bash
# Rewrites tests/conformance/onnx_import_expected.txt from what imports today.
# Review the diff: a model that disappears from the list is a regression.
set -euo pipefail
BUILD="${KILN_BUILD_DIR:-build}"
cmake --build "$BUILD" --target kiln_onnx_import_conformance -j2
KILN_UPDATE_EXPECTATION=1 "$BUILD/tests/conformance/kiln_onnx_import_conformance"
git diff --stat -- "$(dirname "$0")/onnx_import_expected.txt" || true
