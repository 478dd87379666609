// Reporting for failed internal invariants.
#include "engine/support/check.h"

#include <cstdio>
#include <cstdlib>

namespace kiln::internal {

CheckFailure::CheckFailure(const char* file, int line, const char* condition) {
  message_ << "Kiln internal error at " << file << ":" << line << ": check failed: " << condition
           << "\n";
}

CheckFailure::~CheckFailure() {
  std::string text = message_.str();
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  std::abort();
}

}  // namespace kiln::internal
