// Graph main -> loop main: a post-order walk of main's dataflow graph records
// one step per kernel call over numbered values; storage is decided once all
// steps are known (outputs bound first, then the workspace plan), and main's
// body is the CallKernel sequence over the resulting buffers.
#include "engine/lower/lower_module.h"

#include <algorithm>
#include <optional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/lower/default_schedule.h"
#include "engine/lower/lower_primitive.h"
#include "engine/lower/lowering_util.h"
#include "engine/ir/expr_walk.h"
#include "engine/ir/if_scopes.h"
#include "engine/ir/structural_equal.h"
#include "engine/loop/functor.h"
#include "engine/loop/arith/analyzer.h"
#include "engine/loop/arith/expr_deep_equal.h"
#include "engine/lower/memory_plan.h"
#include "engine/lower/merged_spans.h"
#include "engine/lower/symbolic_schedule.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_relations.h"
#include "engine/support/identifier.h"
#include "engine/support/status_macros.h"
#include "engine/te/lower_schedule.h"

namespace kiln::lower {
namespace {

std::string KernelBaseName(const std::string& op_name) {
  std::string name = absl::StrCat("fused_", op_name);
  for (char& c : name) {
    if (c == '.') c = '_';
  }
  return name;
}

// A value flowing through main: a tensor leaf of some graph expression.
struct Value {
  enum class Origin { kInput, kOutput, kConstant, kKernel, kView };
  Value(Origin origin, DataType dtype, std::vector<int64_t> shape, std::string name)
      : origin(origin), dtype(dtype), shape(std::move(shape)), name(std::move(name)) {}

  Origin origin;
  DataType dtype;
  std::vector<int64_t> shape;
  std::string name;
  // The value whose storage this one uses: itself, except for views (the
  // root of the viewed value).
  int root = -1;
  int step = -1;      // kKernel: the step writing it
  int last_use = -1;  // the last step reading it or any view of it (roots only)
  loop::Buffer buffer;
  // Every dim as an extent when some are symbolic (shape has -1 there); empty when static.
  std::vector<loop::PrimExpr> dims;
  bool symbolic() const { return !dims.empty(); }
  int64_t NumElements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  loop::PrimExpr CountExpr() const {
    if (!symbolic()) return loop::IntImm(NumElements());
    loop::PrimExpr n = loop::IntImm(1);
    for (const loop::PrimExpr& d : dims) n = n * d;
    return loop::arith::Simplify(n);
  }
  // A buffer of this value's shape viewing `data` at `offset` (symbolic values: at 0).
  loop::Buffer ViewOf(const loop::Var& data, int64_t offset = 0) const {
    if (symbolic()) return loop::MakeSymbolicBufferView(name, data, dtype, dims);
    return loop::MakeBufferView(name, data, dtype, shape, offset);
  }
  // A buffer of its own.
  loop::Buffer OwnBuffer() const {
    return symbolic() ? loop::MakeSymbolicBuffer(name, dtype, dims)
                      : loop::MakeBuffer(name, dtype, shape);
  }
};

// Step::kernel values that are not kernels. The steps of an If are its begin (args: the
// condition), the then-branch's steps, kElse, the else-branch's steps and kIfEnd; those of a
// while_loop its begin (args: the condition), the body's steps and kLoopEnd.
constexpr int kAssertStep = -1;  // an assert of the bool value args[0]
constexpr int kIfBegin = -2;
constexpr int kElse = -3;
constexpr int kIfEnd = -4;
constexpr int kLoopBegin = -5;
constexpr int kLoopEnd = -6;
// Ifs nested deeper than this in main (or in one loop body) are refused (lowering a branch
// recurses); so are loops nested deeper than kMaxLoopDepth.
constexpr int kMaxIfDepth = 64;
constexpr int kMaxLoopDepth = 16;

struct Step {
  int kernel;             // a kernel, or one of the steps above
  std::vector<int> args;  // value ids, in the kernel's parameter order
  Span span;
  std::string message;    // an assert's error
};

// A kernel while main is being lowered.
struct KernelEntry {
  LoweredKernel info;
  loop::PrimFunc func;
  GlobalVar global;
  std::vector<Constant> constants;
  std::vector<Function> served;  // the structurally equal primitive functions it computes
  bool takes_symbols = false;    // its last parameter is the symbols' values
};

// Moves a copy kernel's stores to its output (storage `from`, one axis) to `offset` + index
// of `to`.
class RowStores : public loop::StmtExprMutator {
 public:
  RowStores(const loop::VarNode* from, loop::Buffer to, loop::PrimExpr offset)
      : from_(from), to_(std::move(to)), offset_(std::move(offset)) {}
  int moved() const { return moved_; }

 protected:
  loop::Stmt VisitBufferStore_(const loop::BufferStoreNode* op, const loop::Stmt& self) override {
    if (op->buffer->data.get() != from_ || op->indices.size() != 1) {
      return loop::StmtExprMutator::VisitBufferStore_(op, self);
    }
    const loop::PrimExpr& index = op->indices[0];
    loop::PrimExpr base =
        index->type.lanes > 1 ? loop::MakeBroadcast(offset_, index->type.lanes) : offset_;
    ++moved_;
    return loop::MakeBufferStore(to_, op->value, {base + index}, op->span);
  }

 private:
  const loop::VarNode* from_;
  loop::Buffer to_;
  loop::PrimExpr offset_;
  int moved_ = 0;
};

class MainLowering {
 public:
  MainLowering(const FunctionNode& main, const LowerOptions& options)
      : main_(main), options_(options) {}

  absl::StatusOr<LoweredModule> Run() {
    CollectSymbols();
    te::SymbolScope symbol_scope(symbols_.empty() ? nullptr : &symbols_);
    KILN_RETURN_IF_ERROR(AddInputs());
    KILN_RETURN_IF_ERROR(Walk());
    KILN_RETURN_IF_ERROR(RelowerSharedKernels());
    if (options_.only_kernels) return SelectedKernels();
    KILN_RETURN_IF_ERROR(AddOutputs());
    KILN_RETURN_IF_ERROR(AssignStorage());
    return Build();
  }

 private:
  int NewValue(Value value) {
    int id = static_cast<int>(values_.size());
    if (value.root < 0) value.root = id;
    values_.push_back(std::move(value));
    return id;
  }

  // `base`, or `base_1`, `base_2`, ... when taken (numbered per base, so
  // thousands of kernels of one name stay linear).
  std::string UniqueName(const std::string& base) {
    if (used_names_.insert(base).second) return base;
    int& suffix = next_suffix_[base];
    std::string name;
    do {
      name = absl::StrCat(base, "_", ++suffix);
    } while (!used_names_.insert(name).second);
    return name;
  }

  // The symbols of main's inputs' dims, in order of first appearance: each becomes an int64
  // variable named after it, bound in every kernel that uses it (LowerPrimitive).
  void CollectSymbols() {
    std::set<std::string> names;
    for (const Var& param : main_.params) {
      Type type = param->checked_type ? param->checked_type : param->type_annotation;
      absl::StatusOr<std::vector<TensorLeaf>> leaves = TensorLeaves(type, /*allow_symbolic=*/true);
      if (!leaves.ok()) continue;  // AddInputs reports it
      for (const TensorLeaf& leaf : *leaves) {
        for (const std::string& symbol : leaf.symbols) {
          if (symbol.empty() || !names.insert(symbol).second) continue;
          symbols_.emplace_back(symbol, loop::MakeVar(SanitizeIdentifier(symbol)));
        }
      }
    }
  }

  // The dims of a value of `leaf`'s type (empty for static ones).
  absl::StatusOr<std::vector<loop::PrimExpr>> DimsOf(const TensorLeaf& leaf) const {
    // The interpreter's run of a symbolic model keeps no string arena (RunLoweredModule).
    if (!symbols_.empty() && leaf.dtype == DataType::kString) {
      return absl::UnimplementedError(
          "string tensors, which need fixed input shapes (the model has dimensions known only "
          "at run time)");
    }
    if (!leaf.is_symbolic()) return std::vector<loop::PrimExpr>{};
    return LeafDims(leaf);
  }

  absl::Status AddInputs() {
    for (const Var& param : main_.params) {
      Type type = param->checked_type ? param->checked_type : param->type_annotation;
      absl::StatusOr<std::vector<TensorLeaf>> leaves = TensorLeaves(type, !symbols_.empty());
      std::string prefix = NodePrefix(absl::StrCat("parameter %", param->name_hint), param->span);
      if (!leaves.ok()) return Prefixed(prefix, leaves.status());
      std::vector<int>& ids = expr_values_[param.get()];
      for (size_t i = 0; i < leaves->size(); ++i) {
        std::string base = SanitizeIdentifier(param->name_hint);
        if (leaves->size() > 1) absl::StrAppend(&base, "_", i);
        Value value{Value::Origin::kInput, (*leaves)[i].dtype, (*leaves)[i].shape,
                    UniqueName(base)};
        absl::StatusOr<std::vector<loop::PrimExpr>> dims = DimsOf((*leaves)[i]);
        if (!dims.ok()) return Prefixed(prefix, dims.status());
        value.dims = *std::move(dims);
        value.buffer = value.OwnBuffer();
        int id = NewValue(std::move(value));
        ids.push_back(id);
        inputs_.push_back(id);
      }
    }
    if (!symbols_.empty()) {
      Value values{Value::Origin::kInput, DataType::kInt64,
                   {static_cast<int64_t>(symbols_.size())}, UniqueName(kSymbolsParam)};
      values.buffer = values.OwnBuffer();
      symbols_value_ = NewValue(std::move(values));
    }
    return absl::OkStatus();
  }

  absl::Status Walk() {
    // Where each node is computed (see IfScopes): lowering a branch recurses.
    scopes_.push_back(std::make_unique<IfScopes>(main_.body));
    if (scopes_.back()->MaxDepth() > kMaxIfDepth) {
      return absl::InvalidArgumentError(absl::StrCat("main's Ifs nest ", scopes_.back()->MaxDepth(),
                                                     " deep, more than ", kMaxIfDepth));
    }
    return WalkScope(main_.body);
  }

  // The dataflow (ChildSet::kDataflow) and an If's condition: what is computed where a node is.
  static bool IsScopeEdge(ChildRole role) {
    return InChildSet(ChildSet::kDataflow, role) || role == ChildRole::kCondition;
  }

  // Visits the nodes of `root`'s dataflow graph not lowered yet, children first, without
  // recursion. An If's branches are not entered: VisitIf lowers each into steps of its own,
  // computed only when taken.
  absl::Status WalkScope(const Expr& root) {
    if (expr_values_.count(root.get()) != 0) return absl::OkStatus();
    std::unordered_set<const ExprNode*> seen{root.get()};
    return WalkPostOrder(
        root.get(), ChildSet::kAll,
        [&](const WalkEdge& edge) {
          // A loop body is lowered by VisitWhileLoop, not as a value.
          if (!IsScopeEdge(edge.role) || edge.child->kind() == ObjectKind::kFunction) return false;
          if (edge.role == ChildRole::kLetBody) {
            const auto& let = *static_cast<const LetNode*>(edge.parent);
            expr_values_[let.var.get()] = expr_values_.at(let.value.get());
          }
          if (expr_values_.count(edge.child) != 0) return false;
          return seen.insert(edge.child).second;
        },
        [&](const ExprNode* node) { return Visit(Expr(node)); });
  }

  // if (cond) { then-branch; results = its values } else { else-branch; results = its values }:
  // each branch's kernels run only when it is taken, and copy its values into the If's.
  absl::Status VisitIf(const Expr& expr, const IfNode& branch) {
    Span span = Or(expr->span);
    const std::vector<int>& cond = expr_values_.at(branch.cond.get());
    if (cond.size() != 1 || values_[cond[0]].dtype != DataType::kBool ||
        !values_[cond[0]].shape.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(NodePrefix("If", expr->span),
                                                     "the condition must be a bool scalar"));
    }
    absl::StatusOr<std::vector<TensorLeaf>> leaves = TensorLeaves(expr->checked_type);
    if (!leaves.ok()) return Prefixed(NodePrefix("If", expr->span), leaves.status());
    int if_index = if_count_++;
    std::vector<int> results;
    for (size_t i = 0; i < leaves->size(); ++i) {
      std::string base = absl::StrCat("if", if_index);
      if (leaves->size() > 1) absl::StrAppend(&base, "_", i);
      results.push_back(NewValue(
          Value{Value::Origin::kKernel, (*leaves)[i].dtype, (*leaves)[i].shape, UniqueName(base)}));
    }
    KILN_RETURN_IF_ERROR(HoistIntoScope(expr.get()));
    Use(cond[0], static_cast<int>(steps_.size()));
    steps_.push_back(Step{kIfBegin, {cond[0]}, span});
    KILN_RETURN_IF_ERROR(LowerBranch(branch.true_branch, results, span));
    steps_.push_back(Step{kElse, {}, span});
    KILN_RETURN_IF_ERROR(LowerBranch(branch.false_branch, results, span));
    // Every result lives through both branches, even one nothing reads after the If: no value
    // of a branch may share the storage its kernel writes a result into.
    for (int result : results) Use(result, static_cast<int>(steps_.size()));
    steps_.push_back(Step{kIfEnd, {}, span});
    expr_values_[expr.get()] = std::move(results);
    return absl::OkStatus();
  }

  // Computes before the If what its branches read that belongs to the If's scope (see
  // IfScopes): values both branches read, or that the code after the If reads too.
  absl::Status HoistIntoScope(const ExprNode* if_node) {
    for (const ExprNode* node : scopes_.back()->ComputedBefore(if_node, [this](const ExprNode* n) {
           return expr_values_.count(n) != 0;
         })) {
      KILN_RETURN_IF_ERROR(WalkScope(Expr(node)));
    }
    return absl::OkStatus();
  }

  // The steps of one branch (the nodes of its scope), ending with its values written into
  // `results`.
  absl::Status LowerBranch(const Expr& body, const std::vector<int>& results, const Span& span) {
    int branch_begin = static_cast<int>(steps_.size());
    KILN_RETURN_IF_ERROR(WalkScope(body));
    std::vector<int> values = expr_values_.at(body.get());
    if (values.size() != results.size()) {
      return absl::InternalError(absl::StrCat(NodePrefix("If", span), "a branch gives ",
                                              values.size(), " tensors for ", results.size()));
    }
    std::set<int> written_in_place;
    for (size_t i = 0; i < values.size(); ++i) {
      // A value the branch's own kernel writes is written straight into the If's result: its
      // storage becomes the result's (from that kernel on, through every later reader).
      Value& value = values_[values[i]];
      if (value.origin == Value::Origin::kKernel && value.root == values[i] &&
          value.step >= branch_begin && written_in_place.insert(values[i]).second) {
        Value& result = values_[results[i]];
        result.step = result.step < 0 ? value.step : std::min(result.step, value.step);
        result.last_use = std::max(result.last_use, value.last_use);
        value.origin = Value::Origin::kView;
        value.root = results[i];
        continue;
      }
      KILN_ASSIGN_OR_RETURN(int kernel, CopyKernel(values_[results[i]], span));
      int step_index = static_cast<int>(steps_.size());
      Use(values[i], step_index);
      // The first writer (the then-branch's copy) starts the result's lifetime: it then spans
      // the else-branch, whose values never share its storage.
      if (values_[results[i]].step < 0) values_[results[i]].step = step_index;
      steps_.push_back(Step{kernel, {values[i], results[i]}, span});
    }
    return absl::OkStatus();
  }

  absl::Status Visit(const Expr& expr) {
    switch (expr->kind()) {
      case ObjectKind::kVar:
        if (expr_values_.count(expr.get()) == 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              NodePrefix(absl::StrCat("%", expr.as<VarNode>()->name_hint), expr->span),
              "free variable in main"));
        }
        return absl::OkStatus();
      case ObjectKind::kConstant:
        expr_values_[expr.get()] = {ConstantValue(Downcast<ConstantNode>(expr))};
        return absl::OkStatus();
      case ObjectKind::kCall:
        return VisitCall(expr, *expr.as<CallNode>());
      case ObjectKind::kTuple: {
        std::vector<int> ids;
        for (const Expr& element : expr.as<TupleNode>()->elements) {
          const std::vector<int>& field = expr_values_.at(element.get());
          ids.insert(ids.end(), field.begin(), field.end());
        }
        expr_values_[expr.get()] = std::move(ids);
        return absl::OkStatus();
      }
      case ObjectKind::kTupleGetItem: {
        const auto& get = *expr.as<TupleGetItemNode>();
        const auto* tuple_type = get.tuple->checked_type.as<TupleTypeNode>();
        if (tuple_type == nullptr || get.index < 0 ||
            get.index >= static_cast<int>(tuple_type->fields.size())) {
          return absl::InvalidArgumentError(
              absl::StrCat(NodePrefix("TupleGetItem", expr->span), "index ", get.index,
                           " is out of range or the tuple is not typed (run InferType first)"));
        }
        int offset = 0;
        for (int i = 0; i < get.index; ++i) offset += LeafCount(tuple_type->fields[i]);
        int count = LeafCount(tuple_type->fields[get.index]);
        const std::vector<int>& all = expr_values_.at(get.tuple.get());
        expr_values_[expr.get()] = std::vector<int>(all.begin() + offset, all.begin() + offset + count);
        return absl::OkStatus();
      }
      case ObjectKind::kLet:
        expr_values_[expr.get()] = expr_values_.at(expr.as<LetNode>()->body.get());
        return absl::OkStatus();
      case ObjectKind::kIf:
        return VisitIf(expr, *expr.as<IfNode>());
      case ObjectKind::kFunction:
        return absl::UnimplementedError(absl::StrCat(
            NodePrefix("function", expr->span), "function values in main are not supported"));
      case ObjectKind::kGlobalVar:
        return absl::UnimplementedError(
            absl::StrCat(NodePrefix(absl::StrCat("@", expr.as<GlobalVarNode>()->name_hint),
                                    expr->span),
                         "global function values in main are not supported"));
      default:
        return absl::UnimplementedError(
            absl::StrCat(NodePrefix(ObjectKindName(expr->kind()), expr->span),
                         "not supported in main (lowering expects the graph normal form the "
                         "default pipelines produce)"));
    }
  }

  int ConstantValue(const Constant& constant) {
    auto it = constant_values_.find(constant.get());
    if (it != constant_values_.end()) return it->second;
    const TensorDataNode& data = *constant->data;
    Value value{Value::Origin::kConstant, data.dtype, data.shape,
                UniqueName(absl::StrCat("const", constant_order_.size()))};
    value.buffer = loop::MakeBuffer(value.name, value.dtype, value.shape);
    int id = NewValue(std::move(value));
    constant_values_[constant.get()] = id;
    constant_order_.push_back({id, constant->data});
    return id;
  }

  // A function that only gives its one input, or one field of its one tuple input, another
  // shape, or null. `*field` is then the field's index among the call's flattened inputs (0 for
  // a tensor input): a branch of a split or of a channel shuffle reshaped for its next kernel is
  // a view too, not a copy.
  static const OpEntry* ViewOp(const FunctionNode& func, size_t input_count, size_t* field) {
    const auto* call = func.body.as<CallNode>();
    if (call == nullptr || func.params.size() != 1 || call->args.size() != 1) return nullptr;
    *field = 0;
    if (const auto* get = call->args[0].as<TupleGetItemNode>()) {
      // The index counts flattened inputs only when every field is one tensor.
      const auto* tuple = func.params[0]->checked_type.as<TupleTypeNode>();
      if (!get->tuple.same_as(func.params[0]) || tuple == nullptr ||
          tuple->fields.size() != input_count || get->index < 0 ||
          static_cast<size_t>(get->index) >= input_count) {
        return nullptr;
      }
      for (const Type& type : tuple->fields) {
        if (type.as<TensorTypeNode>() == nullptr) return nullptr;
      }
      *field = static_cast<size_t>(get->index);
    } else if (!call->args[0].same_as(func.params[0]) || input_count != 1) {
      return nullptr;
    }
    const OpEntry* entry = OpRegistry::Global().FindCallee(call->op);
    return entry != nullptr && entry->non_computational ? entry : nullptr;
  }

  // Whether `func` is one squeeze without axes (every axis of extent 1).
  static bool SqueezesEveryUnitAxis(const FunctionNode& func) {
    static const OpEntry& squeeze = *OpRegistry::Global().Find("squeeze");
    const CallNode* call = AsCallOf(func.body, squeeze);
    if (call == nullptr) return false;
    const AttrValue* axis = call->attrs ? call->attrs->Find("axis") : nullptr;
    return axis == nullptr ||
           (axis->is<AttrValue::Array>() && axis->get<AttrValue::Array>().empty());
  }

  // The call of `assert` a function is made of (its params passed in order), or null.
  static const CallNode* AssertCall(const FunctionNode& func) {
    static const OpEntry& assert_op = *OpRegistry::Global().Find("assert");
    const CallNode* call = AsCallOf(func.body, assert_op);
    if (call == nullptr || call->args.size() != func.params.size()) return nullptr;
    for (size_t i = 0; i < call->args.size(); ++i) {
      if (!call->args[i].same_as(func.params[i])) return nullptr;
    }
    return call;
  }

  // The call of write_row a call is (directly, or through a function of just it), or null.
  static const CallNode* WriteRowCall(const Expr& expr) {
    static const OpEntry& write_row = *OpRegistry::Global().Find("write_row");
    const auto* call = expr.as<CallNode>();
    if (call == nullptr) return nullptr;
    if (AsCallOf(expr, write_row) != nullptr) return call;
    const auto* func = call->op.as<FunctionNode>();
    const CallNode* inner = func == nullptr ? nullptr : AsCallOf(func->body, write_row);
    if (inner == nullptr || inner->args.size() != func->params.size() ||
        call->args.size() != func->params.size()) {
      return nullptr;
    }
    for (size_t i = 0; i < inner->args.size(); ++i) {
      if (!inner->args[i].same_as(func->params[i])) return nullptr;
    }
    return call;
  }

  // The next states of `body` (its first `num_state` parameters) that are a row written into
  // the state itself, read nowhere else in the body: those calls write the row in place
  // (VisitRowWriteInPlace) instead of computing every row and copying them all back.
  static std::vector<std::pair<const ExprNode*, size_t>> RowWritesInPlace(const FunctionNode& body,
                                                                         size_t num_state) {
    std::vector<std::pair<const ExprNode*, size_t>> found;
    const auto* next = body.body.as<TupleNode>();
    if (next == nullptr || next->elements.size() != num_state) return found;
    std::unordered_map<const ExprNode*, int> uses;
    std::unordered_set<const ExprNode*> seen;
    WalkPostOrder(
        body.body.get(), ChildSet::kUses,
        [&](const WalkEdge& edge) {
          return edge.child->kind() != ObjectKind::kFunction && seen.insert(edge.child).second;
        },
        [&](const ExprNode* node) {
          ForEachChild(node, ChildSet::kUses, [&](const ExprNode* child) { ++uses[child]; });
        });
    for (size_t k = 1; k < num_state; ++k) {
      const CallNode* write = WriteRowCall(next->elements[k]);
      if (write != nullptr && write->args.size() == 3 && write->args[0].same_as(body.params[k]) &&
          uses[body.params[k].get()] == 1 && uses[next->elements[k].get()] == 1) {
        found.emplace_back(next->elements[k].get(), k);
      }
    }
    return found;
  }

  // write_row(state, value, row) as the next state of a loop state read nowhere else
  // (row_writes_in_place_ maps the call to the state): a kernel copies value into the state's
  // row, the state is its own next value.
  absl::Status VisitRowWriteInPlace(const Expr& expr, const CallNode& call, int state) {
    std::vector<int> args;
    for (size_t i = 1; i < 3; ++i) {
      const std::vector<int>& ids = expr_values_.at(call.args[i].get());
      if (ids.size() != 1) {
        return absl::InternalError(absl::StrCat(NodePrefix("write_row", expr->span),
                                                "argument ", i, " is not one tensor"));
      }
      args.push_back(ids[0]);
    }
    for (int id : {args[0], state}) {
      if (values_[id].symbolic()) {
        return absl::UnimplementedError(absl::StrCat(
            NodePrefix("write_row", expr->span),
            "a loop state of dimensions known only at run time is not supported yet"));
      }
    }
    // The row's and the state's elements as one axis each: the kernel copies them in order.
    auto flat = [&](int id) {
      const Value& value = values_[id];
      Value view{Value::Origin::kView, value.dtype, {value.NumElements()},
                 UniqueName(absl::StrCat(value.name, "_flat"))};
      view.root = value.root;
      return NewValue(std::move(view));
    };
    args[0] = flat(args[0]);
    args.push_back(flat(state));
    KILN_ASSIGN_OR_RETURN(int kernel, RowWriteKernel(values_[args[0]], values_[state].shape[0],
                                                     values_[args[2]], Or(expr->span)));
    KILN_RETURN_IF_ERROR(CheckArgs(kernels_[kernel], args));
    int step_index = static_cast<int>(steps_.size());
    for (int id : args) Use(id, step_index);
    steps_.push_back(Step{kernel, std::move(args), Or(expr->span)});
    expr_values_[expr.get()] = {state};
    return absl::OkStatus();
  }

  // The kernel of an in-place row write: rows[row] = value when 0 <= row < rows (else nothing,
  // as write_row), its params (value as one axis, row, rows). It is the row's copy, scheduled
  // and recorded as any kernel, with its stores moved to row `row` of `rows` (read at run time).
  absl::StatusOr<int> RowWriteKernel(const Value& value, int64_t row_count, const Value& rows,
                                     const Span& span) {
    std::string key = absl::StrCat("row:", DataTypeName(value.dtype), ":", row_count, "x",
                                   value.NumElements());
    auto it = copy_kernels_.find(key);
    if (it != copy_kernels_.end()) return it->second;
    KILN_ASSIGN_OR_RETURN(KernelEntry entry, CopyEntry(UniqueName("write_row"), value, span));
    loop::PrimFunc copy = entry.func;
    const int64_t row_elements = value.NumElements();
    loop::Buffer row = loop::MakeBuffer("row", DataType::kInt64, {});
    loop::Buffer all = loop::MakeBuffer("rows", rows.dtype, {rows.NumElements()});
    loop::Var r = loop::MakeVar("r");
    const loop::VarNode* out = copy->param_buffer(1)->data.get();
    RowStores moved(out, all, loop::PrimExpr(r) * row_elements);
    loop::Stmt body = moved.VisitStmt(copy->body);
    // Every access of the copy's output must have moved to the rows (one index each).
    bool left = false;
    loop::PreOrderVisit(body, [&](const Object* node) {
      if (node->kind() == ObjectKind::kBufferStore) {
        left |= static_cast<const loop::BufferStoreNode*>(node)->buffer->data.get() == out;
      } else if (node->kind() == ObjectKind::kBufferLoad) {
        left |= static_cast<const loop::BufferLoadNode*>(node)->buffer->data.get() == out;
      }
    });
    if (left || (row_elements > 0 && moved.moved() == 0)) {
      return absl::InternalError(absl::StrCat(NodePrefix("write_row", span),
                                              "the row copy's stores could not be moved to the rows"));
    }
    loop::PrimExpr zero = loop::MakeConst(loop::kIndexType, 0);
    loop::PrimExpr inside = loop::PrimExpr(r) >= zero &&
                            loop::PrimExpr(r) < loop::MakeConst(loop::kIndexType, row_count);
    body = loop::MakeLetStmt(r, loop::MakeBufferLoad(row, {}),
                             loop::MakeIfThenElse(inside, body, nullptr, span), span);
    entry.func = loop::MakePrimFunc({copy->param_buffer(0), row, all}, body, copy->attrs,
                                    copy->span);
    int index = static_cast<int>(kernels_.size());
    kernels_.push_back(std::move(entry));
    copy_kernels_[key] = index;
    return index;
  }

  // assert(data, condition): the result is a view of data; the check is a statement of main
  // (before every kernel that reads the view), or nothing when the condition is a constant true.
  absl::Status VisitAssert(const Expr& expr, const CallNode& assert_call,
                           const std::vector<int>& inputs, int call_index) {
    const std::string& message = StringAttr(*assert_call.attrs, "message");
    const Value& condition = values_[inputs[1]];
    const Value& data = values_[inputs[0]];
    if (condition.origin == Value::Origin::kConstant) {
      for (const auto& [id, constant] : constant_order_) {
        if (id != inputs[1]) continue;
        if (constant->bytes.empty() || constant->bytes[0] == 0) {
          return absl::InvalidArgumentError(absl::StrCat(NodePrefix("assert", expr->span), message));
        }
      }
    } else {
      int step_index = static_cast<int>(steps_.size());
      Use(inputs[1], step_index);
      steps_.push_back(Step{kAssertStep, {inputs[1]}, Or(expr->span), message});
    }
    Value view{Value::Origin::kView, data.dtype, data.shape, UniqueName(absl::StrCat("t", call_index))};
    view.dims = data.dims;
    view.root = data.root;
    expr_values_[expr.get()] = {NewValue(std::move(view))};
    return absl::OkStatus();
  }

  // while (state[0]) { state = body(state, invariants) }: the state lives in values of its
  // own, given their initial values before the loop; the body's parameters are those values
  // (its invariants the values passed); what the body computes without reading the state is
  // computed once, before the loop; each iteration ends by copying the next state in.
  absl::Status VisitWhileLoop(const Expr& expr, const CallNode& call) {
    const std::string prefix = NodePrefix("while_loop", expr->span);
    Span span = Or(expr->span);
    const auto* body = call.args.empty() ? nullptr : call.args[0].as<FunctionNode>();
    const auto* state_type = expr->checked_type.as<TupleTypeNode>();
    if (body == nullptr || state_type == nullptr ||
        body->params.size() != call.args.size() - 1 ||
        state_type->fields.size() > body->params.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, "expected a body function and its arguments (run InferType)"));
    }
    if (loop_depth_ >= kMaxLoopDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, "loops nest more than ", kMaxLoopDepth, " deep"));
    }
    const size_t num_state = state_type->fields.size();
    const int loop_index = loop_count_++;
    std::vector<int> state;
    for (size_t k = 0; k < num_state; ++k) {
      const std::vector<int>& init = expr_values_.at(call.args[1 + k].get());
      if (init.size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat(prefix, "state ", k, " is not a tensor"));
      }
      const Value& like = values_[init[0]];
      std::string name = k == 0 ? absl::StrCat("loop", loop_index, "_cond")
                                : absl::StrCat("loop", loop_index, "_state", k);
      int id = NewValue(Value{Value::Origin::kKernel, like.dtype, like.shape, UniqueName(name)});
      KILN_ASSIGN_OR_RETURN(int copy, CopyKernel(values_[id], span));
      int step_index = static_cast<int>(steps_.size());
      Use(init[0], step_index);
      values_[id].step = step_index;
      steps_.push_back(Step{copy, {init[0], id}, span});
      state.push_back(id);
      expr_values_[body->params[k].get()] = {id};
    }
    if (values_[state[0]].dtype != DataType::kBool || !values_[state[0]].shape.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, "state 0 must be a bool scalar"));
    }
    for (size_t j = num_state; j < body->params.size(); ++j) {
      expr_values_[body->params[j].get()] = expr_values_.at(call.args[1 + j].get());
    }
    scopes_.push_back(std::make_unique<IfScopes>(body->body));
    if (scopes_.back()->MaxDepth() > kMaxIfDepth) {
      return absl::InvalidArgumentError(absl::StrCat(prefix, "the body's Ifs nest ",
                                                     scopes_.back()->MaxDepth(), " deep, more than ",
                                                     kMaxIfDepth));
    }
    KILN_RETURN_IF_ERROR(HoistLoopInvariants(*body, num_state));
    for (const auto& [write, k] : RowWritesInPlace(*body, num_state)) {
      row_writes_in_place_[write] = state[k];
    }

    const int begin = static_cast<int>(steps_.size());
    steps_.push_back(Step{kLoopBegin, {state[0]}, span});
    ++loop_depth_;
    KILN_RETURN_IF_ERROR(WalkScope(body->body));
    --loop_depth_;
    std::vector<int> next = expr_values_.at(body->body.get());
    if (next.size() != num_state) {
      return absl::InternalError(absl::StrCat(prefix, "the body gives ", next.size(),
                                              " tensors for ", num_state, " states"));
    }
    // A next state that is (a view of) a state is copied out first: writing one state back must
    // not change what another is written from (a body swapping two states).
    std::set<int> state_roots(state.begin(), state.end());
    for (size_t k = 0; k < num_state; ++k) {
      if (next[k] == state[k] || !state_roots.count(values_[next[k]].root)) continue;
      const Value& like = values_[next[k]];
      int temp = NewValue(Value{Value::Origin::kKernel, like.dtype, like.shape,
                                UniqueName(absl::StrCat("loop", loop_index, "_next", k))});
      KILN_ASSIGN_OR_RETURN(int copy, CopyKernel(values_[temp], span));
      int step_index = static_cast<int>(steps_.size());
      Use(next[k], step_index);
      values_[temp].step = step_index;
      steps_.push_back(Step{copy, {next[k], temp}, span});
      next[k] = temp;
    }
    for (size_t k = 0; k < num_state; ++k) {
      if (next[k] == state[k]) continue;  // written in place (a row write)
      KILN_ASSIGN_OR_RETURN(int copy, CopyKernel(values_[state[k]], span));
      Use(next[k], static_cast<int>(steps_.size()));
      steps_.push_back(Step{copy, {next[k], state[k]}, span});
    }
    const int end = static_cast<int>(steps_.size());
    steps_.push_back(Step{kLoopEnd, {}, span});
    // What the loop reads that was computed before it is read again every iteration: it lives
    // to the loop's end (and the state through it).
    for (int s = begin; s < end; ++s) {
      for (int arg : steps_[s].args) {
        const Value& root = values_[values_[arg].root];
        if (root.origin != Value::Origin::kKernel || root.step < begin) Use(arg, end);
      }
    }
    for (int id : state) Use(id, end);
    scopes_.pop_back();
    expr_values_[expr.get()] = std::move(state);
    return absl::OkStatus();
  }

  // Lowers before a loop what its body computes without reading the state (its first
  // `num_state` parameters): loop-invariant code runs once.
  absl::Status HoistLoopInvariants(const FunctionNode& body, size_t num_state) {
    std::unordered_set<const ExprNode*> reads_state;
    for (size_t k = 0; k < num_state; ++k) reads_state.insert(body.params[k].get());
    std::unordered_set<const ExprNode*> seen;
    std::vector<const ExprNode*> invariant;
    WalkPostOrder(
        body.body.get(), ChildSet::kUses,
        [&](const WalkEdge& edge) {
          return edge.child->kind() != ObjectKind::kFunction &&
                 edge.role != ChildRole::kCallee && seen.insert(edge.child).second;
        },
        [&](const ExprNode* node) {
          bool reads = reads_state.count(node) != 0;
          ForEachChild(node, ChildSet::kUses, [&](const ExprNode* child) {
            reads = reads || reads_state.count(child) != 0;
          });
          if (reads) {
            reads_state.insert(node);
          } else {
            invariant.push_back(node);
          }
        });
    for (const ExprNode* node : invariant) {
      if (node->kind() == ObjectKind::kOp || expr_values_.count(node)) continue;
      KILN_RETURN_IF_ERROR(WalkScope(Expr(node)));
    }
    return absl::OkStatus();
  }

  absl::Status VisitCall(const Expr& expr, const CallNode& call) {
    static const OpEntry& while_loop = *OpRegistry::Global().Find("while_loop");
    if (IsOp(call.op, while_loop)) return VisitWhileLoop(expr, call);
    if (auto it = row_writes_in_place_.find(expr.get()); it != row_writes_in_place_.end()) {
      return VisitRowWriteInPlace(expr, call, it->second);
    }
    int call_index = call_count_++;
    std::vector<int> inputs;
    for (const Expr& arg : call.args) {
      const std::vector<int>& ids = expr_values_.at(arg.get());
      inputs.insert(inputs.end(), ids.begin(), ids.end());
    }
    absl::StatusOr<std::vector<TensorLeaf>> result =
        TensorLeaves(expr->checked_type, !symbols_.empty());

    // The function the call runs: a fused one, or one made for a lone op.
    Function func;
    if (const auto* fn = call.op.as<FunctionNode>()) {
      if (!fn->HasNonzeroAttr(kAttrPrimitive)) {
        return absl::UnimplementedError(
            absl::StrCat(NodePrefix("call", expr->span),
                         "calls of non-primitive functions are not supported (run FuseOps)"));
      }
      func = Downcast<FunctionNode>(call.op);
    } else if (const auto* op = call.op.as<OpNode>()) {
      if (!result.ok()) {
        return Prefixed(NodePrefix(op->name, expr->span), result.status());
      }
      func = SingleOpFunction(expr, call);
      // Kept alive: kernels are looked up by function address, and a freed
      // function's address may be reused by the next one made here.
      single_op_functions_.push_back(func);
    } else if (const auto* global = call.op.as<GlobalVarNode>()) {
      return absl::UnimplementedError(
          absl::StrCat(NodePrefix(absl::StrCat("call of @", global->name_hint), expr->span),
                       "calls of global functions are not supported (run Inline)"));
    } else {
      return absl::UnimplementedError(absl::StrCat(
          NodePrefix("call", expr->span), "the callee must be a fused function or an operator"));
    }
    if (!result.ok()) {
      return Prefixed(NodePrefix(PrimitiveName(*func, call_index), expr->span), result.status());
    }

    if (const CallNode* assert_call = AssertCall(*func);
        assert_call != nullptr && inputs.size() == 2 && result->size() == 1) {
      return VisitAssert(expr, *assert_call, inputs, call_index);
    }
    size_t field = 0;
    std::vector<std::vector<loop::PrimExpr>> result_dims;
    for (const TensorLeaf& leaf : *result) {
      absl::StatusOr<std::vector<loop::PrimExpr>> dims = DimsOf(leaf);
      if (!dims.ok()) {
        return Prefixed(NodePrefix(PrimitiveName(*func, call_index), expr->span), dims.status());
      }
      result_dims.push_back(*std::move(dims));
    }
    // A squeeze without axes of symbolic dims goes to its compute, which refuses it: which
    // axes it drops would depend on the run.
    bool squeezes_by_value = !symbols_.empty() && SqueezesEveryUnitAxis(*func);
    if (ViewOp(*func, inputs.size(), &field) != nullptr && result->size() == 1 &&
        !squeezes_by_value) {
      const TensorLeaf& leaf = (*result)[0];
      const Value& viewed = values_[inputs[field]];
      Value view{Value::Origin::kView, leaf.dtype, leaf.shape, ""};
      view.dims = result_dims[0];
      view.root = viewed.root;
      if (leaf.dtype == viewed.dtype &&
          loop::arith::ExprDeepEqual(view.CountExpr(), viewed.CountExpr())) {
        view.name = UniqueName(absl::StrCat("t", call_index));
        expr_values_[expr.get()] = {NewValue(std::move(view))};
        return absl::OkStatus();
      }
    }

    KILN_ASSIGN_OR_RETURN(int kernel, KernelFor(func, call_index));
    kernels_[kernel].info.call_indices.push_back(call_index);

    Step step{kernel, inputs, Or(expr->span)};
    int step_index = static_cast<int>(steps_.size());
    std::vector<int> outputs;
    for (size_t i = 0; i < result->size(); ++i) {
      std::string base = absl::StrCat("t", call_index);
      if (result->size() > 1) absl::StrAppend(&base, "_", i);
      Value value{Value::Origin::kKernel, (*result)[i].dtype, (*result)[i].shape,
                  UniqueName(base)};
      value.dims = result_dims[i];
      value.step = step_index;
      outputs.push_back(NewValue(std::move(value)));
    }
    step.args.insert(step.args.end(), outputs.begin(), outputs.end());
    for (const Constant& constant : kernels_[kernel].constants) {
      step.args.push_back(ConstantValue(constant));
    }
    if (kernels_[kernel].takes_symbols) step.args.push_back(symbols_value_);
    for (int input : inputs) Use(input, step_index);
    if (kernels_[kernel].func) KILN_RETURN_IF_ERROR(CheckArgs(kernels_[kernel], step.args));
    steps_.push_back(std::move(step));
    expr_values_[expr.get()] = std::move(outputs);
    return absl::OkStatus();
  }

  // `span`, or main's when it has none.
  Span Or(const Span& span) const { return span ? span : main_.span; }

  void Use(int value, int step) {
    Value& root = values_[values_[value].root];
    root.last_use = std::max(root.last_use, step);
  }

  // The kernel's params must be the values passed (an internal invariant of
  // lowering, checked so a mismatch is a clear error, not a wrong result).
  absl::Status CheckArgs(const KernelEntry& kernel, const std::vector<int>& args) {
    const loop::PrimFuncNode& func = *kernel.func;
    std::string problem;
    if (func.params.size() != args.size()) {
      problem = absl::StrCat(func.params.size(), " parameters for ", args.size(), " values");
    }
    for (size_t i = 0; problem.empty() && i < args.size(); ++i) {
      const loop::Buffer& param = func.param_buffer(i);
      const Value& value = values_[args[i]];
      if (param->dtype != value.dtype || param->shape != value.shape) {
        problem = absl::StrCat("parameter ", i, " '", param->name, "' is ",
                               DataTypeName(param->dtype), "[", absl::StrJoin(param->shape, ", "),
                               "] but value '", value.name, "' is ", DataTypeName(value.dtype),
                               "[", absl::StrJoin(value.shape, ", "), "]");
      }
    }
    if (problem.empty()) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(NodePrefix(absl::StrCat("kernel ", kernel.info.name),
                                                       kernel.info.span),
                                            "its parameters do not match the call's values: ",
                                            problem));
  }

  // fn (%p0, ...) { op(%p0, ...) }, typed, for an operator called in main.
  static Function SingleOpFunction(const Expr& expr, const CallNode& call) {
    std::vector<Var> params;
    std::vector<Expr> args;
    for (size_t i = 0; i < call.args.size(); ++i) {
      Var param = MakeVar(absl::StrCat("p", i), call.args[i]->checked_type, call.args[i]->span);
      params.push_back(param);
      args.push_back(param);
    }
    Expr body = WithCheckedType(MakeCall(call.op, args, call.attrs, expr->span), expr->checked_type);
    std::string name = KernelBaseName(call.op.as<OpNode>()->name);
    Attrs attrs = MakeAttrs({{kAttrPrimitive, AttrValue(int64_t{1})}, {"name", AttrValue(name)}});
    return MakeFunction(params, body, expr->checked_type, attrs, expr->span);
  }

  // The kernel of a primitive function. Structurally equal functions (the same ops, attributes,
  // shapes and constants; spans aside), such as the identical blocks of a ResNet stage or the
  // steps of an unrolled recurrent layer, share one kernel, as TVM's compile engine caches
  // lowered functions: each is lowered and compiled once. The shared kernel's span merges the
  // spans of every function it serves, so profiles and records name all its layers.
  absl::StatusOr<int> KernelFor(const Function& func, int call_index) {
    auto it = kernel_of_function_.find(func.get());
    if (it != kernel_of_function_.end()) return it->second;
    const uint64_t hash = options_.share_kernels ? StructuralHash(func) : 0;
    KILN_ASSIGN_OR_RETURN(std::optional<int> shared, SharedKernelFor(func, hash, call_index));
    if (shared) return *shared;
    std::string function_name = PrimitiveName(*func, call_index);
    std::string name = UniqueName(function_name);
    KernelEntry entry;
    entry.info.name = name;
    entry.info.function_name = function_name;
    entry.info.span = func->span;
    entry.global = MakeGlobalVar(name);
    entry.served = {func};
    // Unselected kernels (only_kernels) are named like the rest (names depend on order), but
    // not lowered.
    if (!options_.only_kernels ||
        options_.only_kernels(KernelCandidate{name, function_name, call_index, func->span})) {
      KILN_RETURN_IF_ERROR(LowerKernel(func, &entry));
    }
    int index = static_cast<int>(kernels_.size());
    kernels_.push_back(std::move(entry));
    kernel_of_function_[func.get()] = index;
    if (options_.share_kernels) {
      kernels_by_hash_[hash].push_back(index);
      kernel_functions_.emplace(index, func);
    }
    return index;
  }

  // The kernel of a structurally equal function lowered before, now serving `func` too.
  absl::StatusOr<std::optional<int>> SharedKernelFor(const Function& func, uint64_t hash,
                                                    int call_index) {
    if (!options_.share_kernels) return std::nullopt;
    for (int index : kernels_by_hash_[hash]) {
      if (!StructuralEqual(kernel_functions_.at(index), func)) continue;
      KernelEntry& shared = kernels_[index];
      kernel_of_function_[func.get()] = index;
      shared.served.push_back(func);  // its span joins the kernel's at the end
      // Kernel selection (only_kernels) asks of every occurrence: any may select the kernel.
      if (!shared.func && options_.only_kernels &&
          options_.only_kernels(KernelCandidate{shared.info.name, shared.info.function_name,
                                                call_index, func->span})) {
        KILN_RETURN_IF_ERROR(LowerKernel(func, &shared));
      }
      return index;
    }
    return std::nullopt;
  }

  absl::Status LowerKernel(const Function& func, KernelEntry* entry) {
    if (options_.budget != nullptr) {
      KILN_RETURN_IF_ERROR(options_.budget->CheckCancelled(
          absl::StrCat("before lowering kernel ", entry->info.name)));
    }
    KILN_ASSIGN_OR_RETURN(LoweredPrimitive lowered,
                          LowerPrimitive(*func, entry->info.name, ScheduleOptions(), Symbols()));
    entry->takes_symbols = lowered.takes_symbols;
    equalities_.insert(equalities_.end(), lowered.equalities.begin(), lowered.equalities.end());
    entry->info.schedule = std::move(lowered.schedule);
    entry->info.schedule_params = std::move(lowered.params);
    entry->func = std::move(lowered.func);
    entry->constants = std::move(lowered.constants);
    return absl::OkStatus();
  }

  // out = in, for results that cannot be written in place. One kernel per
  // dtype and shape.
  // A kernel `name` copying a tensor like `like` (params in, out) with the default schedule.
  absl::StatusOr<KernelEntry> CopyEntry(const std::string& name, const Value& like,
                                        const Span& span) const {
    te::SpanScope scope(span);
    std::vector<loop::PrimExpr> dims = like.symbolic() ? like.dims : std::vector<loop::PrimExpr>{};
    if (!like.symbolic()) {
      for (int64_t extent : like.shape) dims.push_back(loop::IntImm(extent));
    }
    te::Tensor in = te::PlaceholderOver("in", like.dtype, dims);
    te::Tensor out = te::ComputeOver(
        "out", dims, {in},
        [&](const std::vector<loop::Var>& i) {
          return in(std::vector<loop::PrimExpr>(i.begin(), i.end()));
        },
        "elemwise");
    KernelEntry entry;
    entry.info.name = name;
    entry.info.function_name = name;
    entry.info.span = span;
    entry.info.schedule = like.symbolic() ? CreateSymbolicSchedule({out}, options_.vector_lanes)
                                          : CreateDefaultSchedule({out}, ScheduleOptions());
    entry.info.schedule_params = {in, out};
    te::Tensor symbol_values;
    if (like.symbolic()) {
      symbol_values = te::Placeholder(kSymbolsParam, DataType::kInt64,
                                      std::vector<int64_t>{static_cast<int64_t>(symbols_.size())});
      entry.info.schedule_params.push_back(symbol_values);
      entry.takes_symbols = true;
    }
    KILN_ASSIGN_OR_RETURN(entry.func,
                          te::LowerSchedule(entry.info.schedule, entry.info.schedule_params, name));
    if (like.symbolic()) {
      entry.func = BindSymbols(entry.func, symbols_, symbol_values.op()->buffer);
    }
    entry.global = MakeGlobalVar(name);
    return entry;
  }

  absl::StatusOr<int> CopyKernel(const Value& like, const Span& span) {
    std::vector<std::string> dims;
    for (size_t d = 0; d < like.shape.size(); ++d) {
      // A symbol by its index: two dim_params may sanitize to one variable name.
      dims.push_back(like.shape[d] >= 0 ? absl::StrCat(like.shape[d])
                                        : absl::StrCat("$", SymbolIndex(like.dims[d])));
    }
    std::string key = absl::StrCat(DataTypeName(like.dtype), ":", absl::StrJoin(dims, ","));
    auto it = copy_kernels_.find(key);
    if (it != copy_kernels_.end()) return it->second;
    KILN_ASSIGN_OR_RETURN(KernelEntry entry, CopyEntry(UniqueName("copy"), like, span));
    int index = static_cast<int>(kernels_.size());
    kernels_.push_back(std::move(entry));
    copy_kernels_[key] = index;
    return index;
  }

  // The expressions whose values are main's results, one per tensor leaf.
  void ResultExprs(Expr expr, std::vector<Expr>* out) {
    while (const auto* let = expr.as<LetNode>()) expr = let->body;
    if (const auto* tuple = expr.as<TupleNode>()) {
      for (const Expr& element : tuple->elements) ResultExprs(element, out);
      return;
    }
    for (int i = 0, n = std::max(1, LeafCount(expr->checked_type)); i < n; ++i) out->push_back(expr);
  }

  // Output params; each result is written in place by its producer when it
  // can be, else copied after the kernels.
  absl::Status AddOutputs() {
    const std::vector<int>& results = expr_values_.at(main_.body.get());
    std::vector<Expr> result_exprs;
    ResultExprs(main_.body, &result_exprs);
    struct Copy {
      int value;
      int out;
      size_t result;  // index among the results
    };
    std::vector<Copy> copies;
    for (size_t i = 0; i < results.size(); ++i) {
      const Value& result = values_[results[i]];
      Value out{Value::Origin::kOutput, result.dtype, result.shape,
                UniqueName(results.size() == 1 ? "out" : absl::StrCat("out", i))};
      out.dims = result.dims;
      out.buffer = out.OwnBuffer();
      int out_id = NewValue(std::move(out));
      outputs_.push_back(out_id);
      int root = values_[results[i]].root;
      if (values_[root].origin == Value::Origin::kKernel && output_of_root_.count(root) == 0) {
        output_of_root_[root] = {out_id, results[i]};
      } else {
        copies.push_back(Copy{results[i], out_id, i});
      }
    }
    for (const Copy& copy : copies) {
      // The copied value's own span, else the span of the kernel writing it.
      Span span = copy.result < result_exprs.size() ? result_exprs[copy.result]->span : nullptr;
      const Value& root = values_[values_[copy.value].root];
      if (!span && root.origin == Value::Origin::kKernel) span = steps_[root.step].span;
      span = Or(span);
      KILN_ASSIGN_OR_RETURN(int kernel, CopyKernel(values_[copy.out], span));
      int step_index = static_cast<int>(steps_.size());
      Use(copy.value, step_index);
      Step step{kernel, {copy.value, copy.out}, span};
      if (kernels_[kernel].takes_symbols) step.args.push_back(symbols_value_);
      steps_.push_back(std::move(step));
    }
    return absl::OkStatus();
  }

  absl::Status AssignStorage() {
    // Roots written by kernels and not bound to an output, per dtype.
    std::map<DataType, std::vector<int>> workspace_roots;
    for (size_t id = 0; id < values_.size(); ++id) {
      Value& value = values_[id];
      if (value.origin != Value::Origin::kKernel) continue;
      auto bound = output_of_root_.find(static_cast<int>(id));
      if (bound != output_of_root_.end()) {
        const Value& out = values_[bound->second.first];
        value.buffer = bound->second.second == static_cast<int>(id)
                           ? out.buffer
                           : value.ViewOf(out.buffer->data);
        continue;
      }
      if (value.symbolic()) {  // its own buffer, which the caller allocates for the run
        value.buffer = value.OwnBuffer();
        dynamic_.push_back(static_cast<int>(id));
        continue;
      }
      workspace_roots[value.dtype].push_back(static_cast<int>(id));
    }
    for (const auto& [dtype, roots] : workspace_roots) {
      std::vector<StorageRequest> requests;
      for (int id : roots) {
        const Value& value = values_[id];
        requests.push_back(StorageRequest{value.NumElements(), value.step,
                                          std::max(value.step, value.last_use)});
      }
      int64_t alignment = std::max<int64_t>(1, options_.workspace_alignment_bytes /
                                                   DataTypeBytes(dtype));
      StoragePlan plan = PlanStorage(requests, alignment);
      loop::Var data = loop::MakeVar(absl::StrCat("workspace_", DataTypeName(dtype)),
                                     loop::PrimType{dtype, 1});
      workspaces_.push_back({data, dtype, plan.extent});
      workspace_bytes_ += plan.extent * DataTypeBytes(dtype);
      for (size_t i = 0; i < roots.size(); ++i) {
        Value& value = values_[roots[i]];
        value.buffer = loop::MakeBufferView(value.name, data, value.dtype, value.shape,
                                            plan.offsets[i]);
      }
    }
    for (Value& value : values_) {
      if (value.origin != Value::Origin::kView) continue;
      const loop::Buffer& root = values_[value.root].buffer;
      value.buffer = value.ViewOf(root->data, root->elem_offset);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<LoweredModule> Build() {
    LoweredModule lowered;
    // Statement lists of the open scopes: main's, then per open If its then- and else-lists
    // (per open loop its body's list, then_stmts).
    struct Scope {
      const Step* begin = nullptr;
      std::vector<loop::Stmt> then_stmts, else_stmts;
      bool in_else = false;
    };
    std::vector<loop::Stmt> calls;
    std::vector<Scope> open;
    auto current = [&]() -> std::vector<loop::Stmt>& {
      if (open.empty()) return calls;
      return open.back().in_else ? open.back().else_stmts : open.back().then_stmts;
    };
    for (const Step& step : steps_) {
      switch (step.kernel) {
        case kAssertStep:
          current().push_back(loop::MakeAssert(
              loop::MakeBufferLoad(values_[step.args[0]].buffer, {}), step.message, step.span));
          continue;
        case kIfBegin:
        case kLoopBegin:
          open.push_back(Scope{&step});
          continue;
        case kLoopEnd: {
          Scope scope = std::move(open.back());
          open.pop_back();
          const Step& begin = *scope.begin;
          current().push_back(loop::MakeWhile(
              loop::MakeBufferLoad(values_[begin.args[0]].buffer, {}),
              loop::MakeSeqStmt(std::move(scope.then_stmts), begin.span), begin.span));
          continue;
        }
        case kElse:
          open.back().in_else = true;
          continue;
        case kIfEnd: {
          Scope scope = std::move(open.back());
          open.pop_back();
          const Step& begin = *scope.begin;
          loop::Stmt then_body = loop::MakeSeqStmt(std::move(scope.then_stmts), begin.span);
          loop::Stmt else_body = loop::MakeSeqStmt(std::move(scope.else_stmts), begin.span);
          current().push_back(loop::MakeIfThenElse(
              loop::MakeBufferLoad(values_[begin.args[0]].buffer, {}), then_body, else_body,
              begin.span));
          continue;
        }
        default:
          break;
      }
      std::vector<loop::Buffer> args;
      for (int id : step.args) args.push_back(values_[id].buffer);
      current().push_back(loop::MakeCallKernel(kernels_[step.kernel].global, std::move(args),
                                               step.span));
    }
    // Main has no span of its own in general; its sequence and each
    // workspace carry the spans of the calls they serve.
    std::vector<Span> all_spans;
    for (const Step& step : steps_) all_spans.push_back(step.span);
    loop::Stmt body = loop::MakeSeqStmt(std::move(calls), Or(MakeSequentialSpan(all_spans)));
    for (auto it = workspaces_.rbegin(); it != workspaces_.rend(); ++it) {
      std::vector<Span> users;
      for (const Value& value : values_) {
        // Kernel results, and branch results written in place (views with a writing step).
        if ((value.origin == Value::Origin::kKernel || value.step >= 0) &&
            value.buffer->data.same_as(it->data)) {
          users.push_back(steps_[value.step].span);
        }
      }
      body = loop::MakeAllocate(it->data, it->dtype, it->extent, "global", body,
                                Or(MakeSequentialSpan(users)));
    }

    std::vector<loop::Buffer> params;
    for (int id : inputs_) params.push_back(values_[id].buffer);
    for (int id : outputs_) params.push_back(values_[id].buffer);
    for (const auto& [id, data] : constant_order_) {
      params.push_back(values_[id].buffer);
      lowered.constants.emplace_back(values_[id].buffer, data);
    }
    if (!symbols_.empty()) {
      KILN_ASSIGN_OR_RETURN(lowered.symbolic, Signature());
      for (int id : dynamic_) params.push_back(values_[id].buffer);
      params.push_back(values_[symbols_value_].buffer);
    }
    Attrs attrs = MakeAttrs({{loop::kAttrGlobalSymbol, AttrValue("main")},
                             {"workspace_bytes", AttrValue(workspace_bytes_)}});
    loop::PrimFunc main = loop::MakePrimFunc(std::move(params), body, attrs, main_.span);

    std::vector<IRModuleNode::Entry> functions;
    for (KernelEntry& kernel : kernels_) {
      functions.emplace_back(kernel.global, kernel.func);
      lowered.kernels.push_back(std::move(kernel.info));
    }
    functions.emplace_back(MakeGlobalVar("main"), main);
    lowered.module = MakeModule(std::move(functions));
    lowered.num_inputs = static_cast<int>(inputs_.size());
    lowered.num_outputs = static_cast<int>(outputs_.size());
    lowered.workspace_bytes = workspace_bytes_;
    return lowered;
  }

  // A shared kernel lowered again from its functions with merged spans (merged_spans.h): the
  // same loop nest, each statement naming every layer it computes.
  absl::Status RelowerSharedKernels() {
    for (KernelEntry& kernel : kernels_) {
      if (kernel.served.size() < 2) continue;
      std::vector<Span> spans;
      for (const Function& func : kernel.served) spans.push_back(func->span);
      kernel.info.span = MakeSequentialSpan(spans);
      if (!kernel.func) continue;
      if (options_.budget != nullptr) {
        KILN_RETURN_IF_ERROR(options_.budget->CheckCancelled(
            absl::StrCat("before lowering shared kernel ", kernel.info.name, " again")));
      }
      Function merged = MergedSpans(kernel.served);
      KILN_ASSIGN_OR_RETURN(LoweredPrimitive lowered,
                            LowerPrimitive(*merged, kernel.info.name, ScheduleOptions(),
                                           Symbols()));
      // Main binds the constants of the first lowering: the same ones, or the calls are wrong.
      bool same_constants = lowered.constants.size() == kernel.constants.size();
      for (size_t i = 0; same_constants && i < lowered.constants.size(); ++i) {
        same_constants = StructuralEqual(lowered.constants[i], kernel.constants[i]);
      }
      if (!same_constants || lowered.func->params.size() != kernel.func->params.size()) {
        return absl::InternalError(absl::StrCat(
            NodePrefix(absl::StrCat("kernel ", kernel.info.name), kernel.info.span),
            "lowered again for its shared layers, it takes other parameters"));
      }
      kernel.info.schedule = std::move(lowered.schedule);
      kernel.info.schedule_params = std::move(lowered.params);
      kernel.func = std::move(lowered.func);
    }
    return absl::OkStatus();
  }

  // The kernels only_kernels accepted, without main.
  LoweredModule SelectedKernels() {
    LoweredModule lowered;
    std::vector<IRModuleNode::Entry> functions;
    for (KernelEntry& kernel : kernels_) {
      if (!kernel.func) continue;
      functions.emplace_back(kernel.global, kernel.func);
      lowered.kernels.push_back(std::move(kernel.info));
    }
    lowered.module = MakeModule(std::move(functions));
    return lowered;
  }

  struct Workspace {
    loop::Var data;
    DataType dtype;
    int64_t extent;
  };

  const te::SymbolVars* Symbols() const { return symbols_.empty() ? nullptr : &symbols_; }

  int SymbolIndex(const loop::PrimExpr& dim) const {
    for (size_t k = 0; k < symbols_.size(); ++k) {
      if (dim.same_as(symbols_[k].second)) return static_cast<int>(k);
    }
    return -1;
  }

  // How the caller binds symbols, sizes outputs and allocates the values between kernels.
  absl::StatusOr<SymbolicSignature> Signature() const {
    SymbolicSignature signature;
    for (const auto& [name, var] : symbols_) signature.symbols.push_back(name);
    auto dims_of = [&](const Value& value) {
      std::vector<int64_t> dims = value.shape;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] < 0) dims[d] = SymbolicSignature::SymbolDim(SymbolIndex(value.dims[d]));
      }
      return dims;
    };
    for (int id : inputs_) signature.input_dims.push_back(dims_of(values_[id]));
    for (int id : outputs_) signature.output_dims.push_back(dims_of(values_[id]));
    for (int id : dynamic_) {
      const Value& value = values_[id];
      KILN_ASSIGN_OR_RETURN(SymbolicSignature::Monomial elements, MonomialOf(value.CountExpr()));
      signature.dynamic.push_back(SymbolicSignature::DynamicBuffer{value.dtype, elements});
    }
    for (const te::SymbolEquality& equality : equalities_) {
      std::string what = absl::StrCat(SpanLabel(equality.span), ": ", ExprText(equality.left),
                                      " must equal ", ExprText(equality.right));
      absl::StatusOr<SymbolicSignature::Monomial> left = MonomialOf(equality.left);
      absl::StatusOr<SymbolicSignature::Monomial> right = MonomialOf(equality.right);
      if (!left.ok() || !right.ok()) {
        return absl::UnimplementedError(absl::StrCat(
            what, ": a shape assumption that is not a product of symbols and constants"));
      }
      signature.equalities.push_back(SymbolicSignature::Equality{*left, *right, what});
    }
    return signature;
  }

  // An extent as `coefficient x symbols` (products of constants and symbols only).
  absl::StatusOr<SymbolicSignature::Monomial> MonomialOf(const loop::PrimExpr& expr) const {
    SymbolicSignature::Monomial monomial;
    std::vector<loop::PrimExpr> pending = {expr};
    while (!pending.empty()) {
      loop::PrimExpr e = pending.back();
      pending.pop_back();
      int64_t value;
      if (loop::AsConstInt(e, &value)) {
        if (value < 0 || __builtin_mul_overflow(monomial.coefficient, value, &monomial.coefficient)) {
          return absl::InvalidArgumentError("an extent out of range");
        }
      } else if (int k = SymbolIndex(e); k >= 0) {
        monomial.symbols.push_back(k);
      } else if (const auto* mul = e.as<loop::BinaryNode>(); mul != nullptr && mul->op == loop::BinaryOp::kMul) {
        pending.push_back(mul->a);
        pending.push_back(mul->b);
      } else {
        return absl::UnimplementedError("an extent that is not a product of symbols");
      }
    }
    return monomial;
  }

  // "seq", "4", "seq * 16": an extent for error messages.
  std::string ExprText(const loop::PrimExpr& expr) const {
    absl::StatusOr<SymbolicSignature::Monomial> monomial = MonomialOf(expr);
    if (!monomial.ok()) return "an extent";
    std::vector<std::string> factors;
    if (monomial->coefficient != 1 || monomial->symbols.empty()) {
      factors.push_back(absl::StrCat(monomial->coefficient));
    }
    for (int k : monomial->symbols) factors.push_back(symbols_[k].first);
    return absl::StrJoin(factors, " * ");
  }

  const FunctionNode& main_;
  DefaultScheduleOptions ScheduleOptions() const {
    return {options_.keep_schedule_record, options_.vector_lanes, options_.min_parallel_work,
            MaxAccumulatorsFor(options_.vector_registers)};
  }

  const LowerOptions& options_;
  std::vector<Value> values_;
  std::vector<Step> steps_;
  std::vector<KernelEntry> kernels_;
  std::unordered_map<const ExprNode*, std::vector<int>> expr_values_;
  std::unordered_map<const FunctionNode*, int> kernel_of_function_;
  // Kernels by the structural hash of the primitive function they were lowered from.
  std::unordered_map<uint64_t, std::vector<int>> kernels_by_hash_;
  std::unordered_map<int, Function> kernel_functions_;
  std::vector<Function> single_op_functions_;
  std::map<std::string, int> copy_kernels_;
  std::unordered_map<const ConstantNode*, int> constant_values_;
  std::vector<std::pair<int, TensorData>> constant_order_;
  // Root value -> (output value, the result value bound to it).
  std::map<int, std::pair<int, int>> output_of_root_;
  std::vector<int> inputs_;
  std::vector<int> outputs_;
  // Symbolic models: the symbols, the value holding their values, the values of run-time size.
  te::SymbolVars symbols_;
  std::vector<te::SymbolEquality> equalities_;
  int symbols_value_ = -1;
  std::vector<int> dynamic_;
  std::vector<Workspace> workspaces_;
  int64_t workspace_bytes_ = 0;
  std::set<std::string> used_names_{"main"};
  std::map<std::string, int> next_suffix_;
  int call_count_ = 0;
  int if_count_ = 0;
  int loop_count_ = 0;
  int loop_depth_ = 0;
  // write_row calls lowered as in-place row writes, to the loop state they write.
  std::unordered_map<const ExprNode*, int> row_writes_in_place_;
  // The scopes of main's body, then of each loop body being lowered.
  std::vector<std::unique_ptr<IfScopes>> scopes_;
};

}  // namespace

absl::StatusOr<LoweredModule> LowerModule(const IRModule& optimized, const LowerOptions& options) {
  BaseFunc main = optimized ? optimized->Lookup("main") : nullptr;
  const auto* main_func = main ? main.as<FunctionNode>() : nullptr;
  if (main_func == nullptr) {
    return absl::InvalidArgumentError("lowering needs a graph function @main");
  }
  return MainLowering(*main_func, options).Run();
}

}  // namespace kiln::lower
