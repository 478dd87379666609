// Bisect: numbering passes and answering ShouldRun.
#include "engine/pass/bisect.h"

namespace kiln {

Bisect::Bisect(int64_t max_pass_index, std::ostream* log)
    : PassInstrument("Bisect"), max_pass_index_(max_pass_index), log_(log) {}

absl::Status Bisect::EnterPassContext() {
  decisions_.clear();
  return absl::OkStatus();
}

absl::StatusOr<bool> Bisect::ShouldRun(const IRModule&, const PassInvocation& pass) {
  // Containers always run: skipping one would skip everything inside it.
  if (pass.pass.is_sequential()) return true;
  int64_t number = static_cast<int64_t>(decisions_.size()) + 1;
  bool run = max_pass_index_ < 0 || number <= max_pass_index_;
  decisions_.push_back(Decision{number, pass.name(), run});
  if (log_ != nullptr) {
    *log_ << "BISECT: " << (run ? "running" : "NOT running") << " pass (" << number << ") "
          << pass.name() << "\n";
  }
  return run;
}

}  // namespace kiln
