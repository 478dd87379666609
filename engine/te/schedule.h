// Schedules: how the computations of a tensor expression become loops. A
// schedule holds one stage per operation; primitives (split, fuse, reorder,
// vectorize, compute_at, cache_read, ...) change a stage's loop structure
// without changing what is computed. LowerSchedule (lower_schedule.h) turns a
// schedule into loop IR.
//
// Every primitive appends a step to the schedule record: its name, its
// arguments and a snapshot of the schedule after it (step 0 is the vanilla
// schedule). Stages are immutable and shared, so a snapshot is one pointer
// copy; the loop IR of a step is produced only when someone lowers it.
//
// Errors a caller can cause (an axis that is not a leaf of the stage, a
// factor <= 0, vectorizing a reduce axis, inlining a reduction, ...) do not
// crash: the primitive does nothing, returns null iteration variables where it
// returns any, records no step, and keeps the first such error in status().
// Later primitives are no-ops and LowerSchedule returns that error. This keeps
// the fixed, value-returning primitive signatures and lets a caller check once.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "engine/loop/stmt.h"
#include "engine/te/tensor.h"

namespace kiln::te {

// How an iteration variable was derived from others.
//  split: parent -> (outer, inner), parent = outer * inner_extent + inner,
//         requested as `factor` (inner extent) or `nparts` (outer extent);
//  fuse:  (outer, inner) -> fused (stored in `parent`),
//         outer = fused / inner_extent, inner = fused % inner_extent.
struct IterVarRelation {
  enum class Kind { kSplit, kFuse };
  Kind kind = Kind::kSplit;
  IterVar parent;
  IterVar outer;
  IterVar inner;
  int64_t factor = 0;  // split by factor, else 0
  int64_t nparts = 0;  // split by number of outer parts, else 0
};

// Where a stage's loop nest is placed.
enum class AttachKind {
  kRoot,    // its own loop nest at the top of the function
  kInline,  // substituted into its readers (no loops, no buffer)
  kScope,   // inside the consumer's loop at attach_axis (compute_at)
};

// The schedule of one operation. Immutable once in a schedule; primitives
// build a modified copy.
struct Stage {
  // The operation computed. cache_read / cache_write rewrite the readers and
  // the cached operation; the output buffer (the stage's identity) stays.
  Operation op;
  // The current loops, outermost first. Equal to the op's axes followed by its
  // reduce axes until split / fuse / reorder change them.
  std::vector<IterVar> leaf_iter_vars;
  std::vector<IterVarRelation> relations;  // in the order applied
  // Loop kinds other than serial, set by vectorize / parallel / unroll.
  std::vector<std::pair<IterVar, loop::ForKind>> loop_kinds;
  AttachKind attach = AttachKind::kRoot;
  loop::Buffer attach_consumer;  // kScope: the consumer stage's output buffer
  IterVar attach_axis;           // kScope: a leaf of the consumer
  bool is_output = false;

  bool is_placeholder() const { return op->kind == OperationNode::Kind::kPlaceholder; }
  const std::string& name() const { return op->name; }
  const loop::Buffer& buffer() const { return op->buffer; }
  loop::ForKind LoopKind(const IterVar& leaf) const;
};
using StagePtr = std::shared_ptr<const Stage>;

struct ScheduleOptions {
  bool keep_record = true;
};

struct ScheduleStep;
struct ScheduleState;

// A value type: copies are independent, and cheap (stages are shared).
class Schedule {
 public:
  Schedule();  // no stages

  // Stages for every operation reachable from `outputs`, in topological order
  // (inputs first, then in the order the outputs and their inputs are listed).
  static Schedule Create(const std::vector<Tensor>& outputs, ScheduleOptions options = {});

  // Primitives on the stage of `t` (a compute tensor of this schedule). Each
  // appends one record step; Tile appends split, split, reorder.
  // Split by factor: inner extent `factor`, outer extent ceil(extent / factor).
  std::pair<IterVar, IterVar> Split(const Tensor& t, const IterVar& axis, int64_t factor);
  // Split into `nparts` outer iterations of ceil(extent / nparts) inner ones.
  std::pair<IterVar, IterVar> SplitNParts(const Tensor& t, const IterVar& axis, int64_t nparts);
  // Returns {x.outer, y.outer, x.inner, y.inner}, in that loop order.
  std::array<IterVar, 4> Tile(const Tensor& t, const IterVar& x, const IterVar& y, int64_t fx,
                              int64_t fy);
  // `outer` must be immediately followed by `inner` in the leaf order, both
  // data-parallel or both reduce.
  IterVar Fuse(const Tensor& t, const IterVar& outer, const IterVar& inner);
  // The listed leaves take the positions they occupy now, in the given order;
  // other leaves stay where they are.
  void Reorder(const Tensor& t, const std::vector<IterVar>& order);
  void Vectorize(const Tensor& t, const IterVar& axis);  // data-parallel leaves only
  void Parallel(const Tensor& t, const IterVar& axis);   // data-parallel leaves only
  void Unroll(const Tensor& t, const IterVar& axis);
  // Computes `producer` inside the loop of `axis` (a leaf of `consumer`), only
  // the region the consumer's iterations below that loop read. The consumer
  // must be the producer's only reader once inlining is applied.
  void ComputeAt(const Tensor& producer, const Tensor& consumer, const IterVar& axis);
  // Substitutes the body into every reader. Not for reductions or outputs.
  void ComputeInline(const Tensor& t);
  // Undoes compute_at / compute_inline.
  void ComputeRoot(const Tensor& t);
  // A stage "<t>.<scope>" copying `t`, read by `readers` instead of `t`. The
  // copy is a buffer of `scope`.
  Tensor CacheRead(const Tensor& t, const std::string& scope, const std::vector<Tensor>& readers);
  // A stage "<t>.<scope>" computing t's body into a `scope` buffer; t becomes
  // a copy of it. t's reduce axes move to the cache stage. Must precede the
  // other loop primitives on t.
  Tensor CacheWrite(const Tensor& t, const std::string& scope);

  // Current leaf iteration variables of a stage, outermost first.
  std::vector<IterVar> LeafIterVars(const Tensor& t) const;
  // The stage op's data-parallel axes and reduce axes.
  const std::vector<IterVar>& Axes(const Tensor& t) const;
  const std::vector<IterVar>& ReduceAxes(const Tensor& t) const;

  // Steps so far (empty when keep_record is false). Step 0 is "vanilla". A
  // step's snapshot carries no record of its own.
  const std::vector<ScheduleStep>& record() const;
  const std::vector<Tensor>& outputs() const;
  const ScheduleOptions& options() const;
  // OK, or the first error a primitive reported (see the header comment).
  const absl::Status& status() const;

  // Stages in topological order; FindStage returns null for a tensor that is
  // not part of this schedule.
  const std::vector<StagePtr>& stages() const;
  const Stage* FindStage(const Tensor& t) const;

 private:
  explicit Schedule(std::shared_ptr<const ScheduleState> state);

  // Index of t's stage, or -1 after recording an error naming `primitive`.
  int StageIndexOrError(const Tensor& t, const char* primitive);
  bool CheckCompute(const Stage& stage, const char* primitive);
  bool CheckStaticExtent(const Stage& stage, const IterVar& axis, const char* primitive);
  bool CheckLeaf(const Stage& stage, const IterVar& axis, const char* primitive);
  void Fail(absl::Status status);
  // Installs `stages` as the new state and appends a record step.
  void Commit(std::vector<StagePtr> stages, std::string primitive,
              std::vector<std::string> arguments);
  void SetLoopKind(const Tensor& t, const IterVar& axis, loop::ForKind kind, const char* primitive);

  std::shared_ptr<const ScheduleState> state_;
  // Shared between copies until one of them appends (copy on write).
  std::shared_ptr<std::vector<ScheduleStep>> record_;
};

// One entry of the schedule record. "The loop IR after the step" is
// LowerSchedule(step.snapshot, ...), produced on demand.
struct ScheduleStep {
  std::string primitive;               // "vanilla", "split", "reorder", "vectorize", ...
  std::vector<std::string> arguments;  // stage name, axis names, "factor=32", ...
  Schedule snapshot;                   // the schedule after this step
};

// What a Schedule shares between its copies and snapshots.
struct ScheduleState {
  std::vector<StagePtr> stages;  // topological order
  std::vector<Tensor> outputs;
  ScheduleOptions options;
  absl::Status error;
};

}  // namespace kiln::te
