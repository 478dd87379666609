// The roundtrip contract over 1,200 seeded random modules: printing, parsing
// and printing again gives the same bytes, and the parsed module is
// structurally equal to the original, spans and virtual devices included.
#include <gtest/gtest.h>

#include <string>

#include "engine/ir/structural_equal.h"
#include "engine/parser/parser.h"
#include "engine/printer/printer.h"
#include "tests/unit/roundtrip/random_graph.h"

namespace kiln {
namespace {

constexpr uint64_t kModules = 1200;

// Empty when `module` roundtrips; otherwise what went wrong, with the text.
std::string RoundtripFailure(const IRModule& module) {
  PrintOptions options;
  options.show_metadata = true;
  std::string text = PrintModule(module, options);
  absl::StatusOr<IRModule> parsed = ParseModule(text);
  if (!parsed.ok()) return std::string(parsed.status().message()) + "\n--- text:\n" + text;
  if (auto mismatch = FindFirstMismatch(module, *parsed, {.compare_spans = true})) {
    return RenderStructuralMismatch(module, *parsed, *mismatch, options);
  }
  std::string reprinted = PrintModule(*parsed, options);
  if (reprinted != text)
    return "reprint differs:\n--- first:\n" + text + "--- second:\n" + reprinted;
  return "";
}

TEST(RandomRoundtripTest, PrintParsePrintIsStable) {
  int failures = 0;
  for (uint64_t seed = 0; seed < kModules && failures < 5; ++seed) {
    std::string failure = RoundtripFailure(test::RandomModule(seed));
    if (!failure.empty()) {
      ++failures;
      ADD_FAILURE() << "seed " << seed << ":\n" << failure;
    }
  }
}

TEST(RandomRoundtripTest, DeepAndWideModulesRoundtrip) {
  test::RandomGraphOptions options;
  options.max_nodes_per_function = 400;
  options.max_scope_depth = 6;
  options.max_functions = 4;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::string failure = RoundtripFailure(test::RandomModule(1000000 + seed, options));
    ASSERT_EQ(failure, "") << "seed " << 1000000 + seed;
  }
}

TEST(RandomRoundtripTest, FunctionsRoundtripAsFragments) {
  PrintOptions options;
  options.show_metadata = true;
  int failures = 0;
  for (uint64_t seed = 0; seed < 300 && failures < 5; ++seed) {
    IRModule module = test::RandomModule(seed);
    for (const auto& [name, function] : module->functions) {
      std::string text = PrintExpr(function, options);
      absl::StatusOr<Expr> parsed = ParseExpr(text);
      if (!parsed.ok()) {
        ++failures;
        ADD_FAILURE() << "seed " << seed << " @" << name->name_hint << ": "
                      << parsed.status().message() << "\n"
                      << text;
        continue;
      }
      if (auto mismatch = FindFirstMismatch(function, *parsed, {.compare_spans = true})) {
        ++failures;
        ADD_FAILURE() << "seed " << seed << " @" << name->name_hint << ":\n"
                      << RenderStructuralMismatch(function, *parsed, *mismatch, options);
        continue;
      }
      EXPECT_EQ(PrintExpr(*parsed, options), text) << "seed " << seed;
    }
  }
}

TEST(RandomRoundtripTest, GeneratorIsDeterministic) {
  PrintOptions options;
  options.show_metadata = true;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    EXPECT_EQ(PrintModule(test::RandomModule(seed), options),
              PrintModule(test::RandomModule(seed), options));
  }
}

}  // namespace
}  // namespace kiln
