// Schedule creation, the loop primitives, attachment primitives and the
// record. Cache primitives live in schedule_cache.cc.
#include "engine/te/schedule.h"

#include <algorithm>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/te/schedule_internal.h"

namespace kiln::te {

loop::ForKind Stage::LoopKind(const IterVar& leaf) const {
  for (const auto& [var, kind] : loop_kinds) {
    if (var == leaf) return kind;
  }
  return loop::ForKind::kSerial;
}

namespace internal {

IterVar MakeIterVar(std::string name, int64_t extent, bool is_reduce) {
  return std::make_shared<const IterVarNode>(
      IterVarNode{loop::MakeVar(std::move(name)), extent, is_reduce});
}

const std::string& AxisName(const IterVar& axis) { return axis->var->name; }

int FindStageIndex(const std::vector<StagePtr>& stages, const loop::Buffer& buffer) {
  for (size_t i = 0; i < stages.size(); ++i) {
    if (stages[i]->buffer().same_as(buffer)) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int> InputStageIndices(const std::vector<StagePtr>& stages, const Stage& stage) {
  std::vector<int> result;
  for (const Tensor& input : stage.op->inputs) {
    int index = FindStageIndex(stages, input.op()->buffer);
    KILN_CHECK(index >= 0) << "stage " << stage.name() << " reads " << input.name()
                           << ", which has no stage";
    if (std::find(result.begin(), result.end(), index) == result.end()) result.push_back(index);
  }
  return result;
}

bool HasAttachedStages(const std::vector<StagePtr>& stages, const Stage& target) {
  for (const StagePtr& stage : stages) {
    if (stage->attach == AttachKind::kScope && stage->attach_consumer.same_as(target.buffer())) {
      return true;
    }
  }
  return false;
}

}  // namespace internal

using internal::AxisName;
using internal::FindStageIndex;
using internal::HasAttachedStages;
using internal::MakeIterVar;

namespace {

const std::vector<IterVar>& EmptyAxes() {
  static const std::vector<IterVar> empty;
  return empty;
}

std::string LeafNames(const Stage& stage) {
  std::vector<std::string> names;
  for (const IterVar& leaf : stage.leaf_iter_vars) names.push_back(AxisName(leaf));
  return absl::StrJoin(names, ", ");
}

// Post-order over op inputs without recursion (fused chains can be long).
std::vector<Operation> TopologicalOps(const std::vector<Tensor>& outputs) {
  std::vector<Operation> order;
  std::unordered_set<const OperationNode*> visited;
  struct Frame {
    Operation op;
    size_t next_input;
  };
  for (const Tensor& output : outputs) {
    if (!visited.insert(output.op().get()).second) continue;
    std::vector<Frame> stack{{output.op(), 0}};
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.next_input < frame.op->inputs.size()) {
        const Operation& input = frame.op->inputs[frame.next_input++].op();
        if (visited.insert(input.get()).second) stack.push_back({input, 0});
        continue;
      }
      order.push_back(frame.op);
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace

Schedule::Schedule() : state_(std::make_shared<const ScheduleState>()) {}

Schedule::Schedule(std::shared_ptr<const ScheduleState> state) : state_(std::move(state)) {}

Schedule Schedule::Create(const std::vector<Tensor>& outputs, ScheduleOptions options) {
  auto state = std::make_shared<ScheduleState>();
  state->outputs = outputs;
  state->options = options;
  for (const Tensor& output : outputs) KILN_CHECK(output.defined()) << "undefined output tensor";
  for (const Operation& op : TopologicalOps(outputs)) {
    auto stage = std::make_shared<Stage>();
    stage->op = op;
    stage->leaf_iter_vars = op->axis;
    if (op->body.has_value()) {
      stage->leaf_iter_vars.insert(stage->leaf_iter_vars.end(), op->body->reduce_axes.begin(),
                                   op->body->reduce_axes.end());
    }
    for (const Tensor& output : outputs) stage->is_output |= output.op() == op;
    state->stages.push_back(std::move(stage));
  }
  Schedule schedule(std::move(state));
  if (options.keep_record) {
    std::vector<std::string> names;
    for (const Tensor& output : outputs) names.push_back(output.name());
    schedule.record_ = std::make_shared<std::vector<ScheduleStep>>();
    schedule.record_->push_back(
        ScheduleStep{"vanilla", std::move(names), Schedule(schedule.state_)});
  }
  return schedule;
}

// --- bookkeeping -------------------------------------------------------------

void Schedule::Fail(absl::Status status) {
  if (!state_->error.ok()) return;
  auto state = std::make_shared<ScheduleState>(*state_);
  state->error = std::move(status);
  state_ = std::move(state);
}

int Schedule::StageIndexOrError(const Tensor& t, const char* primitive) {
  if (!state_->error.ok()) return -1;
  if (!t.defined()) {
    Fail(absl::InvalidArgumentError(absl::StrCat(primitive, ": undefined tensor")));
    return -1;
  }
  int index = FindStageIndex(state_->stages, t.op()->buffer);
  if (index < 0) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat(primitive, ": tensor ", t.name(), " is not part of this schedule")));
  }
  return index;
}

bool Schedule::CheckLeaf(const Stage& stage, const IterVar& axis, const char* primitive) {
  if (axis == nullptr) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat(primitive, " on stage ", stage.name(), ": null iteration variable")));
    return false;
  }
  const auto& leaves = stage.leaf_iter_vars;
  if (std::find(leaves.begin(), leaves.end(), axis) == leaves.end()) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat(primitive, " on stage ", stage.name(), ": ", AxisName(axis),
                     " is not one of its current loops (", LeafNames(stage), ")")));
    return false;
  }
  return true;
}

void Schedule::Commit(std::vector<StagePtr> stages, std::string primitive,
                      std::vector<std::string> arguments) {
  auto state = std::make_shared<ScheduleState>();
  state->stages = std::move(stages);
  state->outputs = state_->outputs;
  state->options = state_->options;
  state_ = std::move(state);
  if (!state_->options.keep_record) return;
  if (record_ == nullptr) {
    record_ = std::make_shared<std::vector<ScheduleStep>>();
  } else if (record_.use_count() > 1) {
    record_ = std::make_shared<std::vector<ScheduleStep>>(*record_);
  }
  record_->push_back(ScheduleStep{std::move(primitive), std::move(arguments), Schedule(state_)});
}

bool Schedule::CheckCompute(const Stage& stage, const char* primitive) {
  if (!stage.is_placeholder()) return true;
  Fail(absl::InvalidArgumentError(absl::StrCat(
      primitive, ": ", stage.name(), " is a placeholder; only compute stages have loops")));
  return false;
}

// --- loop primitives -----------------------------------------------------------

// Splits, fuses, vector lanes and unrolling need a loop's extent when the schedule is lowered; a
// loop over a symbolic dimension has it only at run time.
bool Schedule::CheckStaticExtent(const Stage& stage, const IterVar& axis, const char* primitive) {
  if (!axis->is_symbolic()) return true;
  Fail(absl::InvalidArgumentError(
      absl::StrCat(primitive, " on stage ", stage.name(), ": ", AxisName(axis),
                   " runs over a dimension known only at run time")));
  return false;
}

namespace {
std::pair<IterVar, IterVar> SplitLeaf(Stage* stage, const IterVar& axis, int64_t factor,
                                      int64_t nparts) {
  int64_t extent = axis->extent;
  int64_t inner_extent = factor > 0 ? factor : (extent + nparts - 1) / nparts;
  int64_t outer_extent = factor > 0 ? (extent + factor - 1) / factor : nparts;
  IterVar outer = MakeIterVar(AxisName(axis) + ".outer", outer_extent, axis->is_reduce);
  IterVar inner = MakeIterVar(AxisName(axis) + ".inner", inner_extent, axis->is_reduce);
  auto& leaves = stage->leaf_iter_vars;
  auto it = std::find(leaves.begin(), leaves.end(), axis);
  it = leaves.erase(it);
  leaves.insert(it, {outer, inner});
  stage->relations.push_back(
      IterVarRelation{IterVarRelation::Kind::kSplit, axis, outer, inner, factor, nparts});
  return {outer, inner};
}
}  // namespace

std::pair<IterVar, IterVar> Schedule::Split(const Tensor& t, const IterVar& axis, int64_t factor) {
  int index = StageIndexOrError(t, "split");
  if (index < 0) return {};
  const Stage& stage = *state_->stages[index];
  if (!CheckCompute(stage, "split")) return {};
  if (!CheckLeaf(stage, axis, "split")) return {};
  if (!CheckStaticExtent(stage, axis, "split")) return {};
  if (factor <= 0) {
    Fail(absl::InvalidArgumentError(absl::StrCat("split of ", stage.name(), ".", AxisName(axis),
                                                 ": factor must be positive, got ", factor)));
    return {};
  }
  auto modified = std::make_shared<Stage>(stage);
  auto result = SplitLeaf(modified.get(), axis, factor, 0);
  std::vector<StagePtr> stages = state_->stages;
  stages[index] = std::move(modified);
  Commit(std::move(stages), "split",
         {stage.name(), AxisName(axis), absl::StrCat("factor=", factor)});
  return result;
}

std::pair<IterVar, IterVar> Schedule::SplitNParts(const Tensor& t, const IterVar& axis,
                                                  int64_t nparts) {
  int index = StageIndexOrError(t, "split");
  if (index < 0) return {};
  const Stage& stage = *state_->stages[index];
  if (!CheckCompute(stage, "split")) return {};
  if (!CheckLeaf(stage, axis, "split")) return {};
  if (!CheckStaticExtent(stage, axis, "split")) return {};
  if (nparts <= 0) {
    Fail(absl::InvalidArgumentError(absl::StrCat("split of ", stage.name(), ".", AxisName(axis),
                                                 ": nparts must be positive, got ", nparts)));
    return {};
  }
  auto modified = std::make_shared<Stage>(stage);
  auto result = SplitLeaf(modified.get(), axis, 0, nparts);
  std::vector<StagePtr> stages = state_->stages;
  stages[index] = std::move(modified);
  Commit(std::move(stages), "split",
         {stage.name(), AxisName(axis), absl::StrCat("nparts=", nparts)});
  return result;
}

std::array<IterVar, 4> Schedule::Tile(const Tensor& t, const IterVar& x, const IterVar& y,
                                      int64_t fx, int64_t fy) {
  // Sugar, recorded as its parts (the seed's "tile -> split + split + reorder").
  auto [xo, xi] = Split(t, x, fx);
  auto [yo, yi] = Split(t, y, fy);
  if (!state_->error.ok()) return {};
  Reorder(t, {xo, yo, xi, yi});
  if (!state_->error.ok()) return {};
  return {xo, yo, xi, yi};
}

IterVar Schedule::Fuse(const Tensor& t, const IterVar& outer, const IterVar& inner) {
  int index = StageIndexOrError(t, "fuse");
  if (index < 0) return nullptr;
  const Stage& stage = *state_->stages[index];
  if (!CheckCompute(stage, "fuse")) return nullptr;
  if (!CheckLeaf(stage, outer, "fuse") || !CheckLeaf(stage, inner, "fuse")) return nullptr;
  if (!CheckStaticExtent(stage, outer, "fuse") || !CheckStaticExtent(stage, inner, "fuse")) {
    return nullptr;
  }
  const auto& leaves = stage.leaf_iter_vars;
  auto outer_pos = std::find(leaves.begin(), leaves.end(), outer) - leaves.begin();
  auto inner_pos = std::find(leaves.begin(), leaves.end(), inner) - leaves.begin();
  if (inner_pos != outer_pos + 1) {
    Fail(absl::InvalidArgumentError(absl::StrCat(
        "fuse on stage ", stage.name(), ": ", AxisName(inner), " must immediately follow ",
        AxisName(outer), " in the loop order (", LeafNames(stage), ")")));
    return nullptr;
  }
  if (outer->is_reduce != inner->is_reduce) {
    Fail(absl::InvalidArgumentError(absl::StrCat("fuse on stage ", stage.name(),
                                                 ": cannot fuse data-parallel and reduce loops ",
                                                 AxisName(outer), " and ", AxisName(inner))));
    return nullptr;
  }
  IterVar fused = MakeIterVar(absl::StrCat(AxisName(outer), ".", AxisName(inner), ".fused"),
                              outer->extent * inner->extent, outer->is_reduce);
  auto modified = std::make_shared<Stage>(stage);
  auto& new_leaves = modified->leaf_iter_vars;
  new_leaves.erase(new_leaves.begin() + outer_pos, new_leaves.begin() + outer_pos + 2);
  new_leaves.insert(new_leaves.begin() + outer_pos, fused);
  modified->relations.push_back(
      IterVarRelation{IterVarRelation::Kind::kFuse, fused, outer, inner, 0, 0});
  std::vector<StagePtr> stages = state_->stages;
  stages[index] = std::move(modified);
  Commit(std::move(stages), "fuse", {stage.name(), AxisName(outer), AxisName(inner)});
  return fused;
}

void Schedule::Reorder(const Tensor& t, const std::vector<IterVar>& order) {
  int index = StageIndexOrError(t, "reorder");
  if (index < 0) return;
  const Stage& stage = *state_->stages[index];
  if (!CheckCompute(stage, "reorder")) return;
  std::vector<size_t> positions;
  std::vector<std::string> arguments{stage.name()};
  const auto& leaves = stage.leaf_iter_vars;
  for (const IterVar& axis : order) {
    if (!CheckLeaf(stage, axis, "reorder")) return;
    size_t position = std::find(leaves.begin(), leaves.end(), axis) - leaves.begin();
    if (std::find(positions.begin(), positions.end(), position) != positions.end()) {
      return Fail(absl::InvalidArgumentError(absl::StrCat("reorder on stage ", stage.name(), ": ",
                                                          AxisName(axis), " is listed twice")));
    }
    positions.push_back(position);
    arguments.push_back(AxisName(axis));
  }
  std::sort(positions.begin(), positions.end());
  auto modified = std::make_shared<Stage>(stage);
  for (size_t i = 0; i < order.size(); ++i) modified->leaf_iter_vars[positions[i]] = order[i];
  std::vector<StagePtr> stages = state_->stages;
  stages[index] = std::move(modified);
  Commit(std::move(stages), "reorder", std::move(arguments));
}

void Schedule::SetLoopKind(const Tensor& t, const IterVar& axis, loop::ForKind kind,
                           const char* primitive) {
  int index = StageIndexOrError(t, primitive);
  if (index < 0) return;
  const Stage& stage = *state_->stages[index];
  if (!CheckCompute(stage, primitive)) return;
  if (!CheckLeaf(stage, axis, primitive)) return;
  if (kind != loop::ForKind::kParallel && !CheckStaticExtent(stage, axis, primitive)) return;
  if (axis->is_reduce && kind != loop::ForKind::kUnrolled) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat(primitive, " on stage ", stage.name(), ": ", AxisName(axis),
                     " is a reduce loop; lanes or threads would race on the accumulator")));
  }
  auto modified = std::make_shared<Stage>(stage);
  auto& kinds = modified->loop_kinds;
  kinds.erase(std::remove_if(kinds.begin(), kinds.end(),
                             [&](const auto& entry) { return entry.first == axis; }),
              kinds.end());
  kinds.emplace_back(axis, kind);
  std::vector<StagePtr> stages = state_->stages;
  stages[index] = std::move(modified);
  Commit(std::move(stages), primitive, {stage.name(), AxisName(axis)});
}

void Schedule::Vectorize(const Tensor& t, const IterVar& axis) {
  SetLoopKind(t, axis, loop::ForKind::kVectorized, "vectorize");
}
void Schedule::Parallel(const Tensor& t, const IterVar& axis) {
  SetLoopKind(t, axis, loop::ForKind::kParallel, "parallel");
}
void Schedule::Unroll(const Tensor& t, const IterVar& axis) {
  SetLoopKind(t, axis, loop::ForKind::kUnrolled, "unroll");
}

// --- attachment primitives -------------------------------------------------------

namespace {
// True when `consumer` reads `producer` directly or through other stages.
bool DependsOn(const std::vector<StagePtr>& stages, int consumer, int producer) {
  std::vector<int> work{consumer};
  std::vector<bool> seen(stages.size(), false);
  while (!work.empty()) {
    int current = work.back();
    work.pop_back();
    for (int input : internal::InputStageIndices(stages, *stages[current])) {
      if (input == producer) return true;
      if (!seen[input]) {
        seen[input] = true;
        work.push_back(input);
      }
    }
  }
  return false;
}

}  // namespace

void Schedule::ComputeAt(const Tensor& producer, const Tensor& consumer, const IterVar& axis) {
  int index = StageIndexOrError(producer, "compute_at");
  if (index < 0) return;
  int consumer_index = StageIndexOrError(consumer, "compute_at");
  if (consumer_index < 0) return;
  const Stage& stage = *state_->stages[index];
  const Stage& target = *state_->stages[consumer_index];
  if (!CheckCompute(stage, "compute_at")) return;
  if (!CheckCompute(target, "compute_at")) return;
  if (stage.is_output) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("compute_at: ", stage.name(),
                     " is an output of the schedule; outputs are computed at root")));
  }
  if (!CheckLeaf(target, axis, "compute_at")) return;
  if (!DependsOn(state_->stages, consumer_index, index)) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("compute_at: ", target.name(), " does not read ", stage.name())));
  }
  if (target.attach == AttachKind::kInline) {
    return Fail(absl::InvalidArgumentError(absl::StrCat("compute_at: ", target.name(),
                                                        " is inlined and has no loops to compute ",
                                                        stage.name(), " in")));
  }
  auto modified = std::make_shared<Stage>(stage);
  modified->attach = AttachKind::kScope;
  modified->attach_consumer = target.buffer();
  modified->attach_axis = axis;
  std::vector<StagePtr> stages = state_->stages;
  stages[index] = std::move(modified);
  Commit(std::move(stages), "compute_at", {stage.name(), target.name(), AxisName(axis)});
}

void Schedule::ComputeInline(const Tensor& t) {
  int index = StageIndexOrError(t, "compute_inline");
  if (index < 0) return;
  const Stage& stage = *state_->stages[index];
  if (!CheckCompute(stage, "compute_inline")) return;
  if (stage.is_output) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "compute_inline: ", stage.name(), " is an output of the schedule and must be stored")));
  }
  if (stage.op->body->reduce.has_value()) {
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        "compute_inline: ", stage.name(), " is a reduction (",
        ReduceKindName(*stage.op->body->reduce), "); only element-wise computes can be inlined")));
  }
  if (HasAttachedStages(state_->stages, stage)) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("compute_inline: other stages are computed at ", stage.name(), "'s loops")));
  }
  auto modified = std::make_shared<Stage>(stage);
  modified->attach = AttachKind::kInline;
  modified->attach_consumer = nullptr;
  modified->attach_axis = nullptr;
  std::vector<StagePtr> stages = state_->stages;
  stages[index] = std::move(modified);
  Commit(std::move(stages), "compute_inline", {stage.name()});
}

void Schedule::ComputeRoot(const Tensor& t) {
  int index = StageIndexOrError(t, "compute_root");
  if (index < 0) return;
  const Stage& stage = *state_->stages[index];
  if (!CheckCompute(stage, "compute_root")) return;
  auto modified = std::make_shared<Stage>(stage);
  modified->attach = AttachKind::kRoot;
  modified->attach_consumer = nullptr;
  modified->attach_axis = nullptr;
  std::vector<StagePtr> stages = state_->stages;
  stages[index] = std::move(modified);
  Commit(std::move(stages), "compute_root", {stage.name()});
}

// --- queries -------------------------------------------------------------------

std::vector<IterVar> Schedule::LeafIterVars(const Tensor& t) const {
  const Stage* stage = FindStage(t);
  return stage == nullptr ? std::vector<IterVar>{} : stage->leaf_iter_vars;
}

const std::vector<IterVar>& Schedule::Axes(const Tensor& t) const {
  const Stage* stage = FindStage(t);
  if (stage != nullptr) return stage->op->axis;
  return t.defined() ? t.op()->axis : EmptyAxes();
}

const std::vector<IterVar>& Schedule::ReduceAxes(const Tensor& t) const {
  const Stage* stage = FindStage(t);
  const Operation& op = stage != nullptr ? stage->op : t.op();
  if (op == nullptr || !op->body.has_value()) return EmptyAxes();
  return op->body->reduce_axes;
}

const std::vector<ScheduleStep>& Schedule::record() const {
  static const std::vector<ScheduleStep> empty;
  return record_ == nullptr ? empty : *record_;
}

const std::vector<Tensor>& Schedule::outputs() const { return state_->outputs; }
const ScheduleOptions& Schedule::options() const { return state_->options; }
const absl::Status& Schedule::status() const { return state_->error; }
const std::vector<StagePtr>& Schedule::stages() const { return state_->stages; }

const Stage* Schedule::FindStage(const Tensor& t) const {
  if (!t.defined()) return nullptr;
  int index = FindStageIndex(state_->stages, t.op()->buffer);
  return index < 0 ? nullptr : state_->stages[index].get();
}

}  // namespace kiln::te
