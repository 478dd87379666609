// Status propagation helpers. The installed abseil (20220623) ships no
// RETURN_IF_ERROR / ASSIGN_OR_RETURN, so Kiln defines them once, here.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define KILN_STATUS_CONCAT_INNER(a, b) a##b
#define KILN_STATUS_CONCAT(a, b) KILN_STATUS_CONCAT_INNER(a, b)

// Evaluates `expr` (an absl::Status); returns it from the caller when not OK.
#define KILN_RETURN_IF_ERROR(expr)                       \
  do {                                                   \
    ::absl::Status kiln_status_ = (expr);                \
    if (!kiln_status_.ok()) return kiln_status_;         \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status, else
// moves the value into `lhs` (which may be a declaration: `auto x`).
#define KILN_ASSIGN_OR_RETURN(lhs, rexpr) \
  KILN_ASSIGN_OR_RETURN_IMPL(KILN_STATUS_CONCAT(kiln_statusor_, __LINE__), lhs, rexpr)

#define KILN_ASSIGN_OR_RETURN_IMPL(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                               \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()
