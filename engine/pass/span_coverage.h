// SpanCoverage: after each pass, counts the calls (and all expression nodes)
// that lost their source span. Kiln promises that every node after every pass
// leads back to the ONNX layers it came from; in strict mode a call without a
// span fails the pass, naming it and showing the node underlined in the IR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/pass/instrument.h"

namespace kiln {

// How many nodes carry spans.
struct SpanStats {
  int64_t calls = 0;
  int64_t calls_with_span = 0;
  // Every expression node except operator and global-variable handles (they
  // are references; what they name has its own span).
  int64_t nodes = 0;
  int64_t nodes_with_span = 0;
};

// Counts over every graph function of `module`, each distinct node once (loop
// PrimFuncs are not graph nodes and are skipped).
SpanStats CountSpans(const IRModule& module);

// The first call without a span, in print order of functions and post-order
// within one (null when every call has a span).
Expr FirstCallWithoutSpan(const IRModule& module);

class SpanCoverage final : public PassInstrument {
 public:
  struct Result {
    std::string pass;
    int depth = 0;
    SpanStats stats;
  };

  explicit SpanCoverage(bool strict = false);

  // Sequential containers are not counted (their result is their last pass's).
  absl::Status RunAfterPass(const IRModule& module, const PassInvocation& pass) override;

  const std::vector<Result>& results() const { return results_; }
  // One line per pass: "InferType: calls 10/10 (100.0%), nodes 24/25 (96.0%)".
  std::string Render() const;

 private:
  bool strict_;
  std::vector<Result> results_;
};

}  // namespace kiln
