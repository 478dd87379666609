// FuseOps: dominator-tree fusion, in three steps per function.
//
// 1. IndexedGraph: every non-leaf node of the function body, numbered in
//    post-order (operands before users) by an explicit-stack walk, with its
//    pattern kind and its out-edges (user, edge pattern).
// 2. PostDominators: walking users before operands, each node's immediate
//    post-dominator is the least common ancestor of its users in the tree
//    built so far, and `pattern` is the worst edge kind on the way there.
// 3. Partitioner: union-find groups, merged by the phase rules below; then
//    each group holding an operator call becomes a Primitive function.
//
// Leaves (variables, constants, operators, global variables, functions that
// are already Primitive) are not graph nodes: they never join a group; a
// group reading them takes them as parameters (scalar constants are copied
// into the body). Let, If, nested functions and calls of functions are opaque
// nodes: they fuse with nothing, but the dataflow inside them is fused too.
#include "engine/transform/fuse_ops.h"

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_walk.h"
#include "engine/op/op_registry.h"
#include "engine/pass/pass_context.h"
#include "engine/transform/si_builder.h"

namespace kiln::transform {
namespace {

OpPattern Combine(OpPattern a, OpPattern b) {
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}
bool AtMost(OpPattern a, OpPattern b) { return static_cast<int>(a) <= static_cast<int>(b); }

bool IsLeaf(const ExprNode* expr) {
  switch (expr->kind()) {
    case ObjectKind::kVar:
    case ObjectKind::kGlobalVar:
    case ObjectKind::kConstant:
    case ObjectKind::kOp:
      return true;
    case ObjectKind::kFunction:
      return static_cast<const FunctionNode*>(expr)->HasNonzeroAttr(kAttrPrimitive);
    default:
      return false;
  }
}

bool IsLeaf(const Expr& expr) { return IsLeaf(expr.get()); }

// A call of an operator that computes tensors: a kernel. A call taking a function (while_loop
// and its body) is control flow: never wrapped, its body fused on its own.
bool IsOpCall(const ExprNode* node) {
  const auto* call =
      node->kind() == ObjectKind::kCall ? static_cast<const CallNode*>(node) : nullptr;
  if (call == nullptr || call->op.as<OpNode>() == nullptr) return false;
  for (const Expr& arg : call->args) {
    if (arg->kind() == ObjectKind::kFunction && !IsLeaf(arg)) return false;
  }
  return true;
}

bool SameShape(const Type& a, const Type& b) {
  const auto* ta = a.as<TensorTypeNode>();
  const auto* tb = b.as<TensorTypeNode>();
  return ta != nullptr && tb != nullptr && ta->shape == tb->shape;
}

bool AllTensorFields(const Type& type) {
  const auto* tuple = type.as<TupleTypeNode>();
  if (tuple == nullptr) return false;
  for (const Type& field : tuple->fields) {
    if (!field.as<TensorTypeNode>()) return false;
  }
  return true;
}

// ---- 1. the indexed forward graph ------------------------------------------

struct Edge {
  int user;
  OpPattern pattern;
};

struct GraphNode {
  Expr expr;
  OpPattern pattern = OpPattern::kOpaque;
  // Used outside the graph (the function's result): no post-dominator.
  bool extern_ref = false;
  std::vector<Edge> outputs;
};

class IndexedGraph {
 public:
  explicit IndexedGraph(const Expr& root) {
    if (!IsLeaf(root)) Build(root);
  }

  int size() const { return static_cast<int>(nodes_.size()); }
  const GraphNode& node(int i) const { return nodes_[i]; }
  // -1 for leaves.
  int IndexOf(const Expr& expr) const {
    auto it = index_.find(expr.get());
    return it == index_.end() ? -1 : it->second;
  }

 private:
  void Build(const Expr& root) {
    // Operands before users; leaves (operator handles included) are not nodes.
    WalkPostOrder(
        root.get(), ChildSet::kUses,
        [this](const WalkEdge& edge) {
          return !IsLeaf(edge.child) && !index_.count(edge.child);
        },
        [this](const ExprNode* node) { Add(Expr(node)); });
    nodes_[index_.at(root.get())].extern_ref = true;
  }

  void Add(const Expr& expr) {
    int index = static_cast<int>(nodes_.size());
    index_.emplace(expr.get(), index);
    nodes_.emplace_back();
    nodes_.back().expr = expr;
    GraphNode& node = nodes_.back();
    auto link = [&](const Expr& operand, OpPattern pattern) {
      int from = IndexOf(operand);
      if (from >= 0) nodes_[from].outputs.push_back(Edge{index, pattern});
    };
    switch (expr->kind()) {
      case ObjectKind::kCall: {
        const auto* call = static_cast<const CallNode*>(expr.get());
        const auto* op = call->op.as<OpNode>();
        const OpEntry* entry = OpRegistry::Global().FindCallee(call->op);
        node.pattern = entry ? entry->pattern : OpPattern::kOpaque;
        if (!op) link(call->op, OpPattern::kOpaque);
        for (const Expr& arg : call->args) {
          OpPattern edge = node.pattern;
          // Broadcasting an operand that already has the result's shape is
          // elementwise for it (conv2d -> add of a bias shaped (C, 1, 1)).
          if (edge == OpPattern::kBroadcast && SameShape(arg->checked_type, expr->checked_type)) {
            edge = OpPattern::kElementwise;
          }
          link(arg, edge);
        }
        break;
      }
      case ObjectKind::kTuple:
        node.pattern = OpPattern::kTuple;
        for (const Expr& field : static_cast<const TupleNode*>(expr.get())->elements) {
          link(field, field->checked_type.as<TensorTypeNode>() ? OpPattern::kInjective
                                                               : OpPattern::kOpaque);
        }
        break;
      case ObjectKind::kTupleGetItem: {
        const Expr& tuple = static_cast<const TupleGetItemNode*>(expr.get())->tuple;
        node.pattern =
            AllTensorFields(tuple->checked_type) ? OpPattern::kInjective : OpPattern::kOpaque;
        link(tuple, node.pattern);
        break;
      }
      default:
        node.pattern = OpPattern::kOpaque;
        ForEachChild(expr.get(), ChildSet::kUses,
                     [&](const ExprNode* operand) { link(Expr(operand), OpPattern::kOpaque); });
        break;
    }
  }

  std::vector<GraphNode> nodes_;
  std::unordered_map<const ExprNode*, int> index_;
};

// ---- 2. the post-dominator tree --------------------------------------------

struct DomNode {
  int parent = -1;
  int depth = 1;
  // The worst edge pattern on the paths to `parent`.
  OpPattern pattern = OpPattern::kOpaque;
};

std::vector<DomNode> PostDominators(const IndexedGraph& graph) {
  std::vector<DomNode> tree(graph.size());
  auto lca = [&tree](int a, int b, OpPattern* pattern) {
    while (a != b) {
      if (a < 0 || b < 0) return -1;
      if (tree[a].depth < tree[b].depth) {
        *pattern = Combine(*pattern, tree[b].pattern);
        b = tree[b].parent;
      } else if (tree[b].depth < tree[a].depth) {
        *pattern = Combine(*pattern, tree[a].pattern);
        a = tree[a].parent;
      } else {
        *pattern = Combine(*pattern, Combine(tree[a].pattern, tree[b].pattern));
        a = tree[a].parent;
        b = tree[b].parent;
      }
    }
    return a;
  };
  for (int i = graph.size() - 1; i >= 0; --i) {
    const GraphNode& node = graph.node(i);
    if (node.extern_ref || node.outputs.empty()) continue;  // a root
    int parent = -1;
    OpPattern pattern = OpPattern::kElementwise;
    bool first = true;
    for (const Edge& edge : node.outputs) {
      parent = first ? edge.user : lca(parent, edge.user, &pattern);
      first = false;
      pattern = Combine(pattern, edge.pattern);
      if (parent < 0) break;
    }
    tree[i].parent = parent;
    tree[i].depth = parent < 0 ? 1 : tree[parent].depth + 1;
    tree[i].pattern = parent < 0 ? OpPattern::kOpaque : pattern;
  }
  return tree;
}

// ---- 3. partitioning -------------------------------------------------------

class Partitioner {
 public:
  Partitioner(const IndexedGraph& graph, int64_t max_fuse_depth)
      : graph_(graph),
        max_fuse_depth_(max_fuse_depth),
        groups_(graph.size()),
        visit_stamp_(graph.size(), 0) {
    for (int i = 0; i < graph.size(); ++i) {
      groups_[i].pattern = graph.node(i).pattern;
      groups_[i].anchored = graph.node(i).pattern == OpPattern::kOutElementwiseFusable;
    }
  }

  void Run(int64_t fuse_opt_level) {
    if (fuse_opt_level == 0) return;
    std::vector<DomNode> tree = PostDominators(graph_);
    for (int phase = 0; phase < 3; ++phase) RunPhase(tree, phase);
  }

  int FindRoot(int group) {
    int root = group;
    while (groups_[root].parent >= 0) root = groups_[root].parent;
    while (groups_[group].parent >= 0) {
      int next = groups_[group].parent;
      groups_[group].parent = root;
      group = next;
    }
    return root;
  }

 private:
  struct Group {
    int parent = -1;  // union-find link; -1 for a root
    OpPattern pattern = OpPattern::kOpaque;
    int64_t num_nodes = 1;
    bool anchored = false;  // holds an out-elementwise-fusable op
  };
  using Condition = std::function<bool(OpPattern kind, bool is_sink)>;

  // TVM's phase rules. Phase 0 fuses conv2d/dense/matmul with the
  // elementwise ops after them, and elementwise/broadcast ops into injective
  // or reduction users; phase 1 adds injective chains (deferred so anchors
  // finish first); phase 2 fuses injective ops into the tuples they feed.
  void RunPhase(const std::vector<DomNode>& tree, int phase) {
    for (int i = 0; i < graph_.size(); ++i) {
      const Group& group = groups_[i];
      const DomNode& dom = tree[i];
      if (group.pattern == OpPattern::kOpaque || dom.parent < 0) continue;
      int sink = dom.parent;
      if (phase == 2) {
        if (!AtMost(group.pattern, OpPattern::kInjective)) continue;
        int sink_root = FindRoot(sink);
        if (groups_[sink_root].pattern == OpPattern::kTuple) continue;
        if (groups_[sink].pattern == OpPattern::kTuple &&
            AtMost(groups_[sink_root].pattern, OpPattern::kInjective)) {
          TryFuse(i, sink,
                  [](OpPattern kind, bool) { return AtMost(kind, OpPattern::kInjective); });
        }
        continue;
      }
      if (FindRoot(i) == FindRoot(sink)) continue;
      if (groups_[sink].pattern == OpPattern::kTuple) continue;
      if (group.pattern == OpPattern::kOutElementwiseFusable) {
        if (phase != 0) continue;
        if (dom.pattern == OpPattern::kElementwise) {
          TryFuse(i, sink,
                  [](OpPattern kind, bool) { return AtMost(kind, OpPattern::kBroadcast); });
        }
      } else if (AtMost(group.pattern, OpPattern::kBroadcast)) {
        if (AtMost(dom.pattern, OpPattern::kInjective) || dom.pattern == OpPattern::kReduction) {
          TryFuse(i, sink, [](OpPattern kind, bool is_sink) {
            // Injective ops on parallel branches may join an elementwise anchor.
            if (!is_sink) return AtMost(kind, OpPattern::kInjective);
            return AtMost(kind, OpPattern::kInjective) || kind == OpPattern::kReduction ||
                   kind == OpPattern::kOutElementwiseFusable;
          });
        }
      } else if (group.pattern == OpPattern::kInjective || group.pattern == OpPattern::kTuple) {
        if (phase != 1) continue;
        TryFuse(i, sink, [](OpPattern kind, bool) { return AtMost(kind, OpPattern::kInjective); });
      }
      // Reductions are fused into by their producers, never into users.
    }
  }

  // Fuses `src` and every node on its paths to `sink` into sink's group when
  // every node on them satisfies `condition` and the group stays small enough.
  void TryFuse(int src, int sink, const Condition& condition) {
    std::vector<int> roots;
    if (!CheckPath(src, sink, condition, &roots)) return;
    roots.push_back(FindRoot(src));
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    int64_t size = 0;
    for (int root : roots) size += groups_[root].num_nodes;
    if (size > max_fuse_depth_) return;
    CommitFuse(src, sink);
  }

  // Explicit stack: paths may be as long as the graph.
  bool CheckPath(int src, int sink, const Condition& condition, std::vector<int>* roots) {
    ++stamp_;
    std::vector<int> stack;
    for (const Edge& edge : graph_.node(src).outputs) stack.push_back(edge.user);
    while (!stack.empty()) {
      int node = stack.back();
      stack.pop_back();
      if (visit_stamp_[node] == stamp_) continue;
      visit_stamp_[node] = stamp_;
      int root = FindRoot(node);
      roots->push_back(root);
      if (!condition(groups_[root].pattern, node == sink)) return false;
      if (node == sink) continue;
      for (const Edge& edge : graph_.node(node).outputs) stack.push_back(edge.user);
    }
    return true;
  }

  void CommitFuse(int src, int sink) {
    int target = sink;
    ++stamp_;
    std::vector<int> stack{src};
    while (!stack.empty()) {
      int node = stack.back();
      stack.pop_back();
      if (node == sink || visit_stamp_[node] == stamp_) continue;
      visit_stamp_[node] = stamp_;
      MergeInto(node, target);
      for (const Edge& edge : graph_.node(node).outputs) stack.push_back(edge.user);
    }
  }

  void MergeInto(int child, int parent) {
    child = FindRoot(child);
    parent = FindRoot(parent);
    if (child == parent) return;
    groups_[parent].num_nodes += groups_[child].num_nodes;
    groups_[child].parent = parent;
    if (groups_[child].anchored) {
      groups_[parent].anchored = true;
      groups_[parent].pattern = Combine(groups_[child].pattern, groups_[parent].pattern);
    }
  }

  const IndexedGraph& graph_;
  int64_t max_fuse_depth_;
  std::vector<Group> groups_;
  std::vector<int> visit_stamp_;
  int stamp_ = 0;
};

// ---- rewriting -------------------------------------------------------------

bool IsScalarConstant(const Expr& expr) {
  const auto* constant = expr.as<ConstantNode>();
  return constant != nullptr && constant->data->shape.empty() && !constant->virtual_device;
}

class FusedBuilder {
 public:
  FusedBuilder(const IndexedGraph& graph, Partitioner& partitioner, bool keep_spans)
      : graph_(graph),
        keep_spans_(keep_spans),
        root_of_(graph.size()),
        members_(graph.size()),
        wrapped_(graph.size(), false) {
    for (int i = 0; i < graph.size(); ++i) {
      root_of_[i] = partitioner.FindRoot(i);
      members_[root_of_[i]].push_back(i);  // ascending: post-order
      if (IsOpCall(graph.node(i).expr.get())) wrapped_[root_of_[i]] = true;
    }
  }

  absl::StatusOr<Expr> Rewrite(const Expr& root) {
    // Only the last member (in post-order) of a group may be used outside it.
    for (int i = 0; i < graph_.size(); ++i) {
      int group = root_of_[i];
      if (!wrapped_[group] || i == members_[group].back()) continue;
      const GraphNode& node = graph_.node(i);
      bool escapes = node.extern_ref;
      for (const Edge& edge : node.outputs) escapes |= root_of_[edge.user] != group;
      if (escapes) return absl::InternalError("FuseOps: a fused group has a value used outside it");
    }
    for (int i = 0; i < graph_.size(); ++i) {
      int group = root_of_[i];
      const Expr& expr = graph_.node(i).expr;
      if (!wrapped_[group]) {
        rewritten_.emplace(expr.get(),
                           RebuildWithChildren(expr, ChildSet::kUses,
                                               [this](const Expr& e) { return Outer(e); }));
        continue;
      }
      if (i != members_[group].back()) continue;
      absl::StatusOr<Expr> call = BuildGroup(group);
      if (!call.ok()) return call.status();
      rewritten_.emplace(expr.get(), *call);
    }
    return Outer(root);
  }

 private:
  Expr Outer(const Expr& expr) const {
    if (!expr || IsLeaf(expr)) return expr;
    auto it = rewritten_.find(expr.get());
    KILN_CHECK(it != rewritten_.end()) << "FuseOps: a fused group's inner node is used outside it";
    return it->second;
  }

  absl::StatusOr<Expr> BuildGroup(int group) {
    const std::vector<int>& members = members_[group];
    std::vector<Var> params;
    std::vector<Expr> args;
    std::unordered_map<const ExprNode*, Expr> inner;
    std::unordered_map<const ExprNode*, Var> param_of;
    auto input = [&](const Expr& operand) -> Expr {
      int index = graph_.IndexOf(operand);
      if (index >= 0 && root_of_[index] == group) return inner.at(operand.get());
      if (operand.as<OpNode>() || IsScalarConstant(operand)) return operand;
      auto it = param_of.find(operand.get());
      if (it != param_of.end()) return it->second;
      Expr outer = Outer(operand);
      Var param = MakeRef<VarNode>(
          absl::StrCat("p", params.size()), outer->checked_type,
          ExprFields{keep_spans_ ? outer->span : nullptr, outer->checked_type, nullptr});
      params.push_back(param);
      args.push_back(outer);
      param_of.emplace(operand.get(), param);
      return param;
    };
    std::vector<Span> spans;
    for (int m : members) {
      const Expr& expr = graph_.node(m).expr;
      inner.emplace(expr.get(), RebuildWithChildren(expr, ChildSet::kUses, input));
      spans.push_back(expr->span);
    }
    const Expr& output = graph_.node(members.back()).expr;
    Expr body = inner.at(output.get());
    Span span = keep_spans_ ? MakeSequentialSpan(spans) : nullptr;
    Type ret_type = body->checked_type;
    Type func_type;
    if (ret_type) {
      std::vector<Type> param_types;
      for (const Var& param : params) param_types.push_back(param->checked_type);
      func_type = MakeFuncType(std::move(param_types), ret_type);
    }
    Expr func = MakeRef<FunctionNode>(std::move(params), body, ret_type,
                                      MakeAttrs({{kAttrPrimitive, AttrValue(1)}}),
                                      ExprFields{span, func_type, nullptr});
    return Expr(MakeRef<CallNode>(func, std::move(args), nullptr,
                                  ExprFields{span, ret_type, output->virtual_device}));
  }

  const IndexedGraph& graph_;
  bool keep_spans_;
  std::vector<int> root_of_;
  std::vector<std::vector<int>> members_;
  std::vector<bool> wrapped_;
  std::unordered_map<const ExprNode*, Expr> rewritten_;
};

absl::StatusOr<Function> FuseFunction(const Function& func, int64_t fuse_opt_level,
                                      int64_t max_fuse_depth) {
  IndexedGraph graph(func->body);
  Partitioner partitioner(graph, max_fuse_depth);
  partitioner.Run(fuse_opt_level);
  FusedBuilder builder(graph, partitioner, SIBuilder::EnabledInCurrentContext());
  absl::StatusOr<Expr> body = builder.Rewrite(func->body);
  if (!body.ok()) return body.status();
  if (body->same_as(func->body)) return func;
  return MakeRef<FunctionNode>(func->params, *body, func->ret_type, func->attrs, func->fields());
}

}  // namespace

Pass FuseOps(int64_t fuse_opt_level, int64_t max_fuse_depth) {
  return CreateFunctionPass(
      [fuse_opt_level, max_fuse_depth](const Function& func, const IRModule&,
                                       PassContext&) -> absl::StatusOr<Function> {
        return FuseFunction(func, fuse_opt_level, std::max<int64_t>(max_fuse_depth, 1));
      },
      PassInfo{"FuseOps", 0, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
