// Reverse-mode differentiation for the Gradient operator (gradient.h): the nodes on a path from
// an x to y, visited from y back in the graph's (topological) order, each adding its inputs'
// share of its output's adjoint, which starts as ones of y's shape.
#include "engine/frontend/onnx/gradient.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

constexpr const char* kDifferentiable[] = {"Add",  "Sub",     "Mul",  "Div", "Neg",   "Identity",
                                           "Relu", "Sigmoid", "Tanh", "Exp", "MatMul"};

class Differentiator {
 public:
  Differentiator(ConvertContext& ctx, const std::function<Expr(const std::string&)>& value_of)
      : ctx_(ctx), value_of_(value_of) {}

  // The value of `name`, or an error when the graph has not produced it before the Gradient node.
  absl::StatusOr<Expr> Value(const std::string& name) const {
    Expr value = value_of_(name);
    if (!value.defined()) {
      return ctx_.Error(absl::StrCat("'", name, "' is not computed before this node"));
    }
    return value;
  }

  // The static shape and dtype of `e`, or an error.
  absl::StatusOr<const TensorTypeNode*> TensorType(const Expr& e, const std::string& name) const {
    const auto* type = e->checked_type.as<TensorTypeNode>();
    bool static_shape = type != nullptr;
    for (size_t i = 0; static_shape && i < type->shape.size(); ++i) {
      static_shape = type->shape[i].is_static();
    }
    if (!static_shape) {
      return ctx_.Error(absl::StrCat("'", name, "' must be a tensor of static shape to differentiate"));
    }
    return type;
  }

  // A tensor of `type`'s shape filled with `value`.
  absl::StatusOr<Expr> Filled(const TensorTypeNode* type, double value) {
    return ctx_.Call("broadcast_to", {ctx_.Constant(ScalarTensor(type->dtype, value))},
                     MakeAttrs({{"shape", ShapeValue{type->shape}}}));
  }

  // `g` summed over the axes it was broadcast along to reach it from `target`'s shape.
  absl::StatusOr<Expr> SumToShape(const Expr& g, const TensorTypeNode* target) {
    const auto* from = g->checked_type.as<TensorTypeNode>();
    if (from->shape == target->shape) return g;
    const size_t rank = from->shape.size(), target_rank = target->shape.size();
    std::vector<int64_t> axes;
    for (size_t i = 0; i < rank; ++i) {
      if (i < rank - target_rank ||
          (target->shape[i - (rank - target_rank)].value == 1 && from->shape[i].value != 1)) {
        axes.push_back(static_cast<int64_t>(i));
      }
    }
    Expr summed = g;
    if (!axes.empty()) {
      KILN_ASSIGN_OR_RETURN(summed, ctx_.Call("sum", {g}, MakeAttrs({{"axis", IntArray(axes)},
                                                                     {"keepdims", false}})));
    }
    std::vector<int64_t> shape;
    for (const Dim& d : target->shape) shape.push_back(d.value);
    return ctx_.Call("reshape", {summed}, MakeAttrs({{"newshape", IntArray(shape)}}));
  }

  // Adds `contribution` (of the node output's shape) to the adjoint of input `name`.
  absl::Status Accumulate(const std::string& name, Expr contribution) {
    KILN_ASSIGN_OR_RETURN(Expr value, Value(name));
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, TensorType(value, name));
    KILN_ASSIGN_OR_RETURN(contribution, SumToShape(contribution, type));
    auto it = adjoint_.find(name);
    if (it == adjoint_.end()) {
      adjoint_[name] = contribution;
      return absl::OkStatus();
    }
    KILN_ASSIGN_OR_RETURN(it->second, ctx_.Call("add", {it->second, contribution}));
    return absl::OkStatus();
  }

  // The inputs' shares of `node`'s output adjoint `g`, for the inputs in `wanted`.
  absl::Status Backward(const onnx::NodeProto& node, const Expr& g,
                        const std::set<std::string>& wanted) {
    const std::string& op = node.op_type();
    auto in = [&](int i) { return Value(node.input(i)); };
    auto call = [&](const char* name, std::vector<Expr> args, Attrs attrs = nullptr) {
      return ctx_.Call(name, std::move(args), std::move(attrs));
    };
    auto wants = [&](int i) { return i < node.input_size() && wanted.count(node.input(i)); };
    KILN_ASSIGN_OR_RETURN(Expr out, Value(node.output(0)));
    if (op == "Add" || op == "Sub" || op == "Identity") {
      if (wants(0)) KILN_RETURN_IF_ERROR(Accumulate(node.input(0), g));
      if (op != "Identity" && wants(1)) {
        Expr share = g;
        if (op == "Sub") {
          KILN_ASSIGN_OR_RETURN(share, call("negative", {g}));
        }
        KILN_RETURN_IF_ERROR(Accumulate(node.input(1), share));
      }
    } else if (op == "Neg") {
      KILN_ASSIGN_OR_RETURN(Expr share, call("negative", {g}));
      if (wants(0)) KILN_RETURN_IF_ERROR(Accumulate(node.input(0), share));
    } else if (op == "Mul") {
      KILN_ASSIGN_OR_RETURN(Expr a, in(0));
      KILN_ASSIGN_OR_RETURN(Expr b, in(1));
      if (wants(0)) {
        KILN_ASSIGN_OR_RETURN(Expr share, call("multiply", {g, b}));
        KILN_RETURN_IF_ERROR(Accumulate(node.input(0), share));
      }
      if (wants(1)) {
        KILN_ASSIGN_OR_RETURN(Expr share, call("multiply", {g, a}));
        KILN_RETURN_IF_ERROR(Accumulate(node.input(1), share));
      }
    } else if (op == "Div") {
      KILN_ASSIGN_OR_RETURN(Expr b, in(1));
      KILN_ASSIGN_OR_RETURN(Expr g_over_b, call("divide", {g, b}));
      if (wants(0)) KILN_RETURN_IF_ERROR(Accumulate(node.input(0), g_over_b));
      if (wants(1)) {
        // d(a / b) / db = -(a / b) / b.
        KILN_ASSIGN_OR_RETURN(Expr scaled, call("multiply", {g_over_b, out}));
        KILN_ASSIGN_OR_RETURN(Expr share, call("negative", {scaled}));
        KILN_RETURN_IF_ERROR(Accumulate(node.input(1), share));
      }
    } else if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "Exp") {
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, TensorType(out, node.output(0)));
      Expr one = ctx_.Constant(ScalarTensor(type->dtype, 1));
      Expr share;
      if (op == "Relu") {
        KILN_ASSIGN_OR_RETURN(Expr positive,
                              call("greater", {out, ctx_.Constant(ScalarTensor(type->dtype, 0))}));
        KILN_ASSIGN_OR_RETURN(share, call("where", {positive, g, ctx_.Constant(ScalarTensor(type->dtype, 0))}));
      } else if (op == "Exp") {
        KILN_ASSIGN_OR_RETURN(share, call("multiply", {g, out}));
      } else {
        // sigmoid' = s (1 - s); tanh' = 1 - t^2.
        KILN_ASSIGN_OR_RETURN(Expr rest, call("subtract", {one, out}));
        Expr factor;
        if (op == "Sigmoid") {
          KILN_ASSIGN_OR_RETURN(factor, call("multiply", {out, rest}));
        } else {
          KILN_ASSIGN_OR_RETURN(Expr plus, call("add", {one, out}));
          KILN_ASSIGN_OR_RETURN(factor, call("multiply", {rest, plus}));
        }
        KILN_ASSIGN_OR_RETURN(share, call("multiply", {g, factor}));
      }
      if (wants(0)) KILN_RETURN_IF_ERROR(Accumulate(node.input(0), share));
    } else if (op == "MatMul") {
      KILN_ASSIGN_OR_RETURN(Expr a, in(0));
      KILN_ASSIGN_OR_RETURN(Expr b, in(1));
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* ta, TensorType(a, node.input(0)));
      KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tb, TensorType(b, node.input(1)));
      if (ta->shape.size() != 2 || tb->shape.size() != 2) {
        return ctx_.Error(absl::StrCat("differentiating MatMul '", node.output(0),
                                       "' needs 2-D operands"));
      }
      if (wants(0)) {  // g B^T
        KILN_ASSIGN_OR_RETURN(Expr share,
                              call("nn.matmul", {g, b}, MakeAttrs({{"transpose_b", true}})));
        KILN_RETURN_IF_ERROR(Accumulate(node.input(0), share));
      }
      if (wants(1)) {  // A^T g
        KILN_ASSIGN_OR_RETURN(Expr share,
                              call("nn.matmul", {a, g}, MakeAttrs({{"transpose_a", true}})));
        KILN_RETURN_IF_ERROR(Accumulate(node.input(1), share));
      }
    }
    return absl::OkStatus();
  }

  std::map<std::string, Expr>& adjoint() { return adjoint_; }

 private:
  ConvertContext& ctx_;
  const std::function<Expr(const std::string&)>& value_of_;
  std::map<std::string, Expr> adjoint_;
};

}  // namespace

bool IsGradientOp(const std::string& domain, const std::string& op_type) {
  return domain == kTrainingDomain && op_type == "Gradient";
}

absl::StatusOr<std::vector<Expr>> ConvertGradient(
    ConvertContext& ctx, const onnx::GraphProto& graph,
    const std::function<Expr(const std::string&)>& value_of) {
  const onnx::AttributeProto* xs_attr = ctx.FindAttr("xs");
  if (xs_attr == nullptr || xs_attr->strings_size() == 0) {
    return ctx.Error("attribute 'xs' must name the tensors to differentiate by");
  }
  std::vector<std::string> xs(xs_attr->strings().begin(), xs_attr->strings().end());
  KILN_ASSIGN_OR_RETURN(std::string y, ctx.StringAttr("y", std::nullopt));
  std::set<std::string> held;  // zs: constant for this differentiation
  if (const onnx::AttributeProto* zs = ctx.FindAttr("zs")) held.insert(zs->strings().begin(), zs->strings().end());
  if (ctx.node().output_size() != static_cast<int>(xs.size())) {
    return ctx.Error(absl::StrCat("expected one output per name in 'xs' (", xs.size(), "), got ",
                                  ctx.node().output_size()));
  }

  // The nodes y is computed from, producers first (an iterative depth-first post-order: the
  // graph may list its nodes in any order, and its depth is the model's to choose).
  std::map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i) {
    if (&graph.node(i) == &ctx.node()) continue;
    for (const std::string& out : graph.node(i).output()) producer[out] = i;
  }
  std::vector<int> topo;
  std::set<int> visited;
  std::vector<std::pair<int, int>> stack;  // (node, next input to visit)
  if (auto it = producer.find(y); it != producer.end()) stack.emplace_back(it->second, 0);
  while (!stack.empty()) {
    auto& [index, next] = stack.back();
    if (next == 0 && !visited.insert(index).second) {
      stack.pop_back();
      continue;
    }
    const onnx::NodeProto& node = graph.node(index);
    if (next < node.input_size()) {
      auto it = producer.find(node.input(next++));
      if (it != producer.end() && !visited.count(it->second)) stack.emplace_back(it->second, 0);
      continue;
    }
    topo.push_back(index);
    stack.pop_back();
  }
  // The values that depend on an x, held values (zs) excepted.
  std::set<std::string> depends;
  for (const std::string& x : xs) {
    if (!held.count(x)) depends.insert(x);
  }
  for (int index : topo) {
    const onnx::NodeProto& node = graph.node(index);
    bool reads_x = false;
    for (const std::string& in : node.input()) reads_x = reads_x || depends.count(in);
    for (const std::string& out : node.output()) {
      if (reads_x && !held.count(out)) depends.insert(out);
    }
  }

  Differentiator d(ctx, value_of);
  KILN_ASSIGN_OR_RETURN(Expr y_value, d.Value(y));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* y_type, d.TensorType(y_value, y));
  KILN_ASSIGN_OR_RETURN(d.adjoint()[y], d.Filled(y_type, 1));
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const onnx::NodeProto& node = graph.node(*it);
    if (!depends.count(node.output(0))) continue;  // nothing of an x flows through it
    bool listed = IsDefaultDomain(node.domain()) && node.output_size() == 1;
    bool known = false;
    for (const char* op : kDifferentiable) known = known || node.op_type() == op;
    if (!listed || !known) {
      return ctx.Error(absl::StrCat(
          "cannot differentiate through ONNX node '", node.name().empty() ? node.output(0) : node.name(),
          "' (", node.op_type(), "); Gradient supports ", absl::StrJoin(kDifferentiable, ", ")));
    }
    auto g = d.adjoint().find(node.output(0));
    if (g == d.adjoint().end()) continue;
    std::set<std::string> wanted;
    for (const std::string& in : node.input()) {
      if (depends.count(in)) wanted.insert(in);
    }
    KILN_RETURN_IF_ERROR(d.Backward(node, g->second, wanted));
  }
  std::vector<Expr> outputs;
  for (const std::string& x : xs) {
    auto it = d.adjoint().find(x);
    if (it != d.adjoint().end()) {
      outputs.push_back(it->second);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(Expr value, d.Value(x));
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, d.TensorType(value, x));
    KILN_ASSIGN_OR_RETURN(Expr zeros, d.Filled(type, 0));  // y does not depend on this x
    outputs.push_back(zeros);
  }
  return outputs;
}

}  // namespace kiln::onnx_frontend
