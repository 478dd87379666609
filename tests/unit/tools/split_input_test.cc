// kiln-opt --split-input-file: where the input splits, the line numbers the
// chunks keep, and how RunChunks combines the chunks' results.
#include "tools/kiln-opt/split_input.h"

#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

namespace kiln_opt {
namespace {

std::vector<std::string> Texts(const std::vector<InputChunk>& chunks) {
  std::vector<std::string> texts;
  for (const InputChunk& chunk : chunks) texts.push_back(chunk.text);
  return texts;
}

TEST(SplitInputTest, WithoutAMarkerTheWholeInputIsOneChunk) {
  std::vector<InputChunk> chunks = SplitInput("def @main() {\n  1f\n}\n");
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].text, "def @main() {\n  1f\n}\n");
  EXPECT_EQ(chunks[0].first_line, 1);
}

TEST(SplitInputTest, ChunksKeepTheLineNumbersOfTheInput) {
  std::vector<InputChunk> chunks = SplitInput("a\n// -----\nb\nc\n// -----\nd");
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(Texts(chunks), (std::vector<std::string>{"a\n", "\n\nb\nc\n", "\n\n\n\n\nd"}));
  EXPECT_EQ(chunks[0].first_line, 1);
  EXPECT_EQ(chunks[1].first_line, 3);
  EXPECT_EQ(chunks[2].first_line, 6);
}

TEST(SplitInputTest, OnlyALineThatIsExactlyTheMarkerSplits) {
  EXPECT_TRUE(IsSplitMarker("// -----"));
  EXPECT_TRUE(IsSplitMarker("// -----  \t\r"));
  // IR dump headers start with the marker and must not split a dump fed back in.
  EXPECT_FALSE(IsSplitMarker("// -----// IR Dump After FuseOps //----- //"));
  EXPECT_FALSE(IsSplitMarker("  // -----"));
  EXPECT_FALSE(IsSplitMarker("// ------"));
  EXPECT_FALSE(IsSplitMarker("// ----"));
  EXPECT_EQ(SplitInput("x\n// -----// IR Dump After FuseOps //----- //\ny\n").size(), 1u);
  EXPECT_EQ(SplitInput("x\r\n// -----\r\ny\r\n").size(), 2u);
}

TEST(SplitInputTest, MarkersOnTheFirstAndLastLinesGiveEmptyChunks) {
  std::vector<InputChunk> chunks = SplitInput("// -----\nx\n// -----\n");
  EXPECT_EQ(Texts(chunks), (std::vector<std::string>{"", "\nx\n", "\n\n\n"}));
}

TEST(RunChunksTest, EveryChunkRunsAndTheFirstFailureGivesTheExitCode) {
  std::vector<std::string> seen;
  ChunkRunOptions options;
  options.split = true;
  ::testing::internal::CaptureStdout();
  int code = RunChunks("a\n// -----\nb\n// -----\nc\n", options, [&](const std::string& text) {
    seen.push_back(text);
    return text.find('b') != std::string::npos ? 3 : 0;
  });
  std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 3);
  EXPECT_EQ(seen, (std::vector<std::string>{"a\n", "\n\nb\n", "\n\n\n\nc\n"}));
  // The marker separates the chunks' outputs (these chunks print nothing).
  EXPECT_EQ(out, "// -----\n// -----\n");
}

TEST(RunChunksTest, WithoutSplittingTheInputIsOneChunk) {
  std::vector<std::string> seen;
  ChunkRunOptions options;
  options.verify_diagnostics = true;
  options.source_name = "in.kir";
  ::testing::internal::CaptureStderr();
  int code = RunChunks("a\n// -----\nb\n", options, [&](const std::string& text) {
    seen.push_back(text);
    return 0;
  });
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 0);
  EXPECT_EQ(seen, (std::vector<std::string>{"a\n// -----\nb\n"}));
}

TEST(RunChunksTest, VerificationMatchesEachChunksErrorsAndIgnoresItsExitCode) {
  ChunkRunOptions options;
  options.split = true;
  options.verify_diagnostics = true;
  options.source_name = "in.kir";
  const std::string input =
      "bad  // expected-error {{boom}}\n"
      "// -----\n"
      "good\n";
  auto compile = [](const std::string& text) {
    if (text.find("bad") == std::string::npos) return 0;
    std::cerr << "kiln-opt: in.kir:1:1: error: boom\nbad\n^\n";
    return 1;
  };
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunChunks(input, options, compile), 0);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");

  // The same error expected on the wrong line fails, naming both lines.
  const std::string wrong_line =
      "bad\n"
      "// expected-error {{boom}}\n"
      "// -----\n"
      "good\n";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(RunChunks(wrong_line, options, compile), 1);
  std::string report = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(report.find("in.kir:2: error: expected error \"boom\" was not produced; a matching "
                        "error was reported on line 1"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("in.kir:1: error: unexpected error (on line 1): in.kir:1:1: error: boom"),
            std::string::npos)
      << report;
}

TEST(RunChunksTest, VerificationPassesOnWhatIsNotADiagnostic) {
  ChunkRunOptions options;
  options.verify_diagnostics = true;
  options.source_name = "in.kir";
  ::testing::internal::CaptureStderr();
  int code = RunChunks("x\n", options, [](const std::string&) {
    std::cerr << "// -----// IR Dump After InferType //----- //\ndef @main() {\n}\n";
    return 0;
  });
  std::string stderr_text = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 0);
  EXPECT_EQ(stderr_text, "// -----// IR Dump After InferType //----- //\ndef @main() {\n}\n");
}

}  // namespace
}  // namespace kiln_opt
