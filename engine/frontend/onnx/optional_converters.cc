// The optional operators: an optional is a tuple of zero elements (empty) or one (its value, a
// tensor or a sequence), known at import like a sequence's length, so Optional builds the tuple,
// OptionalHasElement is a constant and OptionalGetElement reads the field. An optional graph
// input is typed by whether the caller says it holds a value (OnnxImportOptions).
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// The optional input 0 as its tuple type, or null when it is a plain tensor (OptionalHasElement
// and OptionalGetElement take tensors too from opset 18).
const TupleTypeNode* OptionalType(ConvertContext& ctx) {
  if (!ctx.HasInput(0)) return nullptr;
  return ctx.Input(0).value()->checked_type.as<TupleTypeNode>();
}

absl::StatusOr<std::vector<Expr>> ConvertOptional(ConvertContext& ctx) {
  std::vector<Expr> fields;
  if (ctx.HasInput(0)) {
    KILN_ASSIGN_OR_RETURN(Expr value, ctx.Input(0));
    fields.push_back(value);
  } else if (!ctx.HasAttr("type")) {
    return ctx.Error("an empty Optional needs its 'type' attribute");
  }
  KILN_ASSIGN_OR_RETURN(Expr optional, ctx.Tuple(std::move(fields)));
  return std::vector<Expr>{optional};
}

absl::StatusOr<std::vector<Expr>> ConvertOptionalHasElement(ConvertContext& ctx) {
  const TupleTypeNode* type = OptionalType(ctx);
  bool has = ctx.HasInput(0) && (type == nullptr || !type->fields.empty());
  return std::vector<Expr>{ctx.Constant(MakeScalar(has))};
}

absl::StatusOr<std::vector<Expr>> ConvertOptionalGetElement(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr input, ctx.Input(0));
  const TupleTypeNode* type = OptionalType(ctx);
  if (type == nullptr) return std::vector<Expr>{input};
  if (type->fields.size() != 1) return ctx.Error("input 0 is an empty optional");
  if (const auto* tuple = input.as<TupleNode>()) return std::vector<Expr>{tuple->elements[0]};
  KILN_ASSIGN_OR_RETURN(Expr value, ctx.TupleGetItem(input, 0));
  return std::vector<Expr>{value};
}

}  // namespace

void RegisterOptionalConverters(ConverterTable& table) {
  table.Add("Optional", ConvertOptional);
  table.Add("OptionalHasElement", ConvertOptionalHasElement);
  table.Add("OptionalGetElement", ConvertOptionalGetElement);
}

}  // namespace kiln::onnx_frontend
