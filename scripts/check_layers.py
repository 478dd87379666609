#!/usr/bin/env python3
"""Checks that #includes follow the layering of ARCHITECTURE.md.

A directory of engine/ is a layer; a file may include only its own layer and
the layers before it:

  support < ir < loop < printer, parser < pass < loop_transform < te < op
          < frontend, transform < lower < codegen < driver (runtime, the C library generated code
          links, is below them all)

tools/ and service/ reach the pass manager, the passes, lowering and
schedules only through engine/driver (benchmarks in bench/ measure those
internals directly and may include them). Only engine/codegen/llvm/ includes LLVM. clients/
(the CLI, the Explorer's gateway) are gRPC clients of kilnd and include no engine header.
Prints every violation (file:line: what) and exits 1 when there is one.
"""
import pathlib
import re
import sys

LAYERS = [
    ["runtime"], ["support"], ["ir"], ["loop"], ["printer", "parser"], ["pass"], ["loop_transform"],
    ["te"], ["op"], ["frontend", "transform"], ["lower"], ["codegen"], ["driver"],
]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
# What consumers of the engine must reach through the driver.
DRIVER_ONLY = {"pass", "loop_transform", "transform", "te", "lower", "codegen"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def violations(root):
    for path in sorted(root.glob("**/*")):
        if path.suffix not in (".h", ".cc", ".c") or not path.is_file():
            continue
        rel = path.relative_to(root)
        top = rel.parts[0]
        if top not in ("engine", "tools", "service", "clients"):
            continue
        layer = rel.parts[1] if top == "engine" and len(rel.parts) > 2 else None
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            included = match.group(1)
            where = f"{rel}:{number}"
            if included.startswith("llvm/") or included.startswith("llvm-c/"):
                if not str(rel).startswith("engine/codegen/llvm/"):
                    yield f"{where}: LLVM headers belong in engine/codegen/llvm/ only ({included})"
                continue
            parts = included.split("/")
            if len(parts) < 3 or parts[0] != "engine":
                continue
            if top == "clients":
                yield f"{where}: clients/ are gRPC clients of kilnd, never the engine ({included})"
                continue
            target = parts[1]
            if layer is not None:
                if layer not in RANK or target not in RANK:
                    yield f"{where}: engine/{layer} or engine/{target} is not a known layer"
                elif RANK[target] > RANK[layer]:
                    yield f"{where}: engine/{layer} must not include engine/{target} ({included})"
            elif top in ("tools", "service") and target in DRIVER_ONLY:
                yield f"{where}: {top}/ reaches engine/{target} only through engine/driver ({included})"


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    found = list(violations(root))
    for line in found:
        print(line)
    print(f"check_layers: {len(found)} violation(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
