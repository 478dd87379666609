// The schedule records of the kernels a user names (a call index, a kernel or
// fused function name, an ONNX layer name), expanded step by step: the one
// entry kiln-opt --schedule-record and the GetScheduleRecord RPC share.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/lower/lower_module.h"
#include "engine/lower/schedule_record.h"
#include "engine/printer/printer.h"

namespace kiln::driver {

struct ScheduleRecordOptions {
  // Run every step on random inputs (from `seed`) against the vanilla step: as native code
  // for this machine (native_step_executor.h), or with the interpreter (its step budget
  // bounds large kernels).
  bool verify = false;
  bool verify_natively = true;
  uint64_t seed = 0;
  // Verification holds several copies of the kernel's parameters: a kernel
  // whose parameters need more than this is refused (ResourceExhausted).
  // Unset: no limit (a local tool verifying its user's own model).
  std::optional<int64_t> max_verify_bytes = int64_t{256} << 20;
  // Only the first kernel the selector names.
  bool first_only = false;
  // Polled during verification; true stops it with Cancelled.
  std::function<bool()> is_cancelled;
};

struct KernelScheduleRecord {
  const lower::LoweredKernel* kernel = nullptr;
  std::vector<lower::ScheduleRecordStep> steps;
};

// NotFound (listing the valid kernels) when `selector` names none.
absl::StatusOr<std::vector<KernelScheduleRecord>> ScheduleRecords(
    const lower::LoweredModule& lowered, std::string_view selector,
    const ScheduleRecordOptions& options = {});

// docs/lowering.md's text form, or JSON lines (one object per step).
std::string RenderScheduleRecord(const KernelScheduleRecord& record, bool json,
                                 const PrintOptions& print_options = {});

}  // namespace kiln::driver
