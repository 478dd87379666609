"""Provenance down to the instruction, checked from the object alone with LLVM's own tools.

Usage: check_provenance.py OBJECT LOOP_SCRIPT PREFIX MIN_FRACTION

llvm-objdump lists every instruction (address, function); llvm-dwarfdump's line table gives each
address its line in the printed loop IR (LOOP_SCRIPT, the model.loop.py the DWARF names); the
`# si=` comment of that line names its ONNX layers. Kernel code is every instruction of a kernel
or outlined function, and every instruction of PREFIX_run whose line is inside a kernel (kernels
are inlined there; _run_sample or _run_bound for models with _run_dynamic). Line 0 is DWARF's "no one line of this function" (code LLVM hoisted or
merged): such an instruction is its function's, at the function's DW_AT_decl_line. Fails unless at least MIN_FRACTION of kernel instructions map to a layer
and every layer named inside a kernel has at least one instruction.
"""
import bisect
import re
import subprocess
import sys

TOOLS = "/usr/lib/llvm-19/bin/"


def parse_layers(comment):
    text = comment.strip()
    if text.startswith("["):
        text = text[1:-1]
    names = re.findall(r'"((?:[^"\\]|\\.)*)"|([^,\s][^,]*)', text)
    return [quoted or bare.strip() for quoted, bare in names if (quoted or bare.strip())]


def script_lines(path):
    layers, kernel_starts, all_starts = {}, [], []
    with open(path) as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        match = re.search(r"  # si=(.*)$", line)
        if match:
            layers[number] = parse_layers(match.group(1))
        stripped = line.strip()
        if stripped == "@T.prim_func":
            all_starts.append(number)
            following = lines[number].strip() if number < len(lines) else ""
            if not following.startswith("def main("):
                kernel_starts.append(number)
    ranges = []
    for start in kernel_starts:
        later = [s for s in all_starts if s > start]
        ranges.append((start, (later[0] - 1) if later else len(lines)))
    return layers, ranges


def line_table(obj):
    out = subprocess.run([TOOLS + "llvm-dwarfdump", "--debug-line", obj], check=True,
                         capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        match = re.match(r"^0x([0-9a-f]+)\s+(\d+)\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s*(.*)$", line)
        if match:
            rows.append((int(match.group(1), 16), int(match.group(2)), "end_sequence" in match.group(3)))
    rows.sort()
    return rows


def decl_lines(obj):
    """Function name -> DW_AT_decl_line of its DW_TAG_subprogram."""
    out = subprocess.run([TOOLS + "llvm-dwarfdump", "--debug-info", obj], check=True,
                         capture_output=True, text=True).stdout
    lines, name = {}, None
    for line in out.splitlines():
        if "DW_TAG" in line:
            name = None
        match = re.search(r'DW_AT_name\s+\("([^"]*)"\)', line)
        if match:
            name = match.group(1)
        match = re.search(r"DW_AT_decl_line\s+\((\d+)\)", line)
        if match and name:
            lines[name] = int(match.group(1))
    return lines


def instructions(obj):
    out = subprocess.run([TOOLS + "llvm-objdump", "-d", "--no-show-raw-insn", obj], check=True,
                         capture_output=True, text=True).stdout
    function = None
    for line in out.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if header:
            function = header.group(1)
            continue
        insn = re.match(r"^\s+([0-9a-f]+):\s+(\S.*)$", line)
        if insn and function:
            yield function, int(insn.group(1), 16)


def main():
    obj, script, prefix, min_fraction = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    layers, kernels = script_lines(script)
    rows = line_table(obj)
    addresses = [r[0] for r in rows]
    function_lines = decl_lines(obj)
    queries = {prefix + s for s in ("_input_info", "_output_info", "_num_inputs", "_num_outputs",
                                    "_workspace_size", "_kernel_name", "_num_kernels",
                                    "_run_dynamic")}
    # Main's entry: _run, or _run_sample / _run_bound behind a model's _run_dynamic.
    entries = {prefix + s for s in ("_run", "_run_sample", "_run_bound")}
    in_kernel = lambda line: any(a <= line <= b for a, b in kernels)
    total = mapped = 0
    seen = set()
    for function, address in instructions(obj):
        i = bisect.bisect_right(addresses, address) - 1
        line = rows[i][1] if i >= 0 and not rows[i][2] else 0
        if line == 0 and function not in entries:
            line = function_lines.get(function, 0)
        if function in queries or (function in entries and not in_kernel(line)):
            continue
        total += 1
        if layers.get(line):
            mapped += 1
            seen.update(layers[line])
    named = set()
    for number, names in layers.items():
        if in_kernel(number):
            named.update(names)
    fraction = mapped / total if total else 0.0
    missing = sorted(named - seen)
    print(f"kernel instructions: {total}, mapped to an ONNX layer: {mapped} ({100 * fraction:.2f}%); "
          f"layers in kernels: {len(named)}, without instructions: {missing}")
    if total == 0 or fraction < min_fraction or missing:
        sys.exit(1)


main()
