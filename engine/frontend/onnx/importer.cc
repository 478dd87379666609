// The ONNX importer: validation of the graph as a whole (size limits, opset,
// unsupported ops listed together, undefined inputs, cycles), then node-by-
// node conversion in dependency order with span filling.
#include "engine/frontend/onnx/importer.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/frontend/onnx/bounded_flow.h"
#include "engine/frontend/onnx/control_flow.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/function_expansion.h"
#include "engine/frontend/onnx/gradient.h"
#include "engine/support/request_limits.h"
#include "engine/support/status_macros.h"
#include "engine/support/utf8.h"

namespace kiln {
namespace {

using onnx_frontend::ConvertContext;
using onnx_frontend::ConverterTable;
using onnx_frontend::IsDefaultDomain;
using onnx_frontend::QualifiedOpType;

// Function bodies may use operators defined by function bodies again; this bounds the recursion
// (ONNX's own bodies nest at most twice).
constexpr int kMaxFunctionDepth = 4;

// `<op_type>_<k>` for unnamed nodes: unique and stable for a given model.
std::string NodeSourceName(const onnx::NodeProto& node, int index) {
  return node.name().empty() ? absl::StrCat(node.op_type(), "_", index) : node.name();
}

// The type of the tensor graph input `name` (or element of a sequence input), its shape
// `shape_override` when given, else the model's.
absl::StatusOr<Type> TensorInputType(const std::string& name, const onnx::TypeProto::Tensor& tensor,
                                     const std::vector<int64_t>* shape_override,
                                     const OnnxImportOptions& options) {
  auto dtype = onnx_frontend::DataTypeFromOnnx(tensor.elem_type());
  if (!dtype.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph input '", name, "': ", dtype.status().message()));
  }
  std::vector<Dim> dims;
  const size_t rank = shape_override != nullptr ? shape_override->size()
                      : tensor.has_shape()      ? static_cast<size_t>(tensor.shape().dim_size())
                                                : 0;
  if (rank > static_cast<size_t>(kMaxTensorRank)) {
    return absl::InvalidArgumentError(absl::StrCat("graph input '", name, "' has rank ", rank,
                                                   ", more than the limit of ", kMaxTensorRank));
  }
  if (shape_override != nullptr) {
    for (int64_t d : *shape_override) {
      if (d < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("input shape override for '", name, "' has negative dim ", d));
      }
      dims.push_back(Dim::Static(d));
    }
    if (tensor.has_shape() && tensor.shape().dim_size() != static_cast<int>(dims.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input shape override for '", name, "' has rank ", dims.size(), ", the model says ",
          tensor.shape().dim_size()));
    }
  } else {
    if (!tensor.has_shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph input '", name, "' has no shape; give one with an input shape override"));
    }
    for (const auto& dim : tensor.shape().dim()) {
      if (dim.has_dim_value()) {
        if (dim.dim_value() < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("graph input '", name, "' has negative dim ", dim.dim_value()));
        }
        dims.push_back(Dim::Static(dim.dim_value()));
      } else {
        dims.push_back(Dim::Symbolic(dim.has_dim_param() ? dim.dim_param() : ""));
      }
    }
  }
  // Static inputs larger than any tensor the importer accepts are refused
  // here: their element counts would overflow the index arithmetic below.
  int64_t elements = 1;
  bool all_static = true;
  for (const Dim& dim : dims) {
    // Each extent on its own too: an empty tensor (a 0 dim) must not carry a 2^62 one into
    // converters' size arithmetic.
    if (dim.is_static() && dim.value > options.max_tensor_elements) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", name, "' has extent ",
                                                     dim.value, ", more than the limit of ",
                                                     options.max_tensor_elements));
    }
    all_static = all_static && dim.is_static();
    if (dim.is_static() && __builtin_mul_overflow(elements, dim.value, &elements)) {
      elements = std::numeric_limits<int64_t>::max();
    }
  }
  if (all_static && elements > options.max_tensor_elements) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph input '", name, "' would have more than ", options.max_tensor_elements,
        " elements (the importer's limit on one tensor)"));
  }
  return Type(MakeTensorType(std::move(dims), *dtype));
}

// The element shapes of sequence input `name` as the options give them, or an error.
absl::StatusOr<const std::vector<std::vector<int64_t>>*> SequenceInputShapes(
    const std::string& name, const onnx::TypeProto::Sequence& sequence,
    const OnnxImportOptions& options) {
  if (!sequence.elem_type().has_tensor_type()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph input '", name, "' is a sequence of non-tensors, not supported"));
  }
  auto it = options.input_sequence_shapes.find(name);
  if (it == options.input_sequence_shapes.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "graph input '", name, "' is a sequence: give its element shapes (a sequence's length is "
        "static in Kiln; OnnxImportOptions::input_sequence_shapes)"));
  }
  if (static_cast<int64_t>(it->second.size()) > options.max_graph_nodes) {
    return absl::InvalidArgumentError(absl::StrCat("sequence input '", name, "' has ",
                                                   it->second.size(), " elements, more than ",
                                                   options.max_graph_nodes));
  }
  return &it->second;
}

class GraphImporter {
 public:
  // Takes `graph` mutable: initializer bytes are moved out, not copied.
  GraphImporter(onnx::GraphProto& graph, int64_t opset, const OnnxImportOptions& options)
      : graph_(graph), opset_(opset), options_(options) {}

  absl::StatusOr<Function> Import() {
    if (graph_.node_size() > options_.max_graph_nodes) {
      return absl::InvalidArgumentError(absl::StrCat("graph has ", graph_.node_size(),
                                                     " nodes, more than the limit of ",
                                                     options_.max_graph_nodes));
    }
    KILN_RETURN_IF_ERROR(CheckSupported());
    CollectDeclaredShapes();
    KILN_RETURN_IF_ERROR(ImportInitializersAndInputs());
    KILN_ASSIGN_OR_RETURN(std::vector<int> order, DependencyOrder());
    for (int index : order) {
      if (options_.budget != nullptr) {
        KILN_RETURN_IF_ERROR(options_.budget->CheckCancelled(absl::StrCat(
            "while importing ONNX node ", NodeSourceName(graph_.node(index), index))));
      }
      KILN_RETURN_IF_ERROR(ConvertNode(index));
    }
    return BuildFunction();
  }

  // After Import: (output, axis, length output) per bounded graph output, flattened.
  const std::vector<int64_t>& bounded_outputs() const { return bounded_outputs_; }

 private:
  Span SpanFor(const std::string& name) const {
    return options_.span_filling ? MakeSpan(ValidUtf8(name)) : Span();
  }

  // The static shapes the graph declares for its outputs and intermediate values (value_info):
  // what a converter may compile in when the operand deciding a shape is known only at run time
  // (checked then). Declarations with symbolic dims, or beyond Kiln's limits, are left out.
  void CollectDeclaredShapes() {
    auto collect = [&](const onnx::ValueInfoProto& info) {
      if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
      const onnx::TensorShapeProto& shape = info.type().tensor_type().shape();
      if (shape.dim_size() > kMaxTensorRank) return;
      std::vector<int64_t> dims;
      int64_t elements = 1;
      for (const onnx::TensorShapeProto::Dimension& dim : shape.dim()) {
        if (!dim.has_dim_value() || dim.dim_value() < 0 ||
            dim.dim_value() > options_.max_tensor_elements) {
          return;
        }
        dims.push_back(dim.dim_value());
        elements = dim.dim_value() == 0 ? 0 : std::min(elements * dim.dim_value(),
                                                       options_.max_tensor_elements + 1);
      }
      if (elements > options_.max_tensor_elements) return;
      declared_shapes_[info.name()] = std::move(dims);
    };
    for (const onnx::ValueInfoProto& info : graph_.value_info()) collect(info);
    for (const onnx::ValueInfoProto& info : graph_.output()) collect(info);
    PropagateDeclaredShapesBackward();
  }

  // An elementwise node's inputs take its output's declared shape when they declare none, so a
  // chain like Range -> Mul -> Cos -> ... -> a declared output tells the Range its length (the
  // expanded window functions). Only a guess where the model is silent: it is used only for an
  // operand known at run time, whose value is checked then (a wrong guess fails that check).
  void PropagateDeclaredShapesBackward() {
    static const std::set<std::string> kElementwise = {
        "Abs",  "Acos", "Add",  "Asin",  "Atan", "Cast", "Ceil", "Cos",     "Cosh",  "Div",
        "Erf",  "Exp",  "Floor", "Identity", "Log", "Max", "Min", "Mul", "Neg", "Pow",
        "Reciprocal", "Relu", "Round", "Sigmoid", "Sin", "Sinh", "Sqrt", "Sub", "Tan", "Tanh"};
    // Nodes are (usually) in topological order: walking them backwards carries a shape up a chain
    // in one pass; a few more settle the rest. Each name takes a shape at most once.
    for (int round = 0; round < 4; ++round) {
      bool changed = false;
      for (int i = graph_.node_size() - 1; i >= 0; --i) {
        const onnx::NodeProto& node = graph_.node(i);
        if (!IsDefaultDomain(node.domain()) || !kElementwise.count(node.op_type()) ||
            node.output_size() != 1) {
          continue;
        }
        auto declared = declared_shapes_.find(node.output(0));
        if (declared == declared_shapes_.end()) continue;
        const std::vector<int64_t> shape = declared->second;
        for (const std::string& input : node.input()) {
          if (!input.empty() && declared_shapes_.emplace(input, shape).second) changed = true;
        }
      }
      if (!changed) break;
    }
  }

  // The unsupported op types of `graph`'s nodes and of the subgraphs of its control flow.
  void CollectUnsupported(const onnx::GraphProto& graph, std::map<std::string, int>* unsupported,
                          int depth) const {
    const ConverterTable& table = ConverterTable::Builtin();
    for (const onnx::NodeProto& node : graph.node()) {
      if (!IsDefaultDomain(node.domain())) {
        std::string op = QualifiedOpType(node.domain(), node.op_type());
        if (table.Find(op) == nullptr && !onnx_frontend::IsGradientOp(node.domain(), node.op_type())) {
          ++(*unsupported)[op];
        }
      } else if (onnx_frontend::IsControlFlowOp(node.op_type())) {
        if (depth >= kMaxFunctionDepth) continue;  // Convert reports the nesting
        for (const onnx::AttributeProto& attr : node.attribute()) {
          if (attr.type() == onnx::AttributeProto::GRAPH) {
            CollectUnsupported(attr.g(), unsupported, depth + 1);
          }
        }
      } else if (table.Find(node.op_type()) == nullptr &&
                 !onnx_frontend::HasFunctionBody(node.op_type(), opset_)) {
        ++(*unsupported)[node.op_type()];
      }
    }
  }

  absl::Status CheckSupported() const {
    std::map<std::string, int> unsupported;
    CollectUnsupported(graph_, &unsupported, 0);
    if (unsupported.empty()) return absl::OkStatus();
    std::vector<std::string> parts;
    for (const auto& [op, count] : unsupported) parts.push_back(absl::StrCat(op, " (x", count, ")"));
    return absl::UnimplementedError(absl::StrCat(unsupported.size(),
                                                 " unsupported ONNX operator type(s): ",
                                                 absl::StrJoin(parts, ", ")));
  }

  absl::Status ImportInitializersAndInputs() {
    for (onnx::TensorProto& init : *graph_.mutable_initializer()) {
      if (values_.count(init.name())) {
        return absl::InvalidArgumentError(
            absl::StrCat("initializer '", init.name(), "' is defined twice"));
      }
      KILN_ASSIGN_OR_RETURN(TensorData data,
                            onnx_frontend::TakeTensorFromProto(&init, options_.max_tensor_elements,
                                                               options_.budget));
      std::vector<Dim> dims;
      for (int64_t d : data->shape) dims.push_back(Dim::Static(d));
      Type type = MakeTensorType(std::move(dims), data->dtype);
      if (options_.initializers_as_params) {
        Var param = MakeRef<VarNode>(ValidUtf8(init.name()), type,
                                     ExprFields{SpanFor(init.name()), type, nullptr});
        weight_params_.push_back(param);
        values_[init.name()] = param;
      } else {
        values_[init.name()] =
            MakeRef<ConstantNode>(std::move(data), ExprFields{SpanFor(init.name()), type, nullptr});
      }
    }
    std::set<std::string> input_names;
    for (const onnx::ValueInfoProto& input : graph_.input()) {
      if (values_.count(input.name())) continue;  // an initializer listed as input
      input_names.insert(input.name());
      if (input.type().has_sequence_type()) {
        KILN_ASSIGN_OR_RETURN(values_[input.name()],
                              AddSequenceInput(input.name(), input.type().sequence_type()));
        continue;
      }
      if (input.type().has_optional_type()) {
        KILN_RETURN_IF_ERROR(AddOptionalInput(input));
        continue;
      }
      if (!input.type().has_tensor_type()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "graph input '", input.name(), "' is not a tensor, a sequence of tensors or an "
            "optional of either (map inputs are not supported)"));
      }
      auto shape = options_.input_shapes.find(input.name());
      KILN_ASSIGN_OR_RETURN(
          Type type,
          TensorInputType(input.name(), input.type().tensor_type(),
                          shape == options_.input_shapes.end() ? nullptr : &shape->second,
                          options_));
      Var param = MakeRef<VarNode>(ValidUtf8(input.name()), type,
                                   ExprFields{SpanFor(input.name()), type, nullptr});
      input_params_.push_back(param);
      values_[input.name()] = param;
    }
    for (const auto& [name, shape] : options_.input_shapes) {
      if (!input_names.count(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("input shape override names '", name, "', which is not a graph input"));
      }
    }
    for (const auto& [name, shapes] : options_.input_sequence_shapes) {
      if (!input_names.count(name)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "sequence element shapes name '", name, "', which is not a graph input"));
      }
    }
    for (const std::string& name : options_.empty_optional_inputs) {
      if (!input_names.count(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("the empty optional inputs name '", name, "', which is not a graph input"));
      }
    }
    return absl::OkStatus();
  }

  // A tuple of `fields` spanned by graph input `name`.
  Expr InputTuple(const std::string& name, std::vector<Expr> fields) const {
    std::vector<Type> types;
    for (const Expr& field : fields) types.push_back(field->checked_type);
    return MakeRef<TupleNode>(std::move(fields),
                              ExprFields{SpanFor(name), MakeTupleType(std::move(types)), nullptr});
  }

  // Sequence input `name` of type `sequence`: one tensor parameter `name.i` per element of the
  // shapes the options give; returns their tuple.
  absl::StatusOr<Expr> AddSequenceInput(const std::string& name,
                                        const onnx::TypeProto::Sequence& sequence) {
    KILN_ASSIGN_OR_RETURN(const std::vector<std::vector<int64_t>>* shapes,
                          SequenceInputShapes(name, sequence, options_));
    const onnx::TypeProto::Tensor& element = sequence.elem_type().tensor_type();
    std::vector<Expr> fields;
    for (size_t i = 0; i < shapes->size(); ++i) {
      std::string element_name = absl::StrCat(name, ".", i);
      for (const onnx::ValueInfoProto& other : graph_.input()) {
        if (other.name() == element_name) {
          return absl::InvalidArgumentError(absl::StrCat(
              "sequence input '", name, "' element ", i, " would be named '", element_name,
              "', which another graph input has"));
        }
      }
      KILN_ASSIGN_OR_RETURN(Type type,
                            TensorInputType(element_name, element, &(*shapes)[i], options_));
      Var param = MakeRef<VarNode>(ValidUtf8(element_name), type,
                                   ExprFields{SpanFor(name), type, nullptr});
      input_params_.push_back(param);
      fields.push_back(param);
    }
    return InputTuple(name, std::move(fields));
  }

  // Optional input `input`: the empty tuple when the options list it as empty, else the tuple of
  // its value, a tensor parameter `name` or a sequence as AddSequenceInput makes it.
  absl::Status AddOptionalInput(const onnx::ValueInfoProto& input) {
    const std::string& name = input.name();
    const onnx::TypeProto& element = input.type().optional_type().elem_type();
    std::vector<Expr> fields;
    if (options_.empty_optional_inputs.count(name)) {
      // no value
    } else if (element.has_tensor_type()) {
      auto shape = options_.input_shapes.find(name);
      KILN_ASSIGN_OR_RETURN(
          Type type, TensorInputType(name, element.tensor_type(),
                                     shape == options_.input_shapes.end() ? nullptr : &shape->second,
                                     options_));
      Var param = MakeRef<VarNode>(ValidUtf8(name), type, ExprFields{SpanFor(name), type, nullptr});
      input_params_.push_back(param);
      fields.push_back(param);
    } else if (element.has_sequence_type()) {
      KILN_ASSIGN_OR_RETURN(Expr sequence, AddSequenceInput(name, element.sequence_type()));
      fields.push_back(sequence);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph input '", name, "' is an optional of neither a tensor nor a sequence"));
    }
    values_[name] = InputTuple(name, std::move(fields));
    return absl::OkStatus();
  }

  std::string Describe(int index) const {
    const onnx::NodeProto& node = graph_.node(index);
    return absl::StrCat("ONNX node '", NodeSourceName(node, index), "' (#", index, ", ",
                        node.op_type(), ")");
  }

  // The names `node`'s subgraphs read that `producer` (the enclosing graph's nodes) makes.
  static void CollectSubgraphReads(const onnx::NodeProto& node,
                                   const std::unordered_map<std::string, int>& producer,
                                   std::vector<std::string>* reads, int depth) {
    if (depth >= kMaxFunctionDepth) return;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.type() != onnx::AttributeProto::GRAPH) continue;
      // A body may output an enclosing value as it is, read by no node of its own.
      for (const onnx::ValueInfoProto& output : attr.g().output()) {
        if (producer.count(output.name())) reads->push_back(output.name());
      }
      for (const onnx::NodeProto& inner : attr.g().node()) {
        for (const std::string& in : inner.input()) {
          if (producer.count(in)) reads->push_back(in);
        }
        CollectSubgraphReads(inner, producer, reads, depth + 1);
      }
    }
  }

  // Kahn's algorithm: an order in which every node follows its producers, or
  // an error for an undefined input or a cycle.
  absl::StatusOr<std::vector<int>> DependencyOrder() const {
    const int n = graph_.node_size();
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < n; ++i) {
      for (const std::string& out : graph_.node(i).output()) {
        if (out.empty()) continue;
        if (values_.count(out)) {
          return absl::InvalidArgumentError(absl::StrCat(
              Describe(i), ": output '", out, "' is also a graph input or initializer"));
        }
        auto [it, inserted] = producer.emplace(out, i);
        if (!inserted) {
          return absl::InvalidArgumentError(absl::StrCat(Describe(i), ": output '", out,
                                                         "' is already produced by ",
                                                         Describe(it->second)));
        }
      }
    }
    std::vector<int> pending(n, 0);
    std::vector<std::vector<int>> consumers(n);
    for (int i = 0; i < n; ++i) {
      // A control-flow node also depends on the outer values its subgraphs read.
      std::vector<std::string> reads(graph_.node(i).input().begin(), graph_.node(i).input().end());
      CollectSubgraphReads(graph_.node(i), producer, &reads, 0);
      // A Gradient node differentiates its `y`, which must be computed first.
      if (onnx_frontend::IsGradientOp(graph_.node(i).domain(), graph_.node(i).op_type())) {
        for (const onnx::AttributeProto& attr : graph_.node(i).attribute()) {
          if (attr.name() == "y" && producer.count(attr.s())) reads.push_back(attr.s());
        }
      }
      for (const std::string& in : reads) {
        if (in.empty() || values_.count(in)) continue;
        auto it = producer.find(in);
        if (it == producer.end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              Describe(i), ": input '", in,
              "' is not produced by any node and is not a graph input or initializer"));
        }
        ++pending[i];
        consumers[it->second].push_back(i);
      }
    }
    std::deque<int> ready;
    for (int i = 0; i < n; ++i) {
      if (pending[i] == 0) ready.push_back(i);
    }
    std::vector<int> order;
    order.reserve(n);
    while (!ready.empty()) {
      int i = ready.front();
      ready.pop_front();
      order.push_back(i);
      for (int c : consumers[i]) {
        if (--pending[c] == 0) ready.push_back(c);
      }
    }
    if (static_cast<int>(order.size()) != n) {
      // Walk from a stuck node to the producer of one of its unresolved
      // inputs until a node repeats: the repeated stretch is a cycle.
      int start = 0;
      while (pending[start] == 0) ++start;
      std::vector<int> walk;
      std::vector<int> position(n, -1);
      int current = start;
      while (position[current] < 0) {
        position[current] = static_cast<int>(walk.size());
        walk.push_back(current);
        for (const std::string& in : graph_.node(current).input()) {
          auto it = producer.find(in);
          if (it != producer.end() && pending[it->second] > 0) {
            current = it->second;
            break;
          }
        }
      }
      std::vector<std::string> cycle;
      for (size_t k = position[current]; k < walk.size(); ++k) cycle.push_back(Describe(walk[k]));
      return absl::InvalidArgumentError(
          absl::StrCat("the graph has a cycle through ", absl::StrJoin(cycle, ", ")));
    }
    return order;
  }

  // A value compiled at its static bound along `axis` whose run-time extent there is `length`
  // (ConvertContext::MarkBounded), with the node that made it, for errors.
  struct BoundedValue {
    int64_t axis;
    Expr length;
    std::string origin;
  };

  // The bounded inputs of `node`, all of one length (bounded_flow.h says which nodes take them
  // and where their axis lands); empty when none is bounded.
  struct BoundedInputs {
    std::vector<onnx_frontend::BoundedOperand> operands;
    std::optional<BoundedValue> value;  // the first operand's
    std::string first_name;
  };

  // What `node` reads of a bounded value, or an error when it may not: a bounded value reaches a
  // subgraph or a function body's nodes without its length, and two of different lengths do not
  // line up.
  absl::StatusOr<BoundedInputs> BoundedInputsOf(const onnx::NodeProto& node, int index,
                                                int depth) const {
    BoundedInputs found;
    for (int k = 0; k < node.input_size(); ++k) {
      auto it = bounded_.find(node.input(k));
      if (it == bounded_.end()) continue;
      if (depth != 0) {
        return BoundedInputError(node, index, k, it->second,
                                 "a function body or subgraph reads it without its length");
      }
      if (found.value && !found.value->length.same_as(it->second.length)) {
        return BoundedInputError(node, index, k, it->second,
                                 absl::StrCat("input '", found.first_name,
                                              "' is bounded by another run-time length"));
      }
      if (!found.value) {
        found.value = it->second;
        found.first_name = node.input(k);
      }
      found.operands.push_back({k, it->second.axis});
    }
    return found;
  }

  absl::Status BoundedInputError(const onnx::NodeProto& node, int index, int k,
                                 const BoundedValue& value, absl::string_view why) const {
    return absl::InvalidArgumentError(absl::StrCat(
        Describe(index), ": input ", k, " ('", node.input(k), "') is ", value.origin,
        "'s output, whose extent along axis ", value.axis,
        " only a run knows (the model declares no static shape for it), and ", why,
        ": declare its shape (value_info or the graph output's type) to compile it with a "
        "checked static extent"));
  }

  // Binds the bounded outputs `node`'s converter marked, and its output 0 when it reads bounded
  // inputs (`read`).
  absl::Status RecordBoundedOutputs(const onnx::NodeProto& node, int index,
                                    const ConvertContext& ctx, const BoundedInputs& read,
                                    const std::vector<Expr>& outputs) {
    std::string origin = absl::StrCat("ONNX node '", NodeSourceName(node, index), "' (",
                                      node.op_type(), ")");
    for (const ConvertContext::BoundedOutput& bounded : ctx.bounded_outputs()) {
      if (bounded.output >= static_cast<size_t>(node.output_size()) ||
          node.output(static_cast<int>(bounded.output)).empty()) {
        continue;  // an output the model does not use
      }
      bounded_[node.output(static_cast<int>(bounded.output))] = {bounded.axis, bounded.length,
                                                                 origin};
    }
    if (!read.value) return absl::OkStatus();
    // One output, or Split's parts, each bounded alike.
    if (node.output_size() != 1 && node.op_type() != "Split") {
      return BoundedInputError(node, index, read.operands[0].input, *read.value,
                               absl::StrCat(node.op_type(), " has ", node.output_size(),
                                            " outputs"));
    }
    for (int k = 0; k < node.output_size() && k < static_cast<int>(outputs.size()); ++k) {
      if (node.output(k).empty()) continue;
      absl::StatusOr<int64_t> axis =
          onnx_frontend::BoundedAxisThrough(ctx, read.operands, outputs[k]);
      if (!axis.ok()) {
        return BoundedInputError(node, index, read.operands[0].input, *read.value,
                                 axis.status().message());
      }
      bounded_[node.output(k)] = {*axis, read.value->length, read.value->origin};
    }
    return absl::OkStatus();
  }

  absl::Status ConvertNode(int index) {
    const onnx::NodeProto& node = graph_.node(index);
    return Convert(node, index, opset_, SpanFor(NodeSourceName(node, index)), 0);
  }

  // `node` (graph node `index`, or a node of the function body it expanded into, `depth`
  // expansions deep) converted with `span`, its outputs bound by name.
  absl::Status Convert(const onnx::NodeProto& node, int index, int64_t opset, const Span& span,
                       int depth) {
    if (++converted_nodes_ > options_.max_graph_nodes) {
      return absl::InvalidArgumentError(
          absl::StrCat("the graph with its operators' function bodies expanded has more than ",
                       options_.max_graph_nodes, " nodes (", Describe(index), ")"));
    }
    std::vector<Expr> inputs;
    inputs.reserve(node.input_size());
    for (const std::string& name : node.input()) {
      if (!name.empty() && !values_.count(name)) {
        return absl::InvalidArgumentError(absl::StrCat(
            Describe(index), ": input '", name, "' of its function body is not defined"));
      }
      inputs.push_back(name.empty() ? Expr() : values_.at(name));
    }
    KILN_ASSIGN_OR_RETURN(BoundedInputs bounded_inputs, BoundedInputsOf(node, index, depth));
    onnx_frontend::Converter converter =
        ConverterTable::Builtin().Find(QualifiedOpType(node.domain(), node.op_type()));
    const bool control_flow = IsDefaultDomain(node.domain()) && onnx_frontend::IsControlFlowOp(node.op_type());
    const bool gradient = onnx_frontend::IsGradientOp(node.domain(), node.op_type());
    if (converter == nullptr && !control_flow && !gradient) {
      return ExpandFunction(node, index, opset, span, depth, inputs);
    }
    ConvertContext ctx(node, index, opset, span, std::move(inputs), options_);
    // Names inside function bodies and subgraphs are not the graph's: its declarations do not
    // apply there.
    if (depth == 0) ctx.set_declared_shapes(&declared_shapes_);
    std::vector<Expr> outputs;
    if (gradient) {
      // It differentiates the graph around it: only the main graph's nodes are at hand here.
      if (depth != 0 || index >= graph_.node_size() || &graph_.node(index) != &node) {
        return ctx.Error("Gradient is supported in the main graph only");
      }
      auto value_of = [&](const std::string& name) {
        auto it = values_.find(name);
        return it == values_.end() ? Expr() : it->second;
      };
      KILN_ASSIGN_OR_RETURN(outputs, onnx_frontend::ConvertGradient(ctx, graph_, value_of));
    } else if (control_flow) {
      if (depth >= kMaxFunctionDepth) {
        return ctx.Error(absl::StrCat("control flow nests more than ", kMaxFunctionDepth, " deep"));
      }
      auto run = [&](const onnx::GraphProto& body, const std::vector<Expr>& body_inputs) {
        return RunSubgraph(body, body_inputs, index, opset, span, depth + 1, ctx);
      };
      KILN_ASSIGN_OR_RETURN(outputs, onnx_frontend::ConvertControlFlow(ctx, run));
      // Each If on a run-time condition is a scope the passes and printers walk recursively.
      if (!outputs.empty() && outputs[0] &&
          (outputs[0].as<IfNode>() != nullptr ||
           (outputs[0].as<TupleGetItemNode>() != nullptr &&
            outputs[0].as<TupleGetItemNode>()->tuple.as<IfNode>() != nullptr)) &&
          ++run_time_ifs_ > onnx_frontend::kMaxRunTimeIfs) {
        return ctx.Error(absl::StrCat("more than ", onnx_frontend::kMaxRunTimeIfs,
                                      " Ifs on conditions known only at run time"));
      }
    } else {
      KILN_ASSIGN_OR_RETURN(outputs, converter(ctx));
    }
    KILN_RETURN_IF_ERROR(RecordBoundedOutputs(node, index, ctx, bounded_inputs, outputs));
    for (int k = 0; k < node.output_size(); ++k) {
      if (node.output(k).empty()) continue;
      if (k >= static_cast<int>(outputs.size()) || !outputs[k]) {
        return ctx.Error(absl::StrCat("output ", k, " ('", node.output(k),
                                      "') is not supported by the converter"));
      }
      // Shapes computed from the model (Reshape, Unsqueeze, Expand) may not
      // grow past the rank any input may have.
      const auto* type = outputs[k]->checked_type.as<TensorTypeNode>();
      if (type != nullptr && type->shape.size() > static_cast<size_t>(kMaxTensorRank)) {
        return ctx.Error(absl::StrCat("output ", k, " has rank ", type->shape.size(),
                                      ", more than the limit of ", kMaxTensorRank));
      }
      values_[node.output(k)] = outputs[k];
    }
    return absl::OkStatus();
  }

  // A subgraph of a control-flow node converted once: its inputs bound, its nodes converted in
  // order with the node's span (the enclosing values visible), its outputs returned. The names
  // it binds are restored afterwards, so an unrolled body may run again.
  absl::StatusOr<std::vector<Expr>> RunSubgraph(const onnx::GraphProto& body,
                                                const std::vector<Expr>& inputs, int index,
                                                int64_t opset, const Span& span, int depth,
                                                const ConvertContext& ctx) {
    if (body.input_size() != static_cast<int>(inputs.size())) {
      return ctx.Error(absl::StrCat("a subgraph takes ", body.input_size(), " inputs, given ",
                                    inputs.size()));
    }
    if (body.initializer_size() > 0 || body.sparse_initializer_size() > 0) {
      return ctx.Error("subgraph initializers are not supported (use Constant nodes)");
    }
    std::vector<std::pair<std::string, std::optional<Expr>>> saved;
    auto save = [&](const std::string& name) {
      auto it = values_.find(name);
      saved.emplace_back(name, it == values_.end() ? std::nullopt : std::optional<Expr>(it->second));
    };
    auto restore = [&] {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
        if (it->second) {
          values_[it->first] = *it->second;
        } else {
          values_.erase(it->first);
        }
      }
    };
    absl::StatusOr<std::vector<Expr>> result = [&]() -> absl::StatusOr<std::vector<Expr>> {
      for (int k = 0; k < body.input_size(); ++k) {
        save(body.input(k).name());
        values_[body.input(k).name()] = inputs[k];
      }
      // A subgraph's nodes carry their own names (`<op_type>_<k>`, k counted in the
      // subgraph, when unnamed); errors still name the graph node holding the subgraph.
      for (int k = 0; k < body.node_size(); ++k) {
        const onnx::NodeProto& inner = body.node(k);
        for (const std::string& out : inner.output()) {
          if (!out.empty()) save(out);
        }
        Span inner_span = span ? SpanFor(NodeSourceName(inner, k)) : span;
        KILN_RETURN_IF_ERROR(Convert(inner, index, opset, inner_span, depth));
      }
      std::vector<Expr> outputs;
      for (const onnx::ValueInfoProto& output : body.output()) {
        auto it = values_.find(output.name());
        if (it == values_.end()) {
          return ctx.Error(absl::StrCat("subgraph output '", output.name(), "' is not produced"));
        }
        // A bounded value would leave the subgraph without its length (and be read padded).
        if (auto bounded = bounded_.find(output.name()); bounded != bounded_.end()) {
          return ctx.Error(absl::StrCat(
              "subgraph output '", output.name(), "' is ", bounded->second.origin,
              "'s output, whose extent along axis ", bounded->second.axis,
              " only a run knows; Kiln compiles such a value only as a graph output: declare its "
              "shape (value_info or the graph output's type)"));
        }
        outputs.push_back(it->second);
      }
      return outputs;
    }();
    restore();
    return result;
  }

  // A node whose op has no converter but an ONNX function body (function_expansion.h): the
  // body's nodes converted in order, every one with the node's span.
  absl::Status ExpandFunction(const onnx::NodeProto& node, int index, int64_t opset,
                              const Span& span, int depth, const std::vector<Expr>& inputs) {
    if (!IsDefaultDomain(node.domain()) || !onnx_frontend::HasFunctionBody(node.op_type(), opset)) {
      return absl::UnimplementedError(absl::StrCat(
          Describe(index), ": its function body uses ", node.op_type(),
          ", which Kiln does not support"));
    }
    if (depth >= kMaxFunctionDepth) {
      return absl::InvalidArgumentError(absl::StrCat(
          Describe(index), ": function bodies nest more than ", kMaxFunctionDepth, " deep"));
    }
    std::vector<Type> input_types;
    for (const Expr& input : inputs) input_types.push_back(input ? input->checked_type : Type());
    std::string prefix = absl::StrCat("kiln", expansions_++, "_");
    absl::StatusOr<onnx_frontend::ExpandedNode> expanded =
        onnx_frontend::ExpandFunctionNode(node, opset, input_types, prefix);
    if (!expanded.ok()) {
      return absl::Status(expanded.status().code(),
                          absl::StrCat(Describe(index), ": ", expanded.status().message()));
    }
    for (const onnx::NodeProto& inner : expanded->body.node()) {
      KILN_RETURN_IF_ERROR(Convert(inner, index, expanded->opset, span, depth + 1));
    }
    for (const std::string& output : node.output()) {
      if (!output.empty() && !values_.count(output)) {
        return absl::InvalidArgumentError(absl::StrCat(
            Describe(index), ": its function body does not produce output '", output, "'"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Function> BuildFunction() {
    std::vector<Expr> outputs;
    std::vector<Expr> lengths;  // of the bounded outputs, in order
    std::vector<Type> output_types;
    std::vector<Span> output_spans;
    for (const onnx::ValueInfoProto& output : graph_.output()) {
      auto it = values_.find(output.name());
      if (it == values_.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph output '", output.name(), "' is not produced by any node"));
      }
      // A sequence or an optional (a tuple) is returned as its tensors, in order; an optional
      // holding a sequence nests one tuple in another.
      std::vector<Expr> values;
      std::vector<std::pair<Expr, int>> pending = {{it->second, 0}};
      while (!pending.empty()) {
        auto [value, depth] = pending.back();
        pending.pop_back();
        const auto* tuple = value->checked_type.as<TupleTypeNode>();
        if (tuple == nullptr) {
          values.push_back(value);
          continue;
        }
        if (depth >= 2) {
          return absl::InvalidArgumentError(absl::StrCat(
              "graph output '", output.name(), "' nests sequences or optionals too deeply"));
        }
        for (size_t i = tuple->fields.size(); i-- > 0;) {  // reversed: popped in order
          pending.emplace_back(MakeRef<TupleGetItemNode>(value, static_cast<int>(i),
                                                         ExprFields{value->span, tuple->fields[i], nullptr}),
                               depth + 1);
        }
      }
      auto bounded = bounded_.find(output.name());
      if (bounded != bounded_.end()) {
        bounded_outputs_.insert(bounded_outputs_.end(),
                                {static_cast<int64_t>(outputs.size()), bounded->second.axis, -1});
        lengths.push_back(bounded->second.length);
      }
      for (const Expr& value : values) {
        outputs.push_back(value);
        output_types.push_back(value->checked_type);
        output_spans.push_back(value->span);
      }
    }
    if (outputs.empty()) return absl::InvalidArgumentError("the graph has no outputs");
    // Each bounded output's length is one more output, after the model's own.
    for (size_t i = 0; i < lengths.size(); ++i) {
      bounded_outputs_[3 * i + 2] = static_cast<int64_t>(outputs.size());
      outputs.push_back(lengths[i]);
      output_types.push_back(lengths[i]->checked_type);
      output_spans.push_back(lengths[i]->span);
    }
    Expr body;
    if (outputs.size() == 1) {
      body = outputs[0];
    } else {
      // The output tuple merges the layers that produce the outputs.
      Span span = options_.span_filling ? MakeSequentialSpan(output_spans) : Span();
      body = MakeRef<TupleNode>(std::move(outputs),
                                ExprFields{span, MakeTupleType(output_types), nullptr});
    }
    std::vector<Var> params = input_params_;
    params.insert(params.end(), weight_params_.begin(), weight_params_.end());
    std::vector<Type> param_types;
    for (const Var& p : params) param_types.push_back(p->type_annotation);
    Type ret = body->checked_type;
    Type func_type = MakeFuncType(std::move(param_types), ret);
    return MakeRef<FunctionNode>(std::move(params), std::move(body), ret, nullptr,
                                 ExprFields{nullptr, func_type, nullptr});
  }

  onnx::GraphProto& graph_;
  int64_t opset_;
  const OnnxImportOptions& options_;
  std::map<std::string, std::vector<int64_t>> declared_shapes_;
  std::unordered_map<std::string, Expr> values_;
  std::unordered_map<std::string, BoundedValue> bounded_;  // by value name (main graph)
  // Per bounded graph output: its index among main's outputs, its axis, and the index of the
  // output main appends for its length.
  std::vector<int64_t> bounded_outputs_;
  int64_t converted_nodes_ = 0;  // graph nodes and the nodes of expanded function bodies
  int64_t run_time_ifs_ = 0;     // Ifs kept as graph `if`s (kMaxRunTimeIfs)
  int64_t expansions_ = 0;       // function bodies expanded so far: unique value-name prefixes
  std::vector<Var> input_params_;
  std::vector<Var> weight_params_;
};

}  // namespace

absl::StatusOr<IRModule> ImportOnnxModel(std::string_view model_bytes,
                                         const OnnxImportOptions& options) {
  if (model_bytes.empty()) {
    return absl::InvalidArgumentError("empty input: expected the bytes of an ONNX ModelProto");
  }
  if (model_bytes.size() > options.max_model_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("model is ", model_bytes.size(),
                                                   " bytes, more than the limit of ",
                                                   options.max_model_bytes));
  }
  if (model_bytes.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError("models over 2 GiB need external data, not supported");
  }
  for (const auto& [name, value] : options.input_values) {
    if (value && value->dtype == DataType::kString) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", name, "': string inputs cannot be given values at import (strings have no "
          "constant form in Kiln)"));
    }
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(model_bytes.data(), static_cast<int>(model_bytes.size()))) {
    return absl::InvalidArgumentError(
        "not an ONNX model: the bytes do not parse as a ModelProto (truncated or another "
        "format)");
  }
  if (!model.has_graph() || model.ir_version() <= 0) {
    return absl::InvalidArgumentError(
        "not an ONNX model: no graph or no ir_version in the ModelProto");
  }
  int64_t opset = -1;
  for (const onnx::OperatorSetIdProto& import : model.opset_import()) {
    if (IsDefaultDomain(import.domain())) opset = import.version();
  }
  if (opset < 0) {
    // A model of only other domains' ops (the training optimizers) needs no default opset.
    const auto& nodes = model.graph().node();
    for (int i = 0; i < nodes.size(); ++i) {
      if (!IsDefaultDomain(nodes[i].domain())) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "the model imports no version of the default ONNX opset, which ONNX node '",
          NodeSourceName(nodes[i], i), "' (#", i, ", ", nodes[i].op_type(), ") uses"));
    }
    opset = 0;
  }
  GraphImporter importer(*model.mutable_graph(), opset, options);
  KILN_ASSIGN_OR_RETURN(Function main, importer.Import());
  std::vector<AttrsNode::Field> attrs;
  if (!model.graph().name().empty()) attrs.emplace_back("name", model.graph().name());
  attrs.emplace_back("opset", opset);
  if (!model.producer_name().empty()) attrs.emplace_back("producer", model.producer_name());
  if (!importer.bounded_outputs().empty()) {
    attrs.emplace_back(std::string(kBoundedOutputsAttr), IntArray(importer.bounded_outputs()));
  }
  return MakeModule({{MakeGlobalVar("main"), main}}, MakeAttrs(std::move(attrs)));
}

std::vector<std::string> SupportedOnnxOps() {
  std::vector<std::string> ops = onnx_frontend::ConverterTable::Builtin().OpTypes();
  for (const char* op : {"If", "Loop", "Scan"}) ops.push_back(op);  // control_flow.h
  ops.push_back(QualifiedOpType(onnx_frontend::kTrainingDomain, "Gradient"));  // gradient.h
  std::sort(ops.begin(), ops.end());
  return ops;
}

std::vector<std::string> FunctionBodyOnnxOps() {
  std::vector<std::string> ops;
  for (const std::string& op : onnx_frontend::FunctionBodyOpTypes()) {
    if (onnx_frontend::ConverterTable::Builtin().Find(op) == nullptr) ops.push_back(op);
  }
  return ops;
}

}  // namespace kiln
