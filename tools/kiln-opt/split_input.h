// kiln-opt --split-input-file: one text input holding many small cases, cut
// at lines `// -----` (MLIR's marker) into chunks compiled one after another,
// each on its own, with the marker printed between their outputs. Also runs
// the chunks under --verify-diagnostics (verify_diagnostics.h).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln_opt {

// A line that is exactly this (trailing spaces, tabs and '\r' aside) splits
// the input; it is also the line printed between the chunks' outputs. Lines
// that merely start with it, such as the IR dump headers
// `// -----// IR Dump After X //----- //`, do not split.
inline constexpr std::string_view kSplitMarker = "// -----";

bool IsSplitMarker(std::string_view line);

struct InputChunk {
  // The chunk's lines preceded by one empty line for every input line before
  // it (the markers included), so that line numbers in the chunk, and in
  // every error reported on it, are the input's own.
  std::string text;
  // The 1-based input line of the chunk's first line.
  int first_line = 1;
};

// The chunks of `input` in order: one, the whole input, when no line is a
// marker; a marker on the first or the last line gives an empty chunk.
std::vector<InputChunk> SplitInput(std::string_view input);

struct ChunkRunOptions {
  // Split at markers; otherwise the whole input is the one chunk.
  bool split = false;
  // Check each chunk's diagnostics against its `expected-...` comments.
  bool verify_diagnostics = false;
  // The input's name in parse errors ("<stdin>" for -), which tells the
  // errors located in the input from those located elsewhere (a pipeline).
  std::string source_name;
};

// Runs `compile` on each chunk's text; it prints the chunk's output on stdout
// and its errors on std::cerr and returns an exit code. Prints the marker line
// between two chunks' outputs. Without verification, returns the first
// nonzero exit code of a chunk (0 when every chunk succeeded); one chunk
// failing does not stop the others. With verification, what `compile` writes
// to std::cerr is captured and matched against the chunk's expectations: the
// result is 0 exactly when every chunk reported what it expected, whatever
// the chunks' own exit codes; mismatches are reported on stderr, and the rest
// of the captured stderr (IR dumps, timing reports) is passed on after them.
int RunChunks(std::string_view input, const ChunkRunOptions& options,
              const std::function<int(const std::string& chunk_text)>& compile);

}  // namespace kiln_opt
