// LabelOps: a mutator that stops at each Primitive function, names it and
// keeps everything else as it is.
#include "engine/transform/label_ops.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_mutator.h"
#include "engine/ir/expr_visitor.h"

namespace kiln::transform {
namespace {

constexpr size_t kMaxNameLength = 80;
constexpr char kAttrName[] = "name";

// FNV-1a: stable across builds and platforms, unlike std::hash.
uint64_t StableHash(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string FusedName(const FunctionNode& func) {
  std::string name = "fused";
  PostOrderVisit(func.body, [&name](const Expr& expr) {
    const auto* call = expr.as<CallNode>();
    if (call == nullptr) return;
    const auto* op = call->op.as<OpNode>();
    if (op == nullptr) return;
    std::string op_name = op->name;
    for (char& c : op_name) {
      if (c == '.') c = '_';
    }
    absl::StrAppend(&name, "_", op_name);
  });
  if (name.size() > kMaxNameLength) {
    uint64_t hash = StableHash(name);
    name.resize(kMaxNameLength);
    absl::StrAppend(&name, "_", absl::Hex(hash, absl::kZeroPad16));
  }
  return name;
}

class Labeler : public ExprMutator {
 public:
  explicit Labeler(const ExprNode* root) : root_(root) {}

 protected:
  Expr VisitFunction_(const FunctionNode* op) override {
    if (op == root_ || !op->HasNonzeroAttr(kAttrPrimitive)) {
      return ExprMutator::VisitFunction_(op);
    }
    std::string name = FusedName(*op);
    const AttrValue* current = op->attrs ? op->attrs->Find(kAttrName) : nullptr;
    if (current != nullptr && current->is<std::string>() && current->get<std::string>() == name) {
      return Expr(op);
    }
    return MakeRef<FunctionNode>(op->params, op->body, op->ret_type,
                                 WithAttr(op->attrs, kAttrName, AttrValue(name)), op->fields());
  }

 private:
  const ExprNode* root_;
};

}  // namespace

Pass LabelOps() {
  return CreateFunctionPass(
      [](const Function& func, const IRModule&, PassContext&) -> absl::StatusOr<Function> {
        Labeler labeler(func.get());
        return Downcast<FunctionNode>(labeler.VisitExpr(func));
      },
      PassInfo{"LabelOps", 0, {}, PassStage::kGraph});
}

}  // namespace kiln::transform
