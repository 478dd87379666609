// StringNormalizer: stopwords removed along the last axis, then a case change, as the graph ops
//   keep = logical_not(string.in_set(x, stopwords))   (both lowercased when not case-sensitive)
//   y = compress(x, keep, axis=-1, count=K)   (K: the length the model declares, checked)
//   y = where(count(keep) == 0, string.full_like(y, ""), y)   (when K is 1: ONNX gives [""] when
//       every word goes)
//   y = string.change_case(y, "upper"|"lower")
// The kept count depends on the data: like Compress's, it is the declared one, checked when the
// model runs. Case changes and case-insensitive matching are ASCII (ONNX's `locale` is ignored).
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

absl::StatusOr<std::vector<Expr>> ConvertStringNormalizer(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  const int64_t rank = static_cast<int64_t>(type->shape.size());
  if (type->dtype != DataType::kString || rank < 1 || rank > 2 ||
      (rank == 2 && !(type->shape[0].is_static() && type->shape[0].value == 1)) ||
      !type->shape.back().is_static()) {
    return ctx.Error(absl::StrCat("input 0 must be a string tensor of shape [C] or [1, C] with C "
                                  "known, got ",
                                  TypeToString(x->checked_type)));
  }
  KILN_ASSIGN_OR_RETURN(std::string action, ctx.StringAttr("case_change_action", "NONE"));
  if (action != "NONE" && action != "LOWER" && action != "UPPER") {
    return ctx.Error(absl::StrCat("attribute 'case_change_action' must be NONE, LOWER or UPPER, "
                                  "got '",
                                  action, "'"));
  }
  KILN_ASSIGN_OR_RETURN(int64_t case_sensitive, ctx.IntAttr("is_case_sensitive", 0));
  AttrValue::Array stopwords;
  if (const onnx::AttributeProto* attr = ctx.FindAttr("stopwords")) {
    for (const std::string& word : attr->strings()) {
      stopwords.push_back(AttrValue(case_sensitive != 0 ? word : absl::AsciiStrToLower(word)));
    }
  }
  Expr y = x;
  if (!stopwords.empty()) {
    const int64_t axis = rank - 1;
    std::optional<std::vector<int64_t>> declared = ctx.DeclaredOutputShape(0);
    if (!declared || static_cast<int64_t>(declared->size()) != rank) {
      return ctx.Error(
          "with stopwords, how many words remain depends on the data: declare the output's "
          "shape (Kiln compiles that length and checks it when the model runs)");
    }
    const int64_t count = (*declared)[axis];
    Expr key = x;
    if (case_sensitive == 0) {  // both sides lowercased: the words above, x here (once each)
      KILN_ASSIGN_OR_RETURN(key, ctx.Call("string.change_case", {x},
                                          MakeAttrs({{"case", std::string("lower")}})));
    }
    KILN_ASSIGN_OR_RETURN(Expr in_set,
                          ctx.Call("string.in_set", {key}, MakeAttrs({{"words", stopwords}})));
    KILN_ASSIGN_OR_RETURN(Expr keep, ctx.Call("logical_not", {in_set}));
    if (rank == 2) {
      KILN_ASSIGN_OR_RETURN(keep, ctx.Call("reshape", {keep},
                                           MakeAttrs({{"newshape", IntArray({-1})}})));
    }
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("compress", {x, keep},
                                      MakeAttrs({{"axis", axis}, {"count", count}})));
    KILN_ASSIGN_OR_RETURN(Expr kept, NonzeroCount(ctx, keep));
    Expr wanted = ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(count)));
    KILN_ASSIGN_OR_RETURN(Expr ok, ctx.Call("equal", {kept, wanted}));
    if (count == 1) {
      Expr zero = ctx.Constant(ScalarTensor(DataType::kInt64, 0));
      KILN_ASSIGN_OR_RETURN(Expr none, ctx.Call("equal", {kept, zero}));
      KILN_ASSIGN_OR_RETURN(Expr empty, ctx.Call("string.full_like", {y},
                                                 MakeAttrs({{"value", std::string()}})));
      KILN_ASSIGN_OR_RETURN(y, ctx.Call("where", {none, empty, y}));
      KILN_ASSIGN_OR_RETURN(ok, ctx.Call("logical_or", {ok, none}));
    }
    KILN_ASSIGN_OR_RETURN(
        y, GuardCondition(ctx, y, ok,
                          absl::StrCat("input 0 must keep ", count,
                                       " words after the stopwords go (the count the model "
                                       "declares and was compiled for)")));
  }
  if (action != "NONE") {
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("string.change_case", {y},
                                      MakeAttrs({{"case", absl::AsciiStrToLower(action)}})));
  }
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterStringConverters(ConverterTable& table) {
  table.Add("StringNormalizer", ConvertStringNormalizer);
}

}  // namespace kiln::onnx_frontend
