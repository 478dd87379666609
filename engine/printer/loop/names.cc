// Names, the `T` prefix, span comments, and the first sight of variables and buffers.
#include <array>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "engine/printer/loop/loop_builders.h"
#include "engine/printer/loop/loop_frames.h"
#include "engine/support/identifier.h"

namespace kiln::printer::loop_printer {

namespace {

// Names a loop variable or buffer must not take: Python keywords, and the two names the
// script itself uses (the `T` prefix and `range` of serial loops).
constexpr std::array<std::string_view, 37> kReservedNames = {
    "False",   "None",     "True",     "and",    "as",   "assert", "async",  "await",
    "break",   "class",    "continue", "def",    "del",  "elif",   "else",   "except",
    "finally", "for",      "from",     "global", "if",   "import", "in",     "is",
    "lambda",  "nonlocal", "not",      "or",     "pass", "raise",  "return", "try",
    "while",   "with",     "yield",    "T",      "range"};

}  // namespace

ExprDoc TAttr(std::string_view attr) {
  return std::make_shared<AttrAccessDocNode>(Id("T"), std::string(attr));
}

std::shared_ptr<CallDocNode> TCall(std::string_view callee, std::vector<ExprDoc> args) {
  return std::make_shared<CallDocNode>(TAttr(callee), std::move(args));
}

ExprDoc PrimTypeDoc(const loop::PrimType& type) { return TAttr(loop::PrimTypeName(type)); }

std::string LoopName(std::string_view hint) {
  std::string name = SanitizeIdentifier(hint);
  for (std::string_view reserved : kReservedNames) {
    if (name == reserved) {
      name.push_back('_');
      break;
    }
  }
  return name;
}

std::string LoopSpanComment(IRDocsifier& d, const Span& span) {
  if (!span || !d.options().show_spans) return std::string();
  // A span prints through the default layer (the graph dialect's span builder), so both
  // dialects spell spans alike: `si=conv1`, `si=[conv1, relu1]`.
  auto text = DocAs<IdDocNode>(d.AsDoc(span));
  if (text == nullptr) return std::string();
  return absl::StrCat("si=", text->name);
}

ExprDoc VarDoc(IRDocsifier& d, const loop::VarNode* var) {
  if (const ExprDoc* doc = d.Lookup(var)) return *doc;
  const loop::Var handle(var);
  IdDoc id = d.DefByName(handle, LoopName(var->name), IdKind::kLocal);
  auto* frame = d.GetFrame<LoopFunctionFrame>();
  if (frame != nullptr && frame->declare_free) {
    // A variable nothing in the printed IR defines: `n = T.int64()`.
    auto declaration =
        std::make_shared<AssignDocNode>(id, TCall(loop::PrimTypeName(var->type), {}), nullptr);
    declaration->source = handle;
    frame->top_declarations.push_back(std::move(declaration));
  }
  return id;
}

ExprDoc BufferCallDoc(IRDocsifier& d, const loop::BufferNode* buffer,
                      const loop::VarNode* implied_storage) {
  std::vector<ExprDoc> dims;
  dims.reserve(buffer->shape.size());
  for (size_t k = 0; k < buffer->shape.size(); ++k) {
    dims.push_back(buffer->is_symbolic() ? d.AsExprDoc(buffer->Extent(k))
                                         : ExprDoc(IntLiteral(buffer->shape[k])));
  }
  auto call = TCall("Buffer", {std::make_shared<TupleDocNode>(std::move(dims)),
                               StringLiteral(DataTypeName(buffer->dtype))});
  auto kwarg = [&call](std::string key, ExprDoc value) {
    call->kwargs_keys.push_back(std::move(key));
    call->kwargs_values.push_back(std::move(value));
  };
  if (buffer->data.get() != implied_storage) {
    if (const ExprDoc* data = d.Lookup(buffer->data.get())) kwarg("data", *data);
  }
  if (!buffer->strides.empty()) {
    std::vector<ExprDoc> strides;
    strides.reserve(buffer->strides.size());
    for (int64_t stride : buffer->strides) strides.push_back(IntLiteral(stride));
    kwarg("strides", std::make_shared<TupleDocNode>(std::move(strides)));
  }
  if (buffer->elem_offset != 0) kwarg("elem_offset", IntLiteral(buffer->elem_offset));
  if (buffer->scope != "global") kwarg("scope", StringLiteral(buffer->scope));
  return call;
}

ExprDoc BufferDoc(IRDocsifier& d, const loop::Buffer& buffer) {
  if (const ExprDoc* doc = d.Lookup(buffer.get())) return *doc;
  IdDoc id = d.DefByName(buffer, LoopName(buffer->name), IdKind::kLocal);
  // Storage nothing defined (a buffer of a fragment) is this buffer's own: `A.data`.
  const bool owns_storage = !d.IsDefined(buffer->data.get());
  if (owns_storage) {
    d.DefByDoc(buffer->data, std::make_shared<AttrAccessDocNode>(id, "data"));
  }
  auto* frame = d.GetFrame<LoopFunctionFrame>();
  if (frame != nullptr && frame->declare_free) {
    auto declaration = std::make_shared<AssignDocNode>(
        id, BufferCallDoc(d, buffer.get(), owns_storage ? buffer->data.get() : nullptr), nullptr);
    declaration->source = buffer;
    frame->DeclarationsFor(buffer->data.get())->push_back(std::move(declaration));
  }
  return id;
}

}  // namespace kiln::printer::loop_printer
