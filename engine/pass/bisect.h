// Bisect: runs only the first N passes that are not required, so a
// miscompile can be narrowed to one pass by halving N (LLVM's
// -opt-bisect-limit; the pass bisection TVM users asked for). Passes are
// numbered from 1 in execution order; Sequential containers and required
// passes (which ShouldRun is never asked about) are not numbered.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "engine/pass/instrument.h"

namespace kiln {

class Bisect final : public PassInstrument {
 public:
  struct Decision {
    int64_t number;  // from 1
    std::string pass;
    bool ran;
  };

  // `log`, when given, gets one line per numbered pass:
  //   "BISECT: running pass (3) FoldConstant" / "BISECT: NOT running pass (4) FuseOps".
  explicit Bisect(int64_t max_pass_index, std::ostream* log = nullptr);

  // Entering a context restarts the numbering.
  absl::Status EnterPassContext() override;
  absl::StatusOr<bool> ShouldRun(const IRModule& module, const PassInvocation& pass) override;

  const std::vector<Decision>& decisions() const { return decisions_; }

 private:
  int64_t max_pass_index_;
  std::ostream* log_;
  std::vector<Decision> decisions_;
};

}  // namespace kiln
