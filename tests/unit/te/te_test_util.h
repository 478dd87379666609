// Shared helpers of the te tests: small tensor expressions, running a lowered
// function with the interpreter, and a compact text form of loop structure
// that tests compare with hand-written expectations.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/loop/functor.h"
#include "engine/loop/interpreter.h"
#include "engine/support/status_macros.h"
#include "engine/te/lower_schedule.h"
#include "engine/te/schedule.h"
#include "gtest/gtest.h"

namespace kiln::te::testing {

// C[m, n] = sum over k of A[m, k] * B[k, n].
inline Tensor MatMul(const Tensor& a, const Tensor& b, const std::string& name = "C") {
  int64_t k_extent = a.shape()[1];
  return Compute(name, {a.shape()[0], b.shape()[1]}, {a, b},
                 [&](const std::vector<loop::Var>& i) -> ComputeBody {
                   IterVar k = ReduceAxis(k_extent, "k");
                   return Sum(a(i[0], k->var) * b(k->var, i[1]), {k});
                 });
}

inline Tensor Add(const Tensor& a, const Tensor& b, const std::string& name = "C") {
  return Compute(name, a.shape(), {a, b}, [&](const std::vector<loop::Var>& i) -> ComputeBody {
    std::vector<PrimExpr> index(i.begin(), i.end());
    return a(index) + b(index);
  });
}

// Runs `func` with the placeholder params filled from `inputs` (in param
// order) and the other params zeroed; returns the other params' values.
inline absl::StatusOr<std::vector<std::vector<double>>> RunFunc(
    const loop::PrimFunc& func, const std::vector<Tensor>& params,
    const std::vector<std::vector<double>>& inputs) {
  std::vector<loop::HostTensor> args;
  std::vector<bool> is_output;
  size_t next_input = 0;
  for (const Tensor& param : params) {
    bool input = param.op()->kind == OperationNode::Kind::kPlaceholder;
    is_output.push_back(!input);
    if (input) {
      args.push_back(
          loop::HostTensor::FromDoubles(param.dtype(), param.shape(), inputs.at(next_input++)));
    } else {
      args.push_back(loop::HostTensor::Zeros(param.dtype(), param.shape()));
    }
  }
  std::vector<loop::HostTensor*> pointers;
  for (loop::HostTensor& arg : args) pointers.push_back(&arg);
  KILN_RETURN_IF_ERROR(loop::RunPrimFunc(func, pointers));
  std::vector<std::vector<double>> outputs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (is_output[i]) outputs.push_back(args[i].ToDoubles());
  }
  return outputs;
}

inline absl::StatusOr<std::vector<std::vector<double>>> LowerAndRun(
    const Schedule& schedule, const std::vector<Tensor>& params,
    const std::vector<std::vector<double>>& inputs) {
  KILN_ASSIGN_OR_RETURN(loop::PrimFunc func, LowerSchedule(schedule, params, "test"));
  return RunFunc(func, params, inputs);
}

// Runs the current schedule and the record's vanilla step; both must give
// `expected` (the single output).
inline void ExpectComputes(const Schedule& schedule, const std::vector<Tensor>& params,
                           const std::vector<std::vector<double>>& inputs,
                           const std::vector<double>& expected) {
  auto scheduled = LowerAndRun(schedule, params, inputs);
  ASSERT_TRUE(scheduled.ok()) << scheduled.status();
  EXPECT_EQ((*scheduled)[0], expected) << "scheduled";
  ASSERT_FALSE(schedule.record().empty());
  auto vanilla = LowerAndRun(schedule.record()[0].snapshot, params, inputs);
  ASSERT_TRUE(vanilla.ok()) << vanilla.status();
  EXPECT_EQ((*vanilla)[0], expected) << "vanilla";
}

// Loop structure: `for name[extent]` (with `:parallel`, `:vectorized` or
// `:unroll` when not serial), `alloc name[elements]` (with `:scope` when not
// global), `if`, and `B=` for a store into B; bodies in braces, sequences
// separated by "; ".
inline std::string LoopStructure(const loop::Stmt& stmt) {
  if (const auto* op = stmt.as<loop::ForNode>()) {
    int64_t extent = -1;
    loop::AsConstInt(op->extent, &extent);
    std::string kind = op->for_kind == loop::ForKind::kSerial
                           ? ""
                           : absl::StrCat(":", loop::ForKindName(op->for_kind));
    return absl::StrCat("for ", op->loop_var->name, "[", extent, "]", kind, " {",
                        LoopStructure(op->body), "}");
  }
  if (const auto* op = stmt.as<loop::AllocateNode>()) {
    std::string scope = op->scope == "global" ? "" : ":" + op->scope;
    return absl::StrCat("alloc ", op->data->name, "[", op->extent, "]", scope, " {",
                        LoopStructure(op->body), "}");
  }
  if (const auto* op = stmt.as<loop::IfThenElseNode>()) {
    return absl::StrCat("if {", LoopStructure(op->then_case), "}");
  }
  if (const auto* op = stmt.as<loop::BufferStoreNode>()) return op->buffer->name + "=";
  if (const auto* op = stmt.as<loop::SeqStmtNode>()) {
    std::vector<std::string> parts;
    for (const loop::Stmt& s : op->seq) parts.push_back(LoopStructure(s));
    return absl::StrJoin(parts, "; ");
  }
  return "?";
}

// An expression as text: fully parenthesized binaries, loads as `B[i, j]`.
inline std::string ExprText(const loop::PrimExpr& expr) {
  if (const auto* op = expr.as<loop::IntImmNode>()) return absl::StrCat(op->value);
  if (const auto* op = expr.as<loop::FloatImmNode>()) return absl::StrCat(op->value);
  if (const auto* op = expr.as<loop::VarNode>()) return op->name;
  if (const auto* op = expr.as<loop::BinaryNode>()) {
    auto side = [](const loop::PrimExpr& e) {
      return e.as<loop::BinaryNode>() ? "(" + ExprText(e) + ")" : ExprText(e);
    };
    const char* symbol = nullptr;
    switch (op->op) {
      case loop::BinaryOp::kAdd:
        symbol = " + ";
        break;
      case loop::BinaryOp::kSub:
        symbol = " - ";
        break;
      case loop::BinaryOp::kMul:
        symbol = "*";
        break;
      case loop::BinaryOp::kFloorDiv:
        symbol = " // ";
        break;
      case loop::BinaryOp::kFloorMod:
        symbol = " % ";
        break;
      case loop::BinaryOp::kLT:
        symbol = " < ";
        break;
      case loop::BinaryOp::kGE:
        symbol = " >= ";
        break;
      case loop::BinaryOp::kAnd:
        symbol = " && ";
        break;
      default:
        break;
    }
    if (symbol != nullptr) return side(op->a) + symbol + side(op->b);
    return absl::StrCat(loop::BinaryOpName(op->op), "(", ExprText(op->a), ", ", ExprText(op->b),
                        ")");
  }
  if (const auto* op = expr.as<loop::BufferLoadNode>()) {
    std::vector<std::string> indices;
    for (const loop::PrimExpr& index : op->indices) indices.push_back(ExprText(index));
    return absl::StrCat(op->buffer->name, "[", absl::StrJoin(indices, ", "), "]");
  }
  return absl::StrCat("<", ObjectKindName(expr->kind()), ">");
}

// Every store as `B[indices] = value`, with the conditions guarding it, in
// statement order, one per line.
inline std::string StoreText(const loop::Stmt& stmt) {
  std::vector<std::string> lines;
  std::vector<std::string> conditions;
  std::function<void(const loop::Stmt&)> walk = [&](const loop::Stmt& s) {
    if (const auto* op = s.as<loop::ForNode>()) return walk(op->body);
    if (const auto* op = s.as<loop::AllocateNode>()) return walk(op->body);
    if (const auto* op = s.as<loop::SeqStmtNode>()) {
      for (const loop::Stmt& child : op->seq) walk(child);
      return;
    }
    if (const auto* op = s.as<loop::IfThenElseNode>()) {
      conditions.push_back(ExprText(op->condition));
      walk(op->then_case);
      conditions.pop_back();
      return;
    }
    if (const auto* op = s.as<loop::BufferStoreNode>()) {
      std::vector<std::string> indices;
      for (const loop::PrimExpr& index : op->indices) indices.push_back(ExprText(index));
      std::string guard = conditions.empty() ? "" : "if " + absl::StrJoin(conditions, ", ") + ": ";
      lines.push_back(absl::StrCat(guard, op->buffer->name, "[", absl::StrJoin(indices, ", "),
                                   "] = ", ExprText(op->value)));
    }
  };
  walk(stmt);
  return absl::StrJoin(lines, "\n");
}

// Every statement node of `stmt`, pre-order.
inline std::vector<const loop::StmtNode*> AllStatements(const loop::Stmt& stmt) {
  std::vector<const loop::StmtNode*> result;
  loop::PreOrderVisit(stmt, [&](const Object* node) {
    if (loop::StmtNode::IsKind(node->kind()))
      result.push_back(static_cast<const loop::StmtNode*>(node));
  });
  return result;
}

inline std::vector<double> Iota(int64_t n, double start = 0) {
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(start + static_cast<double>(i));
  return values;
}

// The reference matmul of row-major m x k and k x n values.
inline std::vector<double> ReferenceMatMul(const std::vector<double>& a,
                                           const std::vector<double>& b, int64_t m, int64_t k,
                                           int64_t n) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t r = 0; r < k; ++r) c[i * n + j] += a[i * k + r] * b[r * n + j];
    }
  }
  return c;
}

}  // namespace kiln::te::testing
