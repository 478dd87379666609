// What lowering (graph -> loop IR) may be told: whether schedules keep their
// record of snapshots, and how the workspace between kernels is laid out. The
// PassContext config option te.keep_schedule_record feeds the first.
#pragma once

#include <cstdint>

namespace kiln {
class PassContext;
}  // namespace kiln

namespace kiln::lower {

struct LowerOptions {
  // Keep a snapshot of each kernel's schedule after every primitive (the
  // schedule record behind `--schedule-record` and GetScheduleRecord).
  bool keep_schedule_record = true;
  // Every value placed in the workspace starts at a multiple of this many
  // bytes (cache-line alignment keeps vector loads aligned).
  int64_t workspace_alignment_bytes = 64;
};

// The options a PassContext's config asks for (te.keep_schedule_record).
LowerOptions LowerOptionsFromContext(const PassContext& context);

}  // namespace kiln::lower
