// What lowering (graph -> loop IR) may be told: whether schedules keep their
// record of snapshots, and how the workspace between kernels is laid out. The
// PassContext config option te.keep_schedule_record feeds the first.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/ir/span.h"
#include "engine/lower/default_schedule.h"
#include "engine/support/compile_budget.h"

namespace kiln {
class PassContext;
}  // namespace kiln

namespace kiln::lower {

// A kernel lowering is about to produce, as a selector sees it.
struct KernelCandidate {
  const std::string& name;           // unique kernel name
  const std::string& function_name;  // the fused function's name
  int call_index;                    // its first call in the optimized main
  const Span& span;                  // the layers it computes
};

struct LowerOptions {
  // When set, only the kernels it accepts are lowered and the result has no
  // main: enough to look at one kernel's schedule record without lowering
  // the whole model. Kernel names and call indices are those of a full
  // lowering.
  std::function<bool(const KernelCandidate&)> only_kernels;
  // Keep a snapshot of each kernel's schedule after every primitive (the
  // schedule record behind `--schedule-record` and GetScheduleRecord).
  bool keep_schedule_record = true;
  // Structurally equal primitive functions share one kernel (lower.share_kernels).
  bool share_kernels = true;
  // The target's float32 lanes per vector register (see DefaultScheduleOptions): the driver
  // sets the lanes of the target code is generated for, the host's without codegen.
  int64_t vector_lanes = 8;
  // The target's vector registers (codegen's VectorRegisters), which bound a register tile's
  // accumulators (MaxAccumulatorsFor); the driver sets the target's.
  int64_t vector_registers = 32;
  // Kernels doing less work than this run serially (lower.min_parallel_work; see
  // DefaultScheduleOptions).
  int64_t min_parallel_work = kMinParallelWork;
  // Every value placed in the workspace starts at a multiple of this many
  // bytes (cache-line alignment keeps vector loads aligned).
  int64_t workspace_alignment_bytes = 64;
  // The compile's budget (not owned; may be null): its cancellation is
  // polled before every kernel is lowered.
  CompileBudget* budget = nullptr;
};

// The options a PassContext's config asks for (te.keep_schedule_record).
LowerOptions LowerOptionsFromContext(const PassContext& context);

}  // namespace kiln::lower
