// Statements: a loop is `for i in range(n):` (or T.parallel / T.vectorized / T.unroll), a
// store is an indexed assignment, an allocation or a let binds a name for the statements after
// it at the same indentation (Python has no block scope), a kernel call is `T.call_kernel`.
// Each statement's span is its trailing comment.
#include <algorithm>
#include <vector>

#include "engine/loop/functor.h"
#include "engine/printer/loop/loop_builders.h"
#include "engine/printer/loop/loop_frames.h"

namespace kiln::printer::loop_printer {

namespace {

template <typename D>
D WithSourceAndSpan(IRDocsifier& d, D doc, const ObjectRef& node, const Span& span) {
  doc->source = node;
  doc->comment = LoopSpanComment(d, span);
  return doc;
}

// `range(n)` / `T.parallel(n)`, or with a non-zero min `range(min, min + extent)` (folded when
// both are constants).
ExprDoc LoopRangeDoc(IRDocsifier& d, const loop::ForNode& loop) {
  ExprDoc callee;
  switch (loop.for_kind) {
    case loop::ForKind::kSerial:
      callee = Id("range");
      break;
    case loop::ForKind::kParallel:
      callee = TAttr("parallel");
      break;
    case loop::ForKind::kVectorized:
      callee = TAttr("vectorized");
      break;
    case loop::ForKind::kUnrolled:
      callee = TAttr("unroll");
      break;
  }
  int64_t min = 0;
  int64_t extent = 0;
  const bool constant_min = loop::AsConstInt(loop.min, &min);
  std::vector<ExprDoc> args;
  if (constant_min && min == 0) {
    args.push_back(d.AsExprDoc(loop.extent));
  } else if (constant_min && loop::AsConstInt(loop.extent, &extent) &&
             loop.min->type == loop::kIndexType && loop.extent->type == loop::kIndexType) {
    args.push_back(d.AsExprDoc(loop.min));
    args.push_back(IntLiteral(min + extent));
  } else {
    ExprDoc start = d.AsExprDoc(loop.min);
    args.push_back(start);
    args.push_back(std::make_shared<OperationDocNode>(
        OperationKind::kAdd, std::vector<ExprDoc>{start, d.AsExprDoc(loop.extent)}));
  }
  return std::make_shared<CallDocNode>(std::move(callee), std::move(args));
}

// The first buffer in `body` that is the whole of the allocated storage (same element type
// and scope, no offset, dense, as many elements): the allocation then prints as that buffer,
// `A = T.allocate([4, 8], ...)`, instead of as raw storage plus a view.
loop::Buffer WholeBufferOf(const IRDocsifier& d, const loop::AllocateNode& alloc) {
  class Finder final : public loop::StmtExprVisitor {
   public:
    Finder(const IRDocsifier& d, const loop::AllocateNode& alloc) : d_(d), alloc_(alloc) {}
    loop::Buffer found;

    void VisitBuffer(const loop::Buffer& buffer) override {
      if (found || buffer->data.get() != alloc_.data.get() || d_.IsDefined(buffer.get())) return;
      if (buffer->is_symbolic() || alloc_.is_dynamic()) return;  // printed as storage + view
      if (buffer->dtype == alloc_.dtype && buffer->scope == alloc_.scope &&
          buffer->elem_offset == 0 && buffer->NumElements() == alloc_.extent &&
          (buffer->strides.empty() || buffer->strides == DenseStrides(*buffer))) {
        found = buffer;
      }
    }

   private:
    static std::vector<int64_t> DenseStrides(const loop::BufferNode& buffer) {
      std::vector<int64_t> strides(buffer.shape.size(), 1);
      for (size_t i = buffer.shape.size(); i > 1; --i) {
        strides[i - 2] = strides[i - 1] * buffer.shape[i - 1];
      }
      return strides;
    }
    const IRDocsifier& d_;
    const loop::AllocateNode& alloc_;
  } finder(d, alloc);
  finder.VisitStmt(alloc.body);
  return finder.found;
}

}  // namespace

std::vector<StmtDoc> StmtList(IRDocsifier& d, const loop::Stmt& stmt) {
  Doc doc = d.AsDoc(stmt);
  if (auto block = DocAs<StmtBlockDocNode>(doc)) {
    // An empty body (a kernel over zero elements, a sequence RemoveNoOp
    // emptied) still needs a statement to be a body: the no-op T.evaluate(0).
    if (block->stmts.empty()) {
      return {std::make_shared<ExprStmtDocNode>(TCall("evaluate", {d.AsExprDoc(loop::IntImm(0))}))};
    }
    return block->stmts;
  }
  if (auto single = DocAs<StmtDocNode>(doc)) return {single};
  // Only a node nobody registered for (a placeholder) lands here.
  return {std::make_shared<ExprStmtDocNode>(DocAs<ExprDocNode>(doc))};
}

Doc BuildFor(const ObjectRef& node, IRDocsifier& d) {
  const auto* loop = node.as<loop::ForNode>();
  ExprDoc range = LoopRangeDoc(d, *loop);
  // The loop defines its variable (no declaration); a variable reused by a later loop keeps
  // its name.
  const ExprDoc* defined = d.Lookup(loop->loop_var.get());
  ExprDoc var = defined != nullptr
                    ? *defined
                    : d.DefByName(loop->loop_var, LoopName(loop->loop_var->name), IdKind::kLocal);
  auto doc = std::make_shared<ForDocNode>(var, range, StmtList(d, loop->body));
  return WithSourceAndSpan(d, doc, node, loop->span);
}

Doc BuildBufferStore(const ObjectRef& node, IRDocsifier& d) {
  const auto* store = node.as<loop::BufferStoreNode>();
  ExprDoc buffer = BufferDoc(d, store->buffer);
  std::vector<ExprDoc> indices;
  indices.reserve(store->indices.size());
  for (const loop::PrimExpr& index : store->indices) indices.push_back(d.AsExprDoc(index));
  if (indices.empty()) indices.push_back(std::make_shared<TupleDocNode>(std::vector<ExprDoc>{}));
  auto lhs = std::make_shared<IndexDocNode>(std::move(buffer), std::move(indices));
  auto doc = std::make_shared<AssignDocNode>(lhs, d.AsExprDoc(store->value), nullptr);
  return WithSourceAndSpan(d, doc, node, store->span);
}

Doc BuildAllocate(const ObjectRef& node, IRDocsifier& d) {
  const auto* alloc = node.as<loop::AllocateNode>();
  std::vector<ExprDoc> shape;
  IdDoc name;
  if (loop::Buffer whole = WholeBufferOf(d, *alloc)) {
    name = d.DefByName(whole, LoopName(whole->name), IdKind::kLocal);
    d.DefByDoc(alloc->data, std::make_shared<AttrAccessDocNode>(name, "data"));
    for (int64_t dim : whole->shape) shape.push_back(IntLiteral(dim));
  } else {
    name = d.DefByName(alloc->data, LoopName(alloc->data->name), IdKind::kLocal);
    shape.push_back(alloc->is_dynamic() ? d.AsExprDoc(alloc->dynamic_extent)
                                        : ExprDoc(IntLiteral(alloc->extent)));
  }
  auto call =
      TCall("allocate", {std::make_shared<ListDocNode>(std::move(shape)),
                         StringLiteral(DataTypeName(alloc->dtype)), StringLiteral(alloc->scope)});
  std::vector<StmtDoc> stmts{WithSourceAndSpan(
      d, std::make_shared<AssignDocNode>(name, call, nullptr), node, alloc->span)};

  std::vector<StmtDoc> declarations;
  std::vector<StmtDoc> body;
  if (auto* frame = d.GetFrame<LoopFunctionFrame>()) {
    frame->allocations.push_back({alloc->data.get(), &declarations});
    body = StmtList(d, alloc->body);
    frame->allocations.pop_back();
  } else {
    body = StmtList(d, alloc->body);
  }
  stmts.insert(stmts.end(), declarations.begin(), declarations.end());
  stmts.insert(stmts.end(), body.begin(), body.end());
  return std::make_shared<StmtBlockDocNode>(std::move(stmts));
}

Doc BuildIfThenElse(const ObjectRef& node, IRDocsifier& d) {
  const auto* branch = node.as<loop::IfThenElseNode>();
  ExprDoc condition = d.AsExprDoc(branch->condition);
  std::vector<StmtDoc> then_case = StmtList(d, branch->then_case);
  std::vector<StmtDoc> else_case;
  if (branch->else_case.defined()) else_case = StmtList(d, branch->else_case);
  auto doc = std::make_shared<IfDocNode>(condition, std::move(then_case), std::move(else_case));
  return WithSourceAndSpan(d, doc, node, branch->span);
}

Doc BuildWhile(const ObjectRef& node, IRDocsifier& d) {
  const auto* loop = node.as<loop::WhileNode>();
  auto doc = std::make_shared<WhileDocNode>(d.AsExprDoc(loop->condition), StmtList(d, loop->body));
  return WithSourceAndSpan(d, doc, node, loop->span);
}

Doc BuildLetStmt(const ObjectRef& node, IRDocsifier& d) {
  const auto* let = node.as<loop::LetStmtNode>();
  ExprDoc value = d.AsExprDoc(let->value);
  // A symbol a kernel binds here is already named by the parameter shapes that mention it,
  // which declared it free (`S = T.int64()`): the binding takes that name and the declaration.
  IdDoc var;
  auto* frame = d.GetFrame<LoopFunctionFrame>();
  if (const ExprDoc* named = d.Lookup(let->var.get()); named != nullptr && frame != nullptr) {
    auto& declarations = frame->top_declarations;
    auto free = std::find_if(declarations.begin(), declarations.end(), [&](const StmtDoc& doc) {
      return doc->source.get() == let->var.get();
    });
    if (free != declarations.end()) {
      declarations.erase(free);
      var = std::dynamic_pointer_cast<const IdDocNode>(*named);
    }
  }
  if (!var) var = d.DefByName(let->var, LoopName(let->var->name), IdKind::kLocal);
  auto binding = std::make_shared<AssignDocNode>(var, value, PrimTypeDoc(let->var->type));
  std::vector<StmtDoc> stmts{WithSourceAndSpan(d, binding, node, let->span)};
  std::vector<StmtDoc> body = StmtList(d, let->body);
  stmts.insert(stmts.end(), body.begin(), body.end());
  return std::make_shared<StmtBlockDocNode>(std::move(stmts));
}

Doc BuildSeqStmt(const ObjectRef& node, IRDocsifier& d) {
  std::vector<StmtDoc> stmts;
  for (const loop::Stmt& stmt : node.as<loop::SeqStmtNode>()->seq) {
    std::vector<StmtDoc> part = StmtList(d, stmt);
    stmts.insert(stmts.end(), part.begin(), part.end());
  }
  return std::make_shared<StmtBlockDocNode>(std::move(stmts));
}

Doc BuildEvaluate(const ObjectRef& node, IRDocsifier& d) {
  const auto* eval = node.as<loop::EvaluateNode>();
  auto doc = std::make_shared<ExprStmtDocNode>(TCall("evaluate", {d.AsExprDoc(eval->value)}));
  return WithSourceAndSpan(d, doc, node, eval->span);
}

Doc BuildCallKernel(const ObjectRef& node, IRDocsifier& d) {
  const auto* call = node.as<loop::CallKernelNode>();
  // The callee's module-level name when the module printed it; otherwise its own name.
  ExprDoc callee;
  if (const ExprDoc* global = d.Lookup(call->callee.get())) {
    callee = *global;
  } else {
    callee = Id(LoopName(call->callee->name_hint), IdKind::kGlobal);
  }
  std::vector<ExprDoc> args{callee};
  for (const loop::Buffer& buffer : call->args) args.push_back(BufferDoc(d, buffer));
  auto doc = std::make_shared<ExprStmtDocNode>(TCall("call_kernel", std::move(args)));
  return WithSourceAndSpan(d, doc, node, call->span);
}

Doc BuildAssert(const ObjectRef& node, IRDocsifier& d) {
  const auto* check = node.as<loop::AssertNode>();
  auto doc = std::make_shared<ExprStmtDocNode>(
      TCall("assert", {d.AsExprDoc(check->condition), StringLiteral(check->message)}));
  return WithSourceAndSpan(d, doc, node, check->span);
}

}  // namespace kiln::printer::loop_printer
