// Compute definitions of the string ops (engine/op/string_ops.cc): libkiln_rt calls per element
// through the loop IR's string intrinsics.
#include "engine/op/compute/compute_families.h"
#include "engine/op/compute/compute_util.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

using compute::AsExprs;
using compute::PrimExpr;
using compute::Tensor;
using compute::Var;
using loop::Intrinsic;

// any(key == words[i] for i in [begin, end)) as a balanced tree: its depth (what visitors
// recurse on) grows with the log of the word count.
PrimExpr AnyEqual(const PrimExpr& key, const std::vector<std::string>& words, size_t begin,
                  size_t end) {
  if (end - begin == 1) {
    return loop::MakeIntrinsic(Intrinsic::kStringEqual, {key, loop::StringImm(words[begin])});
  }
  size_t middle = begin + (end - begin) / 2;
  return AnyEqual(key, words, begin, middle) || AnyEqual(key, words, middle, end);
}

absl::StatusOr<std::vector<Tensor>> ChangeCaseCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "string.change_case"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result,
                        compute::TensorResult(in, "string.change_case"));
  const Intrinsic change =
      StringAttr(in.attrs, "case") == "upper" ? Intrinsic::kStringUpper : Intrinsic::kStringLower;
  const Tensor& x = in.inputs[0];
  return compute::One(te::Compute(
      "T_change_case", result.shape, {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return loop::MakeIntrinsic(change, {x(AsExprs(i))});
      },
      "elemwise"));
}

absl::StatusOr<std::vector<Tensor>> InSetCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "string.in_set"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "string.in_set"));
  std::vector<std::string> words;
  for (const AttrValue& word : in.attrs.Find("words")->get<AttrValue::Array>()) {
    words.push_back(word.get<std::string>());
  }
  const Tensor& x = in.inputs[0];
  return compute::One(te::Compute(
      "T_in_set", result.shape, {x},
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        if (words.empty()) return loop::BoolImm(false);
        return AnyEqual(x(AsExprs(i)), words, 0, words.size());
      },
      "elemwise"));
}

absl::StatusOr<std::vector<Tensor>> FullLikeCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 1, "string.full_like"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result,
                        compute::TensorResult(in, "string.full_like"));
  const std::string value = StringAttr(in.attrs, "value");
  return compute::One(te::Compute(
      "T_full_like", result.shape, {},
      [&](const std::vector<Var>&) -> te::ComputeBody { return loop::StringImm(value); },
      "elemwise"));
}

}  // namespace

void RegisterStringComputes(OpRegistry& registry) {
  registry.SetCompute("string.change_case", ChangeCaseCompute);
  registry.SetCompute("string.in_set", InSetCompute);
  registry.SetCompute("string.full_like", FullLikeCompute);
}

}  // namespace kiln
