// Placeholders, computes, reductions and the thread's current span.
#include "engine/te/tensor.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "engine/ir/dtype_dispatch.h"
#include "engine/loop/arith/analyzer.h"
#include "engine/loop/arith/expr_deep_equal.h"
#include "engine/loop/functor.h"

namespace kiln::te {

namespace {
thread_local Span current_span;
thread_local SymbolScope* current_symbol_scope = nullptr;
}  // namespace

IterVar ReduceAxis(int64_t extent, std::string name) {
  return std::make_shared<const IterVarNode>(IterVarNode{loop::MakeVar(std::move(name)), extent,
                                                         /*is_reduce=*/true});
}

IterVar ReduceAxis(const PrimExpr& extent, std::string name) {
  int64_t value;
  if (loop::AsConstInt(extent, &value)) return ReduceAxis(value, std::move(name));
  return std::make_shared<const IterVarNode>(
      IterVarNode{loop::MakeVar(std::move(name)), -1, /*is_reduce=*/true, extent});
}

const char* ReduceKindName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kMin: return "min";
    case ReduceKind::kProd: return "prod";
  }
  return "?";
}

ComputeBody Sum(PrimExpr value, std::vector<IterVar> axes, PrimExpr condition) {
  return ComputeBody(std::move(value), ReduceKind::kSum, std::move(axes), std::move(condition));
}
ComputeBody Max(PrimExpr value, std::vector<IterVar> axes, PrimExpr condition) {
  return ComputeBody(std::move(value), ReduceKind::kMax, std::move(axes), std::move(condition));
}
ComputeBody Min(PrimExpr value, std::vector<IterVar> axes, PrimExpr condition) {
  return ComputeBody(std::move(value), ReduceKind::kMin, std::move(axes), std::move(condition));
}
ComputeBody Prod(PrimExpr value, std::vector<IterVar> axes, PrimExpr condition) {
  return ComputeBody(std::move(value), ReduceKind::kProd, std::move(axes), std::move(condition));
}

namespace {
// The largest finite value of an integer dtype, as a double the immediate
// constructors accept (int64's is not exactly representable; the IntImm path
// below avoids the round trip).
PrimExpr Extreme(loop::PrimType type, bool highest) {
  return DispatchDataType(type.dtype, [&]<DataType D>() -> PrimExpr {
    if constexpr (IsFloat(D)) {
      return loop::FloatImm(highest ? std::numeric_limits<double>::infinity()
                                    : -std::numeric_limits<double>::infinity(),
                            type);
    } else if constexpr (D == DataType::kBool) {
      return loop::IntImm(highest ? 1 : 0, type);
    } else {
      // uint64's maximum is stored as its two's-complement bit pattern (-1).
      using Limits = std::numeric_limits<DataTypeStorage<D>>;
      return loop::IntImm(static_cast<int64_t>(highest ? Limits::max() : Limits::lowest()), type);
    }
  });
}
}  // namespace

PrimExpr ReduceIdentity(ReduceKind kind, loop::PrimType type) {
  switch (kind) {
    case ReduceKind::kSum: return loop::MakeConst(type, 0);
    case ReduceKind::kProd: return loop::MakeConst(type, 1);
    case ReduceKind::kMax: return Extreme(type, /*highest=*/false);
    case ReduceKind::kMin: return Extreme(type, /*highest=*/true);
  }
  return loop::MakeConst(type, 0);
}

PrimExpr Tensor::operator()(std::vector<PrimExpr> indices) const {
  KILN_CHECK(defined()) << "indexing an undefined tensor";
  KILN_CHECK(static_cast<int>(indices.size()) == ndim())
      << "tensor " << name() << " has rank " << ndim() << ", indexed with " << indices.size();
  return loop::MakeBufferLoad(op_->buffer, std::move(indices));
}

Tensor Placeholder(std::string name, DataType dtype, std::vector<int64_t> shape) {
  auto op = std::make_shared<OperationNode>();
  op->kind = OperationNode::Kind::kPlaceholder;
  op->buffer = loop::MakeBuffer(name, dtype, std::move(shape));
  op->name = std::move(name);
  op->tag = "placeholder";
  op->span = SpanScope::Current();
  return Tensor(std::move(op));
}

Tensor PlaceholderOver(std::string name, DataType dtype, std::vector<PrimExpr> shape) {
  auto op = std::make_shared<OperationNode>();
  op->kind = OperationNode::Kind::kPlaceholder;
  op->buffer = loop::MakeSymbolicBuffer(name, dtype, std::move(shape));
  op->name = std::move(name);
  op->tag = "placeholder";
  op->span = SpanScope::Current();
  return Tensor(std::move(op));
}

Tensor Compute(std::string name, std::vector<int64_t> shape, std::vector<Tensor> inputs,
               const ComputeFunc& fcompute, std::string tag) {
  std::vector<PrimExpr> dims;
  for (int64_t extent : shape) dims.push_back(loop::IntImm(extent));
  return ComputeOver(std::move(name), std::move(dims), std::move(inputs), fcompute,
                     std::move(tag));
}

Tensor ComputeOver(std::string name, std::vector<PrimExpr> shape, std::vector<Tensor> inputs,
                   const ComputeFunc& fcompute, std::string tag) {
  auto op = std::make_shared<OperationNode>();
  op->kind = OperationNode::Kind::kCompute;
  std::vector<loop::Var> vars;
  for (size_t i = 0; i < shape.size(); ++i) {
    loop::Var var = loop::MakeVar(absl::StrCat("ax", i));
    vars.push_back(var);
    int64_t extent;
    bool known = loop::AsConstInt(shape[i], &extent);
    op->axis.push_back(std::make_shared<const IterVarNode>(IterVarNode{
        var, known ? extent : -1, /*is_reduce=*/false, known ? PrimExpr() : shape[i]}));
  }
  ComputeBody body = fcompute(vars);
  KILN_CHECK(body.value.defined()) << "compute " << name << " returned no value";
  KILN_CHECK(body.value->type.lanes == 1) << "compute " << name << " returned a vector";

  // Every tensor the body reads must be a declared input.
  loop::Stmt probe = loop::MakeEvaluate(body.value);
  if (body.condition.defined()) probe = loop::MakeSeqStmt({probe, loop::MakeEvaluate(body.condition)});
  loop::PreOrderVisit(probe, [&](const Object* node) {
    if (node->kind() != ObjectKind::kBufferLoad) return;
    const auto* load = static_cast<const loop::BufferLoadNode*>(node);
    bool declared = false;
    for (const Tensor& input : inputs) declared |= input.op()->buffer.same_as(load->buffer);
    KILN_CHECK(declared) << "compute " << name << " reads " << load->buffer->name
                         << ", which is not among its inputs";
  });

  op->buffer = loop::MakeSymbolicBuffer(name, body.value->type.dtype, std::move(shape));
  op->name = std::move(name);
  op->body = std::move(body);
  op->inputs = std::move(inputs);
  op->tag = std::move(tag);
  op->span = SpanScope::Current();
  return Tensor(std::move(op));
}

SpanScope::SpanScope(Span span) : previous_(std::move(current_span)) {
  current_span = std::move(span);
}
SpanScope::~SpanScope() { current_span = std::move(previous_); }
const Span& SpanScope::Current() { return current_span; }

SymbolScope::SymbolScope(const SymbolVars* symbols)
    : symbols_(symbols), previous_(current_symbol_scope) {
  current_symbol_scope = this;
}
SymbolScope::~SymbolScope() { current_symbol_scope = previous_; }
loop::Var SymbolScope::Lookup(const std::string& name) {
  const SymbolScope* scope = current_symbol_scope;
  if (scope == nullptr || scope->symbols_ == nullptr) return loop::Var();
  for (const auto& [symbol, var] : *scope->symbols_) {
    if (symbol == name) return var;
  }
  return loop::Var();
}
void SymbolScope::RequireEqual(const PrimExpr& left, const PrimExpr& right) {
  SymbolScope* scope = current_symbol_scope;
  if (scope == nullptr || scope->symbols_ == nullptr) return;
  PrimExpr a = loop::arith::Simplify(left), b = loop::arith::Simplify(right);
  if (loop::arith::ExprDeepEqual(a, b)) return;
  scope->equalities_.push_back(SymbolEquality{a, b, SpanScope::Current()});
}

}  // namespace kiln::te
