// CrashReproducer: when a pass fails, writes the IR it was given and the
// pipeline that reproduces the failure as a `.kir` file that kiln-opt runs
// directly (its first line is `// RUN: kiln-opt %s --passes=...`), so a
// failure seen in the service becomes a one-command, lit-ready test case
// (MLIR's local crash reproducer).
#pragma once

#include <string>
#include <vector>

#include "engine/pass/instrument.h"
#include "engine/pass/pass_context.h"

namespace kiln {

struct CrashReproducerOptions {
  // Created if missing.
  std::string directory;
  // kiln-opt flags recreating the context (opt level, required and disabled
  // passes, config); ContextFlags() builds them.
  std::string context_flags;
  // The whole pipeline being run, recorded as a comment.
  std::string full_pipeline;
};

// The kiln-opt flags for `context`'s opt level, required and disabled passes
// and explicit config, e.g. "-O3 --disable-pass=FoldConstant --config=k=v".
std::string ContextFlags(const PassContext& context);

class CrashReproducer final : public PassInstrument {
 public:
  explicit CrashReproducer(CrashReproducerOptions options);

  absl::Status RunBeforePass(const IRModule& module, const PassInvocation& pass) override;
  // Writes `reproducer_<pass>.kir` for the innermost failing pass (the
  // Sequentials around it fail after it and are not written again). A write
  // error is returned (and appended to the pass's error).
  absl::Status RunAfterPassFailed(const IRModule& module_before, const PassInvocation& pass,
                                  const absl::Status& error) override;

  // Paths written so far.
  const std::vector<std::string>& written() const { return written_; }

 private:
  CrashReproducerOptions options_;
  bool failure_written_ = false;
  std::vector<std::string> written_;
};

}  // namespace kiln
