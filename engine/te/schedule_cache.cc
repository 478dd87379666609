// cache_read and cache_write: stages that stage data through a buffer of
// another scope. Both build new operations and rewrite existing ones while
// keeping every existing output buffer, so tensors the caller holds still
// name their stages.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/loop/functor.h"
#include "engine/te/load_rewriter.h"
#include "engine/te/schedule.h"
#include "engine/te/schedule_internal.h"

namespace kiln::te {

using internal::MakeIterVar;

namespace {

std::vector<IterVar> FreshAxes(const std::vector<int64_t>& shape) {
  std::vector<IterVar> axes;
  for (size_t i = 0; i < shape.size(); ++i) {
    axes.push_back(MakeIterVar(absl::StrCat("ax", i), shape[i], /*is_reduce=*/false));
  }
  return axes;
}

std::vector<PrimExpr> AxisVars(const std::vector<IterVar>& axes) {
  std::vector<PrimExpr> vars;
  for (const IterVar& axis : axes) vars.push_back(axis->var);
  return vars;
}

bool ReadsBuffer(const Stage& stage, const loop::Buffer& buffer) {
  for (const Tensor& input : stage.op->inputs) {
    if (input.op()->buffer.same_as(buffer)) return true;
  }
  return false;
}

}  // namespace

Tensor Schedule::CacheRead(const Tensor& t, const std::string& scope,
                           const std::vector<Tensor>& readers) {
  int index = StageIndexOrError(t, "cache_read");
  if (index < 0) return Tensor();
  if (t.is_symbolic()) {
    Fail(absl::InvalidArgumentError(absl::StrCat(
        "cache_read of ", t.name(), ": its shape is known only at run time (a cache stage needs it)")));
    return Tensor();
  }
  const Stage& source = *state_->stages[index];
  if (scope.empty() || readers.empty()) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat("cache_read of ", source.name(), ": needs a scope and at least one reader")));
    return Tensor();
  }
  std::vector<int> reader_indices;
  std::vector<std::string> arguments{source.name(), scope};
  std::vector<Span> reader_spans;
  for (const Tensor& reader : readers) {
    int reader_index = StageIndexOrError(reader, "cache_read");
    if (reader_index < 0) return Tensor();
    const Stage& reader_stage = *state_->stages[reader_index];
    if (!CheckCompute(reader_stage, "cache_read")) return Tensor();
    if (!ReadsBuffer(reader_stage, source.buffer())) {
      Fail(absl::InvalidArgumentError(absl::StrCat("cache_read of ", source.name(), ": ",
                                                   reader_stage.name(), " does not read it")));
      return Tensor();
    }
    if (std::find(reader_indices.begin(), reader_indices.end(), reader_index) !=
        reader_indices.end()) {
      continue;
    }
    reader_indices.push_back(reader_index);
    arguments.push_back(reader_stage.name());
    reader_spans.push_back(reader_stage.op->span);
  }

  // The copy exists to serve the readers, so it carries their spans.
  auto cache_op = std::make_shared<OperationNode>();
  cache_op->kind = OperationNode::Kind::kCompute;
  cache_op->name = absl::StrCat(source.name(), ".", scope);
  cache_op->buffer =
      loop::MakeBuffer(cache_op->name, source.buffer()->dtype, source.buffer()->shape, scope);
  cache_op->axis = FreshAxes(source.buffer()->shape);
  cache_op->body = ComputeBody(loop::MakeBufferLoad(source.buffer(), AxisVars(cache_op->axis)));
  cache_op->inputs = {Tensor(source.op)};
  cache_op->tag = "cache_read";
  cache_op->span = MakeSequentialSpan(reader_spans);
  Tensor cache(cache_op);

  std::vector<StagePtr> stages = state_->stages;
  const loop::Buffer& from = source.buffer();
  LoadRewrite to_cache = [&](const loop::BufferLoadNode* load,
                             const std::vector<PrimExpr>& indices) -> PrimExpr {
    if (!load->buffer.same_as(from)) return nullptr;
    return loop::MakeBufferLoad(cache_op->buffer, indices, load->span);
  };
  for (int reader_index : reader_indices) {
    const Stage& reader = *stages[reader_index];
    auto op = std::make_shared<OperationNode>(*reader.op);
    op->body->value = RewriteLoads(op->body->value, to_cache);
    op->body->condition = RewriteLoads(op->body->condition, to_cache);
    for (Tensor& input : op->inputs) {
      if (input.op()->buffer.same_as(from)) input = cache;
    }
    auto modified = std::make_shared<Stage>(reader);
    modified->op = std::move(op);
    stages[reader_index] = std::move(modified);
  }
  auto cache_stage = std::make_shared<Stage>();
  cache_stage->op = cache_op;
  cache_stage->leaf_iter_vars = cache_op->axis;
  // Right after the source: before every reader, so the order stays topological.
  stages.insert(stages.begin() + index + 1, std::move(cache_stage));
  Commit(std::move(stages), "cache_read", std::move(arguments));
  return cache;
}

Tensor Schedule::CacheWrite(const Tensor& t, const std::string& scope) {
  int index = StageIndexOrError(t, "cache_write");
  if (index < 0) return Tensor();
  if (t.is_symbolic()) {
    Fail(absl::InvalidArgumentError(absl::StrCat(
        "cache_write of ", t.name(), ": its shape is known only at run time (a cache stage needs it)")));
    return Tensor();
  }
  const Stage& stage = *state_->stages[index];
  if (!CheckCompute(stage, "cache_write")) return Tensor();
  if (scope.empty()) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat("cache_write of ", stage.name(), ": needs a scope")));
    return Tensor();
  }
  const OperationNode& op = *stage.op;
  std::vector<IterVar> vanilla_leaves = op.axis;
  vanilla_leaves.insert(vanilla_leaves.end(), op.body->reduce_axes.begin(),
                        op.body->reduce_axes.end());
  if (!stage.relations.empty() || !stage.loop_kinds.empty() ||
      stage.leaf_iter_vars != vanilla_leaves) {
    // The loops move to the cache stage; earlier primitives would have to
    // be replayed on it, which the caller can do explicitly.
    Fail(absl::InvalidArgumentError(absl::StrCat(
        "cache_write of ", stage.name(), ": must come before other loop primitives on it")));
    return Tensor();
  }
  if (internal::HasAttachedStages(state_->stages, stage)) {
    Fail(absl::InvalidArgumentError(
        absl::StrCat("cache_write of ", stage.name(), ": other stages are computed at its loops")));
    return Tensor();
  }

  auto cache_op = std::make_shared<OperationNode>();
  cache_op->kind = OperationNode::Kind::kCompute;
  cache_op->name = absl::StrCat(op.name, ".", scope);
  cache_op->buffer = loop::MakeBuffer(cache_op->name, op.buffer->dtype, op.buffer->shape, scope);
  cache_op->axis = FreshAxes(op.buffer->shape);
  auto to_cache_axes = [&](const loop::VarNode* var) -> PrimExpr {
    for (size_t i = 0; i < op.axis.size(); ++i) {
      if (op.axis[i]->var.get() == var) return cache_op->axis[i]->var;
    }
    return nullptr;
  };
  ComputeBody body = *op.body;  // the reduce axes move with it
  body.value = loop::Substitute(body.value, to_cache_axes);
  if (body.condition.defined()) body.condition = loop::Substitute(body.condition, to_cache_axes);
  cache_op->body = std::move(body);
  cache_op->inputs = op.inputs;
  cache_op->tag = op.tag;
  cache_op->span = op.span;
  Tensor cache(cache_op);

  auto copy_op = std::make_shared<OperationNode>(op);
  copy_op->body = ComputeBody(loop::MakeBufferLoad(cache_op->buffer, AxisVars(op.axis)));
  copy_op->inputs = {cache};

  auto cache_stage = std::make_shared<Stage>();
  cache_stage->op = cache_op;
  cache_stage->leaf_iter_vars = cache_op->axis;
  cache_stage->leaf_iter_vars.insert(cache_stage->leaf_iter_vars.end(),
                                     cache_op->body->reduce_axes.begin(),
                                     cache_op->body->reduce_axes.end());
  auto copy_stage = std::make_shared<Stage>(stage);
  copy_stage->op = std::move(copy_op);
  copy_stage->leaf_iter_vars = stage.op->axis;

  std::vector<StagePtr> stages = state_->stages;
  stages[index] = std::move(copy_stage);
  stages.insert(stages.begin() + index, std::move(cache_stage));
  Commit(std::move(stages), "cache_write", {op.name, scope});
  return cache;
}

}  // namespace kiln::te
