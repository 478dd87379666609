// Splitting at `// -----` and running the chunks, with their stderr captured
// for --verify-diagnostics.
#include "tools/kiln-opt/split_input.h"

#include <cstdio>
#include <iostream>
#include <sstream>
#include <streambuf>

#include "tools/kiln-opt/verify_diagnostics.h"

namespace kiln_opt {

namespace {

// Sends what is written to std::cerr into another buffer while it lives.
class CerrCapture {
 public:
  explicit CerrCapture(std::streambuf* into) : saved_(std::cerr.rdbuf(into)) {}
  ~CerrCapture() { std::cerr.rdbuf(saved_); }
  CerrCapture(const CerrCapture&) = delete;
  CerrCapture& operator=(const CerrCapture&) = delete;

 private:
  std::streambuf* saved_;
};

// Flushed at once, so that with stdout and stderr on one pipe the marker
// comes before the errors of the chunk it precedes.
void PrintMarkerLine() {
  std::fwrite(kSplitMarker.data(), 1, kSplitMarker.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace

bool IsSplitMarker(std::string_view line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  return line == kSplitMarker;
}

std::vector<InputChunk> SplitInput(std::string_view input) {
  std::vector<InputChunk> chunks(1);
  int line_number = 1;
  size_t pos = 0;
  while (pos < input.size()) {
    size_t end = input.find('\n', pos);
    size_t next = end == std::string_view::npos ? input.size() : end + 1;
    std::string_view line = input.substr(pos, next - pos);
    std::string_view content = line;
    if (!content.empty() && content.back() == '\n') content.remove_suffix(1);
    if (IsSplitMarker(content)) {
      // The next chunk starts on the following line: every line up to this
      // one becomes an empty line of it.
      InputChunk chunk;
      chunk.first_line = line_number + 1;
      chunk.text.assign(static_cast<size_t>(line_number), '\n');
      chunks.push_back(std::move(chunk));
    } else {
      chunks.back().text.append(line);
    }
    pos = next;
    ++line_number;
  }
  return chunks;
}

int RunChunks(std::string_view input, const ChunkRunOptions& options,
              const std::function<int(const std::string& chunk_text)>& compile) {
  std::vector<InputChunk> chunks;
  if (options.split) {
    chunks = SplitInput(input);
  } else {
    chunks.push_back(InputChunk{std::string(input), 1});
  }
  int exit_code = 0;
  bool verification_failed = false;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i > 0) PrintMarkerLine();
    const InputChunk& chunk = chunks[i];
    if (!options.verify_diagnostics) {
      int code = compile(chunk.text);
      if (exit_code == 0) exit_code = code;
      // Each chunk's output before the next chunk's errors, also when stdout
      // and stderr go to one pipe.
      std::fflush(stdout);
      continue;
    }
    std::ostringstream captured;
    {
      CerrCapture capture(captured.rdbuf());
      // The chunk's exit code does not count: its diagnostics do.
      (void)compile(chunk.text);
    }
    std::fflush(stdout);
    std::string reported_text = captured.str();
    ReportedStderr reported = ParseReportedStderr(reported_text, chunk.text, options.source_name);
    std::vector<std::string> failures =
        VerifyDiagnostics(ParseExpectations(chunk.text), reported.diagnostics, options.source_name);
    for (const std::string& failure : failures) std::cerr << "kiln-opt: " << failure << "\n";
    std::cerr << reported.other;
    if (!failures.empty()) verification_failed = true;
  }
  if (options.verify_diagnostics) return verification_failed ? 1 : 0;
  return exit_code;
}

}  // namespace kiln_opt
