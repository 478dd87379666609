// Graph-dialect expressions (the Relay analogue). Every expression carries a
// span (where it came from), a checked type (set by type inference, may be
// null) and a virtual device (may be null = unconstrained). Nodes are
// immutable; rewrites build new nodes and share unchanged children.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ir/attrs.h"
#include "engine/ir/object.h"
#include "engine/ir/span.h"
#include "engine/ir/tensor_data.h"
#include "engine/ir/type.h"
#include "engine/ir/virtual_device.h"

namespace kiln {

// The fields every expression has. Passed by value into constructors.
struct ExprFields {
  Span span;
  Type checked_type;
  VirtualDevice virtual_device;
};

class ExprNode : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) {
    return k >= ObjectKind::kVar && k <= ObjectKind::kPrimFunc;
  }
  const Span span;
  const Type checked_type;
  const VirtualDevice virtual_device;

  ExprFields fields() const { return ExprFields{span, checked_type, virtual_device}; }

 protected:
  ExprNode(ObjectKind kind, ExprFields fields)
      : Object(kind),
        span(std::move(fields.span)),
        checked_type(std::move(fields.checked_type)),
        virtual_device(std::move(fields.virtual_device)) {}
};
using Expr = Ref<ExprNode>;

class VarNode final : public ExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kVar; }
  VarNode(std::string name_hint, Type type_annotation, ExprFields fields = {})
      : ExprNode(ObjectKind::kVar, std::move(fields)),
        name_hint(std::move(name_hint)),
        type_annotation(std::move(type_annotation)) {}
  // Identity is the node, not the name: two Vars named "x" are different.
  const std::string name_hint;
  const Type type_annotation;
};
using Var = Ref<VarNode>;

class GlobalVarNode final : public ExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kGlobalVar; }
  explicit GlobalVarNode(std::string name_hint, ExprFields fields = {})
      : ExprNode(ObjectKind::kGlobalVar, std::move(fields)), name_hint(std::move(name_hint)) {}
  const std::string name_hint;
};
using GlobalVar = Ref<GlobalVarNode>;

class ConstantNode final : public ExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kConstant; }
  explicit ConstantNode(TensorData data, ExprFields fields = {})
      : ExprNode(ObjectKind::kConstant, std::move(fields)), data(std::move(data)) {}
  const TensorData data;
};
using Constant = Ref<ConstantNode>;

// A handle to an operator by name. The operator registry gives the name its
// meaning (attributes, type relation, compute).
class OpNode final : public ExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kOp; }
  explicit OpNode(std::string name)
      : ExprNode(ObjectKind::kOp, ExprFields{}), name(std::move(name)) {}
  const std::string name;
};
using Op = Ref<OpNode>;

class CallNode final : public ExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kCall; }
  CallNode(Expr op, std::vector<Expr> args, Attrs attrs, ExprFields fields = {})
      : ExprNode(ObjectKind::kCall, std::move(fields)),
        op(std::move(op)),
        args(std::move(args)),
        attrs(std::move(attrs)) {}
  // An Op, a Function, a GlobalVar or a Var bound to a function.
  const Expr op;
  const std::vector<Expr> args;
  const Attrs attrs;  // may be null (no attributes)
};
using Call = Ref<CallNode>;

class TupleNode final : public ExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kTuple; }
  explicit TupleNode(std::vector<Expr> fields_, ExprFields fields = {})
      : ExprNode(ObjectKind::kTuple, std::move(fields)), elements(std::move(fields_)) {}
  const std::vector<Expr> elements;
};
using Tuple = Ref<TupleNode>;

class TupleGetItemNode final : public ExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kTupleGetItem; }
  TupleGetItemNode(Expr tuple, int index, ExprFields fields = {})
      : ExprNode(ObjectKind::kTupleGetItem, std::move(fields)),
        tuple(std::move(tuple)),
        index(index) {}
  const Expr tuple;
  const int index;
};
using TupleGetItem = Ref<TupleGetItemNode>;

class LetNode final : public ExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kLet; }
  LetNode(Var var, Expr value, Expr body, ExprFields fields = {})
      : ExprNode(ObjectKind::kLet, std::move(fields)),
        var(std::move(var)),
        value(std::move(value)),
        body(std::move(body)) {}
  const Var var;
  const Expr value;
  const Expr body;
};
using Let = Ref<LetNode>;

class IfNode final : public ExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kIf; }
  IfNode(Expr cond, Expr true_branch, Expr false_branch, ExprFields fields = {})
      : ExprNode(ObjectKind::kIf, std::move(fields)),
        cond(std::move(cond)),
        true_branch(std::move(true_branch)),
        false_branch(std::move(false_branch)) {}
  const Expr cond;
  const Expr true_branch;
  const Expr false_branch;
};
using If = Ref<IfNode>;

// Base of everything an IRModule maps a GlobalVar to: graph Functions and
// loop-dialect PrimFuncs (engine/loop/prim_func.h). Graph traversals skip
// PrimFuncs; function passes only see Functions.
class BaseFuncNode : public ExprNode {
 public:
  static constexpr bool IsKind(ObjectKind k) {
    return k == ObjectKind::kFunction || k == ObjectKind::kPrimFunc;
  }
  const Attrs attrs;

 protected:
  BaseFuncNode(ObjectKind kind, Attrs attrs, ExprFields fields)
      : ExprNode(kind, std::move(fields)), attrs(std::move(attrs)) {}
};
using BaseFunc = Ref<BaseFuncNode>;

// Function attribute keys with meaning to the compiler.
inline constexpr char kAttrPrimitive[] = "Primitive";
inline constexpr char kAttrSkipOptimization[] = "SkipOptimization";

// A graph function. Its `virtual_device` field is the device of its result.
class FunctionNode final : public BaseFuncNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kFunction; }
  FunctionNode(std::vector<Var> params, Expr body, Type ret_type, Attrs attrs,
               ExprFields fields = {})
      : BaseFuncNode(ObjectKind::kFunction, std::move(attrs), std::move(fields)),
        params(std::move(params)),
        body(std::move(body)),
        ret_type(std::move(ret_type)) {}
  // True when attribute `key` is present and a nonzero int or true bool.
  bool HasNonzeroAttr(std::string_view key) const;

  const std::vector<Var> params;
  const Expr body;
  const Type ret_type;  // may be null (to be inferred)
};
using Function = Ref<FunctionNode>;

// Constructors. `span` defaults to none.
Var MakeVar(std::string name_hint, Type type_annotation = nullptr, Span span = nullptr,
            VirtualDevice virtual_device = nullptr);
GlobalVar MakeGlobalVar(std::string name_hint);
Constant MakeConstant(TensorData data, Span span = nullptr);
// Ops are handles: the same name gives the same node.
Op GetOp(std::string_view name);
Call MakeCall(Expr op, std::vector<Expr> args, Attrs attrs = nullptr, Span span = nullptr);
Tuple MakeTuple(std::vector<Expr> elements, Span span = nullptr);
TupleGetItem MakeTupleGetItem(Expr tuple, int index, Span span = nullptr);
Let MakeLet(Var var, Expr value, Expr body, Span span = nullptr);
If MakeIf(Expr cond, Expr true_branch, Expr false_branch, Span span = nullptr);
Function MakeFunction(std::vector<Var> params, Expr body, Type ret_type = nullptr,
                      Attrs attrs = nullptr, Span span = nullptr,
                      VirtualDevice result_virtual_device = nullptr);

// A copy of `expr` (same children, shared) with the common fields replaced.
Expr WithFields(const Expr& expr, ExprFields fields);
Expr WithSpan(const Expr& expr, Span span);
Expr WithCheckedType(const Expr& expr, Type type);

// True for expressions the seeds call dataflow nodes (Call, Tuple,
// TupleGetItem): traversals walk them iteratively, never recursively.
inline bool IsDataflowKind(ObjectKind kind) {
  return kind == ObjectKind::kCall || kind == ObjectKind::kTuple ||
         kind == ObjectKind::kTupleGetItem;
}

}  // namespace kiln
