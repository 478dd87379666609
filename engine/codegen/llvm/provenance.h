// Provenance down to the instruction: the assembly of a module built with debug info carries a
// `.loc` line (into the printed loop IR) before the instructions of each loop statement, and a
// statement's span names its ONNX layers. AnnotateAssembly tags every instruction line with its
// loop-IR line and layers, and builds the JSON map (asm line -> loop-IR line -> layers) a
// dashboard colours like Compiler Explorer's source view. LLVM-free text processing.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kiln::codegen {

struct LoopLineLayers {
  std::string file_name;                             // "model.loop.py"
  std::map<int, std::vector<std::string>> layers;    // loop-IR line -> ONNX layers
  std::vector<std::pair<int, int>> kernel_lines;     // [first, last] lines of each kernel
  // Each function's own line (its `def`, or its parallel loop's): where its instructions at
  // line 0 (hoisted or merged by LLVM: no one statement's) belong.
  std::map<std::string, int> function_lines;
};

struct AsmProvenance {
  std::string annotated_assembly;
  std::string json;
  // Instructions of kernel code (kernel and outlined functions, and kernel lines inlined into
  // the entry), and how many of them map to at least one ONNX layer.
  int64_t kernel_instructions = 0;
  int64_t kernel_instructions_with_layers = 0;
  // The layers at least one instruction maps to.
  std::set<std::string> layers_with_instructions;
};

// `comment` is the target assembler's comment marker ("#" on x86, "//" on AArch64);
// `entry_function` is the model's `<prefix>_run` and `non_kernel_functions` the signature
// queries, which hold no kernel code.
AsmProvenance AnnotateAssembly(const std::string& assembly, const LoopLineLayers& lines,
                               const std::string& comment, const std::string& entry_function,
                               const std::set<std::string>& non_kernel_functions);

}  // namespace kiln::codegen
