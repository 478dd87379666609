# lit config for Kiln's text-IR tests: each .kir/.test file carries RUN lines that pipe kiln-opt
# into FileCheck. Loaded from the generated build-tree lit.site.cfg.py, which sets the paths;
# run `python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv build/tests/lit`.
import os

import lit.formats

config.name = "Kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".kir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "Inputs", "golden"]

if not hasattr(config, "kiln_opt_path"):
    lit_config.fatal(
        "lit.cfg.py must be loaded from the generated lit.site.cfg.py: "
        "run lit on the build directory (build/tests/lit), not the source directory"
    )

config.test_source_root = config.kiln_lit_source_dir
config.test_exec_root = config.kiln_lit_binary_dir

# `kiln-opt` as a whole word only: never inside a path (tests/lit/kiln-opt/x.kir) or a longer
# name (kiln-opt-foo).
config.substitutions.append((r"(?<![\w./-])kiln-opt(?![\w.-])", config.kiln_opt_path))

config.substitutions.append(
    (r"(?<![\w./-])kiln-conformance(?![\w.-])", config.kiln_conformance_path)
)

config.substitutions.append((r"(?<![\w./-])kiln-run(?![\w.-])", config.kiln_run_path))

# Debian's interpreter, which sees python3-onnx (tests build their .onnx inputs with it).
config.substitutions.append(("%python", "/usr/bin/python3"))
# The ONNX backend test data (libonnx-testdata).
config.substitutions.append(("%onnx_data", "/usr/share/libonnx-testdata/data"))

# FileCheck, not, count and split-file come from llvm-19-tools.
config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", "")]
)

if not os.path.exists(config.kiln_opt_path):
    lit_config.warning("kiln-opt not built yet: " + config.kiln_opt_path)
