// KILN_CHECK: internal invariants (our bugs, never the user's input). A failed
// check prints the condition, the location and any streamed context (for IR
// invariants, callers stream the printed IR), then aborts. User errors are
// absl::Status values instead; see status_macros.h.
#pragma once

#include <sstream>
#include <string>

namespace kiln::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return message_; }

 private:
  std::ostringstream message_;
};

// Lets `KILN_CHECK(c) << ...` compile to a void expression in both branches.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace kiln::internal

#define KILN_CHECK(condition)                      \
  (condition) ? (void)0                            \
              : ::kiln::internal::Voidify() &      \
                    ::kiln::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

#define KILN_UNREACHABLE() KILN_CHECK(false) << "unreachable: "
