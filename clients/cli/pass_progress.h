// The one-line progress display `kiln compile` draws on a terminal while the
// server compiles: passes finished per stage, the last pass and elapsed time,
// redrawn in place from the TracePass event stream.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

#include "kiln/v1/compiler.pb.h"

namespace kiln::cli {

class PassProgress {
 public:
  // `out` must be a terminal (the line is redrawn with \r and erase-line).
  PassProgress(std::ostream& out, std::string model_name);
  void Update(const kiln::v1::PassEvent& event);
  // Erases the line, leaving the terminal as it was.
  void Finish();

 private:
  void Draw(const std::string& current);

  std::ostream& out_;
  std::string model_name_;
  std::chrono::steady_clock::time_point start_;
  int64_t graph_passes_ = 0;
  int64_t loop_passes_ = 0;
  bool drawn_ = false;
};

}  // namespace kiln::cli
