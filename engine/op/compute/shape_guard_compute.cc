// Compute definitions of the shape guards (shape_guard.cc). shape_operand_check reads every
// element of its small operand at a constant index and combines the tests into one bool;
// assert's data semantics are its first argument's (lowering turns its check into a statement of
// main, so this definition only serves evaluation outside a lowered model).
#include "absl/strings/str_cat.h"
#include "engine/op/compute/compute_families.h"
#include "engine/op/compute/compute_util.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

using compute::Index;
using compute::PrimExpr;
using compute::Tensor;
using compute::Var;

using ComputeResult = absl::StatusOr<std::vector<Tensor>>;

// terms[0] op terms[1] op ... as a balanced tree, so the expression's depth is logarithmic in
// the number of terms (up to a thousand pairwise tests for 32 axes).
PrimExpr Balanced(const std::vector<PrimExpr>& terms, size_t begin, size_t end, bool all) {
  if (end - begin == 1) return terms[begin];
  size_t middle = begin + (end - begin) / 2;
  PrimExpr a = Balanced(terms, begin, middle, all);
  PrimExpr b = Balanced(terms, middle, end, all);
  return all ? (a && b) : (a || b);
}

ComputeResult ShapeOperandCheckCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "shape_operand_check"));
  const Tensor& operand = in.inputs[0];
  std::vector<int64_t> allowed = IntArrayAttr(in.attrs, "allowed");
  std::vector<int64_t> counts = IntArrayAttr(in.attrs, "allowed_counts");
  std::vector<int64_t> at_most_once = IntArrayAttr(in.attrs, "at_most_once");
  int64_t modulo = IntAttr(in.attrs, "distinct_modulo");
  return compute::One(te::Compute(
      "T_shape_operand_check", {}, {operand},
      [&](const std::vector<Var>&) -> te::ComputeBody {
        std::vector<PrimExpr> values;
        for (size_t i = 0; i < counts.size(); ++i) {
          std::vector<PrimExpr> at;
          if (operand.ndim() == 1) at.push_back(Index(static_cast<int64_t>(i)));
          values.push_back(compute::Cast(DataType::kInt64, operand(at)));
        }
        std::vector<PrimExpr> terms{loop::BoolImm(true)};
        size_t next = 0;
        for (size_t i = 0; i < values.size(); ++i) {
          if (counts[i] == 0) continue;
          std::vector<PrimExpr> matches;
          for (int64_t k = 0; k < counts[i]; ++k) {
            matches.push_back(loop::Equal(values[i], Index(allowed[next++])));
          }
          terms.push_back(Balanced(matches, 0, matches.size(), /*all=*/false));
        }
        if (modulo > 0) {
          auto normalized = [&](const PrimExpr& v) {
            return loop::MakeSelect(v < Index(0), v + modulo, v);
          };
          for (size_t i = 0; i < values.size(); ++i) {
            for (size_t j = i + 1; j < values.size(); ++j) {
              terms.push_back(loop::NotEqual(normalized(values[i]), normalized(values[j])));
            }
          }
        }
        for (int64_t value : at_most_once) {
          PrimExpr count = Index(0);
          for (const PrimExpr& v : values) {
            count = count + loop::MakeSelect(loop::Equal(v, Index(value)), Index(1), Index(0));
          }
          terms.push_back(count <= Index(1));
        }
        return Balanced(terms, 0, terms.size(), /*all=*/true);
      },
      "injective"));
}

ComputeResult AssertCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 2, "assert"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "assert"));
  return compute::One(compute::Gather("T_assert", result.shape, in.inputs[0],
                                      [](const std::vector<PrimExpr>& p) { return p; }));
}

}  // namespace

void RegisterShapeGuardComputes(OpRegistry& registry) {
  registry.SetCompute("shape_operand_check", ShapeOperandCheckCompute);
  registry.SetCompute("assert", AssertCompute);
}

}  // namespace kiln
