// Schedule -> PrimFunc. Stages are planned in four passes over the
// topological order: inlining (forward), readers and attachment checks,
// layouts (backward: a compute_at stage's region depends on its consumer's
// loops), then emission from the root stages down through attached ones.
#include "engine/te/lower_schedule.h"

#include <algorithm>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "engine/loop/arith/analyzer.h"
#include "engine/loop/arith/expr_deep_equal.h"
#include "engine/loop/functor.h"
#include "engine/support/status_macros.h"
#include "engine/te/bound.h"
#include "engine/te/load_rewriter.h"
#include "engine/te/schedule_internal.h"

namespace kiln::te {

namespace {

using loop::Buffer;
using loop::PrimExpr;
using loop::Stmt;
using loop::Var;
using loop::arith::Interval;

struct StagePlan {
  const Stage* stage = nullptr;
  bool is_param = false;
  bool inlined = false;
  bool emitted = false;  // a compute stage with its own loop nest
  // The op's span, preceded by the spans of the stages inlined into it: the
  // statements that compute this stage also compute those.
  Span span;
  // The body after inlining, over the op's axes and reduce axes.
  PrimExpr value;
  PrimExpr condition;
  std::vector<int> readers;  // emitted stages that load this one
  // Stages computed inside the loop of each leaf, in topological order.
  std::vector<std::vector<int>> attached;

  // Layout. Dimension d of the output is computed over
  // [region_min[d], region_min[d] + region_extent[d]).
  std::vector<PrimExpr> region_min;
  std::vector<PrimExpr> region_extent;  // constants, or symbolic dimensions computed whole
  // Loop extents: constants, except loops over symbolic dimensions (never split or fused).
  std::unordered_map<const IterVarNode*, PrimExpr> extents;  // lookup only
  Buffer storage;  // the op's buffer, or a region buffer for compute_at
  bool region_buffer = false;
  std::vector<PrimExpr> store_indices;
  PrimExpr body_value;      // over the leaf loop variables
  PrimExpr body_condition;  // idem; null when the reduction has none
  std::vector<PrimExpr> data_parallel_guards;
  std::vector<PrimExpr> reduce_guards;
};

PrimExpr Index(int64_t value) { return loop::IntImm(value); }

// A loop over a symbolic dimension ranges over [0, this) as far as region bounds go: reads it
// moves are a whole dimension (no static region holds them).
constexpr int64_t kUnboundedExtent = int64_t{1} << 40;

// The value of a static extent; -1 for a symbolic one.
int64_t StaticExtent(const PrimExpr& extent) {
  int64_t value;
  return loop::AsConstInt(extent, &value) ? value : -1;
}

bool IsZero(const PrimExpr& expr) {
  int64_t value;
  return loop::AsConstInt(expr, &value) && value == 0;
}

PrimExpr Combine(ReduceKind kind, const PrimExpr& accumulated, const PrimExpr& value) {
  switch (kind) {
    case ReduceKind::kSum:
      return accumulated + value;
    case ReduceKind::kProd:
      return accumulated * value;
    case ReduceKind::kMax:
      return loop::Max(accumulated, value);
    case ReduceKind::kMin:
      return loop::Min(accumulated, value);
  }
  KILN_UNREACHABLE() << "reduce kind";
  return value;
}

Stmt Guard(const std::vector<PrimExpr>& conditions, Stmt stmt, const Span& span) {
  if (conditions.empty()) return stmt;
  PrimExpr all = conditions[0];
  for (size_t i = 1; i < conditions.size(); ++i) all = all && conditions[i];
  return loop::MakeIfThenElse(all, std::move(stmt), nullptr, span);
}

class ScheduleLowerer {
 public:
  explicit ScheduleLowerer(const Schedule& schedule) : stages_(schedule.stages()) {
    plans_.resize(stages_.size());
    for (size_t i = 0; i < stages_.size(); ++i) {
      plans_[i].stage = stages_[i].get();
      stage_of_[stages_[i]->buffer().get()] = static_cast<int>(i);
    }
  }

  absl::StatusOr<loop::PrimFunc> Run(const std::vector<Tensor>& params, const std::string& name) {
    std::vector<Buffer> param_buffers;
    KILN_RETURN_IF_ERROR(ResolveParams(params, &param_buffers));
    KILN_RETURN_IF_ERROR(InlineBodies());
    CollectReaders();
    KILN_RETURN_IF_ERROR(PlanAttachments());
    for (int s = static_cast<int>(stages_.size()) - 1; s >= 0; --s) {
      if (plans_[s].emitted) PlanLayout(s);
    }

    std::vector<Stmt> nests;
    std::vector<Span> spans;
    for (size_t s = 0; s < stages_.size(); ++s) {
      if (!plans_[s].emitted) continue;
      spans.push_back(plans_[s].span);
      if (stages_[s]->attach == AttachKind::kRoot) nests.push_back(EmitStage(s));
    }
    Span function_span = MakeSequentialSpan(spans);
    Stmt body = loop::MakeSeqStmt(std::move(nests), function_span);
    for (int s = static_cast<int>(stages_.size()) - 1; s >= 0; --s) {
      const StagePlan& plan = plans_[s];
      if (!plan.emitted || plan.is_param || stages_[s]->attach != AttachKind::kRoot) continue;
      const Buffer& buffer = plan.storage;
      body = loop::MakeAllocate(buffer->data, buffer->dtype, buffer->NumElementsExpr(),
                                buffer->scope, body, plan.span);
    }
    return loop::MakePrimFunc(std::move(param_buffers), body,
                              MakeAttrs({{loop::kAttrGlobalSymbol, name}}), function_span);
  }

 private:
  int StageOf(const Buffer& buffer) const {
    auto it = stage_of_.find(buffer.get());
    KILN_CHECK(it != stage_of_.end()) << "buffer " << buffer->name << " has no stage";
    return it->second;
  }

  absl::Status ResolveParams(const std::vector<Tensor>& params, std::vector<Buffer>* buffers) {
    for (const Tensor& param : params) {
      if (!param.defined()) return absl::InvalidArgumentError("undefined parameter tensor");
      auto it = stage_of_.find(param.op()->buffer.get());
      if (it == stage_of_.end()) {
        // An input nothing reads (eye_like's, shape_of's: only its shape
        // mattered) is still part of the calling convention.
        bool listed = false;
        for (const Buffer& buffer : *buffers) listed |= buffer.same_as(param.op()->buffer);
        if (param.op()->kind == OperationNode::Kind::kPlaceholder && !listed) {
          buffers->push_back(param.op()->buffer);
          continue;
        }
        return absl::InvalidArgumentError(
            absl::StrCat("parameter ", param.name(), " is not part of the schedule"));
      }
      StagePlan& plan = plans_[it->second];
      if (plan.is_param) {
        return absl::InvalidArgumentError(
            absl::StrCat("parameter ", param.name(), " is listed twice"));
      }
      plan.is_param = true;
      buffers->push_back(plan.stage->buffer());
    }
    for (const StagePlan& plan : plans_) {
      if (plan.is_param) continue;
      if (plan.stage->is_placeholder()) {
        return absl::InvalidArgumentError(
            absl::StrCat("placeholder ", plan.stage->name(), " is read but is not a parameter"));
      }
      if (plan.stage->is_output) {
        return absl::InvalidArgumentError(
            absl::StrCat("output ", plan.stage->name(), " is not a parameter"));
      }
    }
    return absl::OkStatus();
  }

  // A load of an inlined stage becomes its body at the load's indices; the
  // spans of the stages inlined are appended to `absorbed`.
  PrimExpr InlineLoads(const PrimExpr& expr, std::vector<Span>* absorbed) {
    return RewriteLoads(
        expr,
        [&](const loop::BufferLoadNode* load, const std::vector<PrimExpr>& indices) -> PrimExpr {
          int producer = StageOf(load->buffer);
          if (!plans_[producer].inlined) return nullptr;
          absorbed->push_back(plans_[producer].span);
          const std::vector<IterVar>& axes = stages_[producer]->op->axis;
          return loop::Substitute(plans_[producer].value,
                                  [&](const loop::VarNode* var) -> PrimExpr {
                                    for (size_t i = 0; i < axes.size(); ++i) {
                                      if (axes[i]->var.get() == var) return indices[i];
                                    }
                                    return nullptr;
                                  });
        });
  }

  // In topological order, so an inlined body is already expanded when it is
  // substituted into the next one.
  absl::Status InlineBodies() {
    for (StagePlan& plan : plans_) {
      const Stage& stage = *plan.stage;
      if (stage.is_placeholder()) continue;
      std::vector<Span> spans;
      plan.value = InlineLoads(stage.op->body->value, &spans);
      plan.condition = InlineLoads(stage.op->body->condition, &spans);
      spans.push_back(stage.op->span);
      plan.span = MakeSequentialSpan(spans);
      plan.inlined = stage.attach == AttachKind::kInline;
      plan.emitted = !plan.inlined;
      plan.attached.resize(stage.leaf_iter_vars.size());
      if (plan.inlined && plan.is_param) {
        return absl::InvalidArgumentError(
            absl::StrCat("stage ", stage.name(), " is a parameter and cannot be inlined"));
      }
      KILN_CHECK(!plan.inlined || !stage.op->body->reduce.has_value())
          << "compute_inline accepted the reduction " << stage.name();
    }
    return absl::OkStatus();
  }

  void CollectReaders() {
    for (size_t s = 0; s < plans_.size(); ++s) {
      if (!plans_[s].emitted) continue;
      std::vector<Buffer> loaded = LoadedBuffers(plans_[s].value);
      for (const Buffer& buffer : LoadedBuffers(plans_[s].condition)) loaded.push_back(buffer);
      for (const Buffer& buffer : loaded) {
        std::vector<int>& readers = plans_[StageOf(buffer)].readers;
        if (std::find(readers.begin(), readers.end(), static_cast<int>(s)) == readers.end()) {
          readers.push_back(static_cast<int>(s));
        }
      }
    }
  }

  absl::Status PlanAttachments() {
    for (size_t s = 0; s < plans_.size(); ++s) {
      const StagePlan& plan = plans_[s];
      const Stage& stage = *plan.stage;
      if (!plan.emitted || stage.attach != AttachKind::kScope) continue;
      int consumer = StageOf(stage.attach_consumer);
      const Stage& target = *stages_[consumer];
      std::string what = absl::StrCat("compute_at of ", stage.name(), " at ", target.name());
      if (plan.is_param) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": ", stage.name(), " is a parameter, computed at root"));
      }
      if (!plans_[consumer].emitted) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": ", target.name(), " is inlined"));
      }
      const auto& leaves = target.leaf_iter_vars;
      auto position = std::find(leaves.begin(), leaves.end(), stage.attach_axis) - leaves.begin();
      if (position == static_cast<long>(leaves.size())) {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": ", internal::AxisName(stage.attach_axis), " is no longer a loop of ",
            target.name(), " (split or fused after compute_at)"));
      }
      for (int reader : plan.readers) {
        if (reader != consumer && !IsLaterSibling(reader, static_cast<int>(s))) {
          return absl::InvalidArgumentError(absl::StrCat(
              what, ": ", stages_[reader]->name(), " also reads ", stage.name(),
              "; a stage computed at a consumer's loop may have only that reader and stages "
              "computed after it at the same loop"));
        }
      }
      if (plan.readers.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": ", target.name(), " does not read ", stage.name()));
      }
      plans_[consumer].attached[position].push_back(static_cast<int>(s));
    }
    return absl::OkStatus();
  }

  // Whether `reader` is computed at the same loop as the compute_at stage `s`, after it (the
  // statistics of a row and the row's other stages, all inside the output's row loop): it then
  // reads `s` from its region buffer too.
  bool IsLaterSibling(int reader, int s) const {
    const Stage& a = *stages_[reader];
    const Stage& b = *stages_[s];
    return reader > s && a.attach == AttachKind::kScope && b.attach == AttachKind::kScope &&
           a.attach_consumer.same_as(b.attach_consumer) && a.attach_axis == b.attach_axis;
  }

  // The loads of `s` in the emitted stage `reader`, with the loop variables that range inside
  // the loop `s` is computed at: all of a sibling's loops, the consumer's below that loop.
  void CollectRegionReads(int s, int reader, std::vector<const loop::BufferLoadNode*>* loads,
                          RelaxedVars* relaxed) const {
    const StagePlan& plan = plans_[reader];
    const auto& leaves = plan.stage->leaf_iter_vars;
    size_t first = 0;
    if (reader == StageOf(stages_[s]->attach_consumer)) {
      first = std::find(leaves.begin(), leaves.end(), stages_[s]->attach_axis) - leaves.begin() + 1;
    }
    for (size_t l = first; l < leaves.size(); ++l) {
      int64_t extent = StaticExtent(plan.extents.at(leaves[l].get()));
      if (extent < 0) extent = kUnboundedExtent;
      if (extent > 0) (*relaxed)[leaves[l]->var.get()] = Interval{0, extent - 1};
    }
    const Buffer& buffer = stages_[s]->buffer();
    for (const PrimExpr& expr : {plan.body_value, plan.body_condition}) {
      for (const loop::BufferLoadNode* load : CollectLoads(expr, buffer)) loads->push_back(load);
    }
  }

  // The region of `s` (a compute_at stage) its readers read inside the attach loop: the
  // consumer below that loop, siblings over all their loops. A dimension whose reads cannot be
  // bounded is computed whole.
  void PlanRegion(int s) {
    StagePlan& plan = plans_[s];
    const Stage& stage = *plan.stage;
    RelaxedVars relaxed;
    std::vector<const loop::BufferLoadNode*> loads;
    for (int reader : plan.readers) CollectRegionReads(s, reader, &loads, &relaxed);
    const Buffer& buffer = stage.buffer();
    const std::vector<int64_t>& shape = buffer->shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      std::optional<SymbolicRange> range;
      bool bounded = true;
      for (const loop::BufferLoadNode* load : loads) {
        std::optional<SymbolicRange> read =
            EvalSymbolicRange(load->indices[d], relaxed, &analyzer_);
        if (read && range) read = UnionRange(*range, *read, &analyzer_);
        if (!read) {
          bounded = false;
          break;
        }
        range = read;
      }
      bool whole = !bounded || !range || range->extent >= kUnboundedExtent / 2 ||
                   (shape[d] >= 0 && range->extent >= shape[d]);
      if (whole) {
        plan.region_min.push_back(Index(0));
        plan.region_extent.push_back(buffer->Extent(d));
      } else {
        plan.region_min.push_back(range->min);
        plan.region_extent.push_back(Index(range->extent));
      }
    }
  }

  void PlanLayout(int s) {
    StagePlan& plan = plans_[s];
    const Stage& stage = *plan.stage;
    const OperationNode& op = *stage.op;
    const Buffer& buffer = stage.buffer();
    if (stage.attach == AttachKind::kScope) {
      PlanRegion(s);
      plan.region_buffer = true;
      plan.storage =
          loop::MakeSymbolicBuffer(buffer->name, buffer->dtype, plan.region_extent, buffer->scope);
    } else {
      for (const PrimExpr& extent : buffer->ShapeExprs()) {
        plan.region_min.push_back(Index(0));
        plan.region_extent.push_back(extent);
      }
      plan.storage = buffer;
    }

    // Extents flow down from the root axes through the relations.
    auto& extents = plan.extents;
    for (size_t d = 0; d < op.axis.size(); ++d) extents[op.axis[d].get()] = plan.region_extent[d];
    for (const IterVar& axis : op.body->reduce_axes) extents[axis.get()] = axis->ExtentExpr();
    // Splits and fuses are of static loops (Schedule refuses symbolic ones), but a region over
    // a symbolic dimension makes its loop symbolic: the relation is then refused here.
    auto static_extent = [&](const IterVar& axis) {
      int64_t value = StaticExtent(extents.at(axis.get()));
      KILN_CHECK(value >= 0) << "a split or fuse of " << internal::AxisName(axis) << " of "
                             << stage.name() << ", whose extent is known only at run time";
      return value;
    };
    std::vector<int64_t> multipliers(stage.relations.size(), 0);
    std::vector<bool> overshoots(stage.relations.size(), false);
    for (size_t r = 0; r < stage.relations.size(); ++r) {
      const IterVarRelation& rel = stage.relations[r];
      if (rel.kind == IterVarRelation::Kind::kFuse) {
        extents[rel.parent.get()] = Index(static_extent(rel.outer) * static_extent(rel.inner));
        continue;
      }
      int64_t extent = static_extent(rel.parent);
      int64_t multiplier = rel.factor > 0 ? rel.factor : (extent + rel.nparts - 1) / rel.nparts;
      multiplier = std::max<int64_t>(multiplier, 1);
      int64_t outer = (extent + multiplier - 1) / multiplier;
      if (rel.nparts > 0) outer = std::min(outer, rel.nparts);
      int64_t inner = std::min(multiplier, extent);
      extents[rel.outer.get()] = Index(outer);
      extents[rel.inner.get()] = Index(inner);
      multipliers[r] = multiplier;
      overshoots[r] = outer > 0 && (outer - 1) * multiplier + inner > extent;
    }

    // Values flow up from the leaf loop variables: offsets from region_min.
    std::unordered_map<const IterVarNode*, PrimExpr> values;
    std::vector<PrimExpr> split_guards(stage.relations.size());
    for (const IterVar& leaf : stage.leaf_iter_vars) {
      values[leaf.get()] = leaf->var;
      int64_t extent = StaticExtent(extents.at(leaf.get()));
      if (extent > 0) analyzer_.Bind(leaf->var, 0, extent);
      if (extent < 0) symbolic_loops_[leaf->var.get()] = extents.at(leaf.get());
    }
    for (size_t r = stage.relations.size(); r-- > 0;) {
      const IterVarRelation& rel = stage.relations[r];
      if (rel.kind == IterVarRelation::Kind::kSplit) {
        const PrimExpr& outer = values.at(rel.outer.get());
        const PrimExpr& inner = values.at(rel.inner.get());
        PrimExpr value = static_extent(rel.outer) == 1   ? inner
                         : static_extent(rel.inner) == 1 ? outer * multipliers[r]
                                                         : outer * multipliers[r] + inner;
        values[rel.parent.get()] = value;
        if (overshoots[r]) split_guards[r] = value < extents.at(rel.parent.get());
      } else {
        const PrimExpr& fused = values.at(rel.parent.get());
        int64_t inner_extent = static_extent(rel.inner);
        int64_t outer_extent = static_extent(rel.outer);
        values[rel.outer.get()] = inner_extent == 1   ? fused
                                  : outer_extent == 1 ? Index(0)
                                                      : loop::FloorDiv(fused, inner_extent);
        values[rel.inner.get()] = inner_extent == 1   ? Index(0)
                                  : outer_extent == 1 ? fused
                                                      : loop::FloorMod(fused, inner_extent);
      }
    }

    // In the order the splits were applied (outer dimensions first, usually).
    for (size_t r = 0; r < split_guards.size(); ++r) {
      if (!split_guards[r].defined()) continue;
      bool reduce = stage.relations[r].parent->is_reduce;
      (reduce ? plan.reduce_guards : plan.data_parallel_guards).push_back(split_guards[r]);
    }

    std::unordered_map<const loop::VarNode*, PrimExpr> root_values;
    for (size_t d = 0; d < op.axis.size(); ++d) {
      const PrimExpr& offset = values.at(op.axis[d].get());
      PrimExpr root = IsZero(plan.region_min[d]) ? offset : plan.region_min[d] + offset;
      root_values[op.axis[d]->var.get()] = root;
      plan.store_indices.push_back(plan.region_buffer ? offset : root);
      if (plan.region_buffer && !IsZero(plan.region_min[d])) {
        // The region may reach past the producer's edges (a consumer's
        // split remainder, a stencil at the border): compute only real points.
        PrimExpr lower = root >= Index(0);
        PrimExpr upper = root < buffer->Extent(d);
        if (!analyzer_.CanProve(lower)) plan.data_parallel_guards.push_back(lower);
        if (!analyzer_.CanProve(upper) &&
            !WithinSymbolicLoop(analyzer_.Simplify(root), buffer->Extent(d))) {
          plan.data_parallel_guards.push_back(upper);
        }
      }
    }
    for (const IterVar& axis : op.body->reduce_axes) {
      root_values[axis->var.get()] = values.at(axis.get());
    }
    auto to_leaves = [&](const loop::VarNode* var) -> PrimExpr {
      auto it = root_values.find(var);
      return it == root_values.end() ? PrimExpr() : it->second;
    };
    plan.body_value = loop::Substitute(plan.value, to_leaves);
    if (plan.condition.defined()) plan.body_condition = loop::Substitute(plan.condition, to_leaves);
  }

  // Whether `index` is the variable of a loop over [0, extent) (a symbolic extent the analyzer
  // cannot bound): a row a stage computes at that loop is then inside the producer.
  bool WithinSymbolicLoop(const PrimExpr& index, const PrimExpr& extent) const {
    const auto* var = index.as<loop::VarNode>();
    auto it = var != nullptr ? symbolic_loops_.find(var) : symbolic_loops_.end();
    return it != symbolic_loops_.end() && loop::arith::ExprDeepEqual(it->second, extent);
  }

  // Loads of compute_at stages read their region buffers, shifted by the
  // region's origin.
  PrimExpr RegionLoads(const PrimExpr& expr) {
    return RewriteLoads(
        expr,
        [&](const loop::BufferLoadNode* load, const std::vector<PrimExpr>& indices) -> PrimExpr {
          const StagePlan& producer = plans_[StageOf(load->buffer)];
          if (!producer.region_buffer) return nullptr;
          std::vector<PrimExpr> shifted;
          for (size_t d = 0; d < indices.size(); ++d) {
            shifted.push_back(IsZero(producer.region_min[d])
                                  ? indices[d]
                                  : analyzer_.Simplify(indices[d] - producer.region_min[d]));
          }
          return loop::MakeBufferLoad(producer.storage, std::move(shifted), load->span);
        });
  }

  Stmt WrapLoop(const StagePlan& plan, size_t level, Stmt body) {
    const Stage& stage = *plan.stage;
    const Span& span = plan.span;
    const std::vector<int>& attached = plan.attached[level];
    for (size_t i = attached.size(); i-- > 0;) {
      const StagePlan& producer = plans_[attached[i]];
      const Buffer& storage = producer.storage;
      const Span& producer_span = producer.span;
      body = loop::MakeAllocate(
          storage->data, storage->dtype, storage->NumElementsExpr(), storage->scope,
          loop::MakeSeqStmt({EmitStage(attached[i]), body}, producer_span), producer_span);
    }
    const IterVar& leaf = stage.leaf_iter_vars[level];
    return loop::MakeFor(leaf->var, Index(0), plan.extents.at(leaf.get()),
                         stage.LoopKind(leaf), std::move(body), span);
  }

  Stmt EmitStage(size_t s) {
    const StagePlan& plan = plans_[s];
    const Stage& stage = *plan.stage;
    const Span& span = plan.span;
    const ComputeBody& body = *stage.op->body;
    const auto& leaves = stage.leaf_iter_vars;
    std::vector<PrimExpr> all_guards = plan.data_parallel_guards;
    all_guards.insert(all_guards.end(), plan.reduce_guards.begin(), plan.reduce_guards.end());

    PrimExpr value = RegionLoads(plan.body_value);
    Stmt update;
    if (body.reduce.has_value()) {
      PrimExpr accumulated = loop::MakeBufferLoad(plan.storage, plan.store_indices);
      update = loop::MakeBufferStore(plan.storage, Combine(*body.reduce, accumulated, value),
                                     plan.store_indices, span);
      if (plan.body_condition.defined()) {
        update = loop::MakeIfThenElse(RegionLoads(plan.body_condition), update, nullptr, span);
      }
    } else {
      update = loop::MakeBufferStore(plan.storage, value, plan.store_indices, span);
    }
    update = Guard(all_guards, update, span);

    // A reduction initializes inside the loops before its first reduce loop;
    // data-parallel loops after that point get a nest of their own for it.
    size_t split = leaves.size();
    if (body.reduce.has_value()) {
      for (size_t l = 0; l < leaves.size(); ++l) {
        if (leaves[l]->is_reduce) {
          split = l;
          break;
        }
      }
    }
    Stmt nest = update;
    for (size_t l = leaves.size(); l-- > split;) nest = WrapLoop(plan, l, nest);
    if (body.reduce.has_value()) {
      PrimExpr identity = ReduceIdentity(*body.reduce, loop::PrimType{plan.storage->dtype, 1});
      Stmt init =
          Guard(plan.data_parallel_guards,
                loop::MakeBufferStore(plan.storage, identity, plan.store_indices, span), span);
      std::vector<std::pair<const loop::VarNode*, Var>> fresh;
      for (size_t l = split; l < leaves.size(); ++l) {
        if (!leaves[l]->is_reduce) {
          fresh.emplace_back(leaves[l]->var.get(), loop::MakeVar(leaves[l]->var->name + ".init"));
        }
      }
      init = loop::Substitute(init, [&](const loop::VarNode* var) -> PrimExpr {
        for (const auto& [old_var, new_var] : fresh) {
          if (old_var == var) return new_var;
        }
        return nullptr;
      });
      for (size_t l = leaves.size(), f = fresh.size(); l-- > split;) {
        if (leaves[l]->is_reduce) continue;
        init = loop::MakeFor(fresh[--f].second, Index(0), plan.extents.at(leaves[l].get()),
                             stage.LoopKind(leaves[l]), init, span);
      }
      nest = loop::MakeSeqStmt({init, nest}, span);
    }
    for (size_t l = split; l-- > 0;) nest = WrapLoop(plan, l, nest);
    return nest;
  }

  const std::vector<StagePtr>& stages_;
  std::vector<StagePlan> plans_;
  std::unordered_map<const loop::BufferNode*, int> stage_of_;  // lookup only
  // Loop variables of symbolic extent, with it (see WithinSymbolicLoop); lookup only.
  std::unordered_map<const loop::VarNode*, PrimExpr> symbolic_loops_;
  loop::arith::Analyzer analyzer_;
};

}  // namespace

absl::StatusOr<loop::PrimFunc> LowerSchedule(const Schedule& schedule,
                                             const std::vector<Tensor>& params,
                                             const std::string& name) {
  KILN_RETURN_IF_ERROR(schedule.status());
  ScheduleLowerer lowerer(schedule);
  return lowerer.Run(params, name);
}

}  // namespace kiln::te
