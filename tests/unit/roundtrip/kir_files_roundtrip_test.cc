// Every `.kir` file in the source tree (tests/ and examples/) roundtrips:
// parsing it and printing gives text that parses back to an equal module and
// prints to the same bytes.
//
// Skipped, by convention: files that are meant not to parse. A file is one of
// them when it lives under a directory named `errors` or its text contains
// `RUN: not` (a lit test expecting kiln-opt to fail). A file split into cases
// at `// -----` lines (kiln-opt --split-input-file) is checked case by case,
// skipping the cases that contain `expected-error` (--verify-diagnostics).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/ir/structural_equal.h"
#include "engine/parser/parser.h"
#include "engine/printer/printer.h"
#include "tools/kiln-opt/split_input.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

bool MeantToFail(const fs::path& path, const std::string& text) {
  for (const auto& part : path) {
    if (part == "errors") return true;
  }
  return text.find("RUN: not") != std::string::npos;
}

std::vector<fs::path> KirFiles() {
  std::vector<fs::path> files;
  for (const char* dir : {"tests", "examples"}) {
    fs::path root = fs::path(KILN_SOURCE_DIR) / dir;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.is_regular_file() && entry.path().extension() == ".kir") {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(KirFilesRoundtripTest, EveryFileRoundtrips) {
  int checked = 0;
  for (const fs::path& path : KirFiles()) {
    std::ifstream file(path, std::ios::binary);
    std::stringstream buffer;
    buffer << file.rdbuf();
    std::string text = buffer.str();
    if (MeantToFail(path, text)) continue;
    ++checked;
    for (const kiln_opt::InputChunk& chunk : kiln_opt::SplitInput(text)) {
      if (chunk.text.find("expected-error") != std::string::npos) continue;
      SCOPED_TRACE(path.string() + ":" + std::to_string(chunk.first_line));
      ParseOptions parse_options;
      parse_options.source_name = path.string();
      absl::StatusOr<IRModule> module = ParseModule(chunk.text, parse_options);
      ASSERT_TRUE(module.ok()) << module.status().message();
      PrintOptions options;
      options.show_metadata = true;
      std::string printed = PrintModule(*module, options);
      absl::StatusOr<IRModule> reparsed = ParseModule(printed);
      ASSERT_TRUE(reparsed.ok()) << path
                                 << ": printed text does not parse: " << reparsed.status().message()
                                 << "\n"
                                 << printed;
      auto mismatch = FindFirstMismatch(*module, *reparsed, {.compare_spans = true});
      EXPECT_FALSE(mismatch.has_value())
          << path << ":\n"
          << RenderStructuralMismatch(*module, *reparsed, *mismatch, options);
      EXPECT_EQ(PrintModule(*reparsed, options), printed) << path;
    }
  }
  std::cout << "checked " << checked << " .kir files\n";
}

}  // namespace
}  // namespace kiln
