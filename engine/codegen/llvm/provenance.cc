// AnnotateAssembly: `.loc` tracking over LLVM's assembly output.
#include "engine/codegen/llvm/provenance.h"

#include <cctype>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace kiln::codegen {
namespace {

// `\t.loc\tFILE LINE COLUMN ...` -> LINE; -1 when `line` is not a .loc directive.
int LocLine(const std::string& line) {
  size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos || line.compare(at, 4, ".loc") != 0) return -1;
  std::istringstream fields(line.substr(at + 4));
  int file = 0, number = 0;
  if (!(fields >> file >> number)) return -1;
  return number;
}

// A function's label: `name:` at column 0, not a local label (.L...).
bool FunctionLabel(const std::string& line, std::string* name) {
  if (line.empty() || line[0] == '.' || line[0] == '\t' || line[0] == ' ' || line.back() != ':') {
    return false;
  }
  *name = line.substr(0, line.size() - 1);
  return true;
}

// An instruction: indented, not a directive, a label or a comment.
bool IsInstruction(const std::string& line, const std::string& comment) {
  size_t at = line.find_first_not_of(" \t");
  if (at == 0 || at == std::string::npos) return false;
  if (line[at] == '.' || line.compare(at, comment.size(), comment) == 0) return false;
  return line.back() != ':';
}

}  // namespace

AsmProvenance AnnotateAssembly(const std::string& assembly, const LoopLineLayers& lines,
                               const std::string& comment, const std::string& entry_function,
                               const std::set<std::string>& non_kernel_functions) {
  auto in_kernel = [&](int loop_line) {
    for (const auto& [first, last] : lines.kernel_lines) {
      if (loop_line >= first && loop_line <= last) return true;
    }
    return false;
  };
  AsmProvenance out;
  nlohmann::ordered_json instructions = nlohmann::ordered_json::array();
  std::set<int> used_lines;
  std::istringstream in(assembly);
  std::string line, function;
  int loop_line = 0, asm_line = 0;
  while (std::getline(in, line)) {
    ++asm_line;
    std::string name;
    if (FunctionLabel(line, &name)) {
      function = name;
      loop_line = 0;
    }
    if (int loc = LocLine(line); loc >= 0) loop_line = loc;
    if (!IsInstruction(line, comment)) {
      absl::StrAppend(&out.annotated_assembly, line, "\n");
      continue;
    }
    int line_of_instruction = loop_line;
    if (line_of_instruction == 0 && function != entry_function) {
      auto owner = lines.function_lines.find(function);
      if (owner != lines.function_lines.end()) line_of_instruction = owner->second;
    }
    auto found = lines.layers.find(line_of_instruction);
    const std::vector<std::string>* layers = found == lines.layers.end() ? nullptr : &found->second;
    bool kernel_code = non_kernel_functions.count(function) == 0 &&
                       (function != entry_function || in_kernel(line_of_instruction));
    if (kernel_code) {
      ++out.kernel_instructions;
      if (layers != nullptr && !layers->empty()) {
        ++out.kernel_instructions_with_layers;
        out.layers_with_instructions.insert(layers->begin(), layers->end());
      }
    }
    absl::StrAppend(&out.annotated_assembly, line);
    if (line_of_instruction > 0) {
      absl::StrAppend(&out.annotated_assembly, "\t", comment, " ", lines.file_name, ":",
                      line_of_instruction);
      if (layers != nullptr && !layers->empty()) {
        absl::StrAppend(&out.annotated_assembly, " [", absl::StrJoin(*layers, ", "), "]");
      }
      used_lines.insert(line_of_instruction);
    }
    out.annotated_assembly += "\n";
    instructions.push_back({asm_line, line_of_instruction});
  }
  nlohmann::ordered_json loop_lines = nlohmann::ordered_json::object();
  for (int used : used_lines) {
    auto found = lines.layers.find(used);
    loop_lines[std::to_string(used)] =
        found == lines.layers.end() ? std::vector<std::string>{} : found->second;
  }
  nlohmann::ordered_json json;
  json["format"] = "kiln.asm-provenance";
  json["version"] = 1;
  json["source"] = lines.file_name;
  json["instructions"] = std::move(instructions);  // [asm line, loop-IR line] (0: none)
  json["loop_lines"] = std::move(loop_lines);       // loop-IR line -> ONNX layers
  json["kernel_instructions"] = out.kernel_instructions;
  json["kernel_instructions_with_layers"] = out.kernel_instructions_with_layers;
  out.json = json.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  return out;
}

}  // namespace kiln::codegen
