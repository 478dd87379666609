// Einsum as graph ops: the equation parsed (spaces ignored; "..." broadcast dimensions; the
// implicit output of ONNX's spec when "->" is absent: the ellipsis dimensions, then the labels
// that appear once, in alphabetical order), then per operand its repeated labels reduced to
// their diagonal (times an identity, summed) and the labels no one else needs summed away;
// operands are then combined left to right, each pair as one batched nn.matmul over
// [shared kept labels, left-only labels, contracted labels] x [shared, contracted, right-only],
// and the result transposed into the output's order.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// A subscript label: 0-51 for A-Z and a-z (ASCII order, the implicit output's), 52 + k for the k-th broadcast (ellipsis) dimension.
using Label = int;
constexpr Label kFirstEllipsisLabel = 52;

struct Operand {
  Expr value;
  std::vector<Label> labels;  // one per axis
};

struct Equation {
  std::vector<std::vector<Label>> inputs;
  std::vector<Label> output;
};

absl::StatusOr<Label> LetterLabel(ConvertContext& ctx, char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return ctx.Error(absl::StrCat("equation has '", std::string(1, c),
                                "', expected letters, ',', '->' and '...'"));
}

// One term's labels; an ellipsis stands for the trailing `ellipsis_rank` broadcast labels of
// `max_ellipsis` (broadcast dimensions align to the right).
absl::StatusOr<std::vector<Label>> ParseTerm(ConvertContext& ctx, const std::string& term,
                                             int64_t rank, int64_t max_ellipsis,
                                             int64_t* ellipsis_rank) {
  std::vector<Label> letters_before, letters_after;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term[i] == '.') {
      if (seen_ellipsis || term.compare(i, 3, "...") != 0) {
        return ctx.Error(absl::StrCat("term '", term, "' has a '.' outside one '...'"));
      }
      seen_ellipsis = true;
      i += 2;
      continue;
    }
    KILN_ASSIGN_OR_RETURN(Label label, LetterLabel(ctx, term[i]));
    (seen_ellipsis ? letters_after : letters_before).push_back(label);
  }
  int64_t letters = static_cast<int64_t>(letters_before.size() + letters_after.size());
  int64_t ellipsis = seen_ellipsis ? rank - letters : 0;
  if (rank >= 0 && (ellipsis < 0 || (!seen_ellipsis && letters != rank))) {
    return ctx.Error(absl::StrCat("term '", term, "' has ", letters, " labels for an input of rank ",
                                  rank));
  }
  if (ellipsis_rank != nullptr) *ellipsis_rank = ellipsis;
  std::vector<Label> labels = letters_before;
  for (int64_t k = 0; k < ellipsis; ++k) {
    labels.push_back(kFirstEllipsisLabel + static_cast<Label>(max_ellipsis - ellipsis + k));
  }
  labels.insert(labels.end(), letters_after.begin(), letters_after.end());
  return labels;
}

absl::StatusOr<Equation> ParseEquation(ConvertContext& ctx, std::string text,
                                       const std::vector<int64_t>& ranks) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  std::vector<std::string> sides = absl::StrSplit(text, "->");
  if (sides.size() > 2) return ctx.Error("equation has more than one '->'");
  std::vector<std::string> terms = absl::StrSplit(sides[0], ',');
  if (terms.size() != ranks.size()) {
    return ctx.Error(absl::StrCat("equation has ", terms.size(), " input terms for ", ranks.size(),
                                  " inputs"));
  }
  // The broadcast rank: the most dimensions any term's ellipsis covers.
  int64_t max_ellipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    int64_t ellipsis = 0;
    KILN_RETURN_IF_ERROR(ParseTerm(ctx, terms[i], ranks[i], 0, &ellipsis).status());
    max_ellipsis = std::max(max_ellipsis, ellipsis);
  }
  Equation eq;
  for (size_t i = 0; i < terms.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(std::vector<Label> labels,
                          ParseTerm(ctx, terms[i], ranks[i], max_ellipsis, nullptr));
    eq.inputs.push_back(std::move(labels));
  }
  if (sides.size() == 2) {
    KILN_ASSIGN_OR_RETURN(eq.output, ParseTerm(ctx, sides[1], -1, max_ellipsis, nullptr));
    if (sides[1].find("...") != std::string::npos) {
      // The output's ellipsis is the whole broadcast rank.
      std::vector<Label> output;
      for (Label label : eq.output) {
        if (label >= kFirstEllipsisLabel) continue;
        output.push_back(label);
      }
      std::string before = sides[1].substr(0, sides[1].find("..."));
      std::vector<Label> full(output.begin(), output.begin() + static_cast<long>(before.size()));
      for (int64_t k = 0; k < max_ellipsis; ++k) full.push_back(kFirstEllipsisLabel + static_cast<Label>(k));
      full.insert(full.end(), output.begin() + static_cast<long>(before.size()), output.end());
      eq.output = full;
    }
    std::set<Label> seen;
    for (Label label : eq.output) {
      if (!seen.insert(label).second) return ctx.Error("the output term repeats a label");
    }
  } else {
    std::map<Label, int> count;
    for (const auto& labels : eq.inputs) {
      for (Label label : labels) ++count[label];
    }
    for (int64_t k = 0; k < max_ellipsis; ++k) eq.output.push_back(kFirstEllipsisLabel + static_cast<Label>(k));
    for (const auto& [label, n] : count) {
      if (n == 1 && label < kFirstEllipsisLabel) eq.output.push_back(label);
    }
  }
  return eq;
}

class EinsumBuilder {
 public:
  EinsumBuilder(ConvertContext& ctx, DataType dtype) : ctx_(ctx), dtype_(dtype) {}

  // The extent of each label, checked to agree across operands.
  absl::Status RecordExtents(const Operand& op, const TensorTypeNode* type) {
    for (size_t axis = 0; axis < op.labels.size(); ++axis) {
      if (!type->shape[axis].is_static()) return ctx_.Error("inputs must have static shapes");
      int64_t extent = type->shape[axis].value;
      auto [it, inserted] = extents_.emplace(op.labels[axis], extent);
      if (!inserted && it->second != extent) {
        return ctx_.Error(absl::StrCat("a label has extent ", it->second, " in one place and ",
                                       extent, " in another"));
      }
    }
    return absl::OkStatus();
  }

  // `op` with a repeated label reduced to its diagonal, until no label repeats.
  absl::StatusOr<Operand> Diagonals(Operand op) {
    for (;;) {
      size_t first = 0, second = 0;
      for (size_t i = 0; i < op.labels.size() && second == 0; ++i) {
        for (size_t j = i + 1; j < op.labels.size(); ++j) {
          if (op.labels[i] == op.labels[j]) {
            first = i, second = j;
            break;
          }
        }
      }
      if (second == 0) return op;
      // x * I (an identity over the two axes, 1 elsewhere), summed over the second axis.
      int64_t n = extents_.at(op.labels[first]);
      int64_t bytes = n * n * DataTypeBytes(dtype_);
      KILN_RETURN_IF_ERROR(ctx_.ChargeBytes(bytes, "the diagonal's identity"));
      std::vector<int64_t> shape(op.labels.size(), 1);
      shape[first] = shape[second] = n;
      Expr identity = ctx_.Constant(IdentityTensor(n, shape));
      KILN_ASSIGN_OR_RETURN(op.value, ctx_.Call("multiply", {op.value, identity}));
      KILN_ASSIGN_OR_RETURN(op.value, Sum(op.value, {static_cast<int64_t>(second)}));
      op.labels.erase(op.labels.begin() + static_cast<long>(second));
    }
  }

  // `op` with the labels not in `keep` summed away.
  absl::StatusOr<Operand> SumAllBut(Operand op, const std::set<Label>& keep) {
    std::vector<int64_t> axes;
    std::vector<Label> kept;
    for (size_t i = 0; i < op.labels.size(); ++i) {
      if (keep.count(op.labels[i])) {
        kept.push_back(op.labels[i]);
      } else {
        axes.push_back(static_cast<int64_t>(i));
      }
    }
    if (axes.empty()) return op;
    KILN_ASSIGN_OR_RETURN(op.value, Sum(op.value, axes));
    op.labels = kept;
    return op;
  }

  // a x b over their shared labels: those in `keep` stay (a batch), the others are contracted.
  absl::StatusOr<Operand> Contract(const Operand& a, const Operand& b, const std::set<Label>& keep) {
    std::set<Label> in_a(a.labels.begin(), a.labels.end()), in_b(b.labels.begin(), b.labels.end());
    std::vector<Label> batch, a_only, contracted, b_only;
    for (Label label : a.labels) {
      if (!in_b.count(label)) {
        a_only.push_back(label);
      } else if (keep.count(label)) {
        batch.push_back(label);
      } else {
        contracted.push_back(label);
      }
    }
    for (Label label : b.labels) {
      if (!in_a.count(label)) b_only.push_back(label);
    }
    KILN_ASSIGN_OR_RETURN(Expr lhs, Arrange(a, {batch, a_only, contracted}));
    KILN_ASSIGN_OR_RETURN(Expr rhs, Arrange(b, {batch, contracted, b_only}));
    KILN_ASSIGN_OR_RETURN(Expr product, ctx_.Call("nn.matmul", {lhs, rhs}));
    Operand result;
    result.labels = batch;
    result.labels.insert(result.labels.end(), a_only.begin(), a_only.end());
    result.labels.insert(result.labels.end(), b_only.begin(), b_only.end());
    KILN_ASSIGN_OR_RETURN(result.value, Reshape(product, Extents(result.labels)));
    return result;
  }

  // `op` transposed into `order` (the same labels).
  absl::StatusOr<Expr> Transpose(const Operand& op, const std::vector<Label>& order) {
    std::vector<int64_t> axes;
    for (Label label : order) {
      axes.push_back(std::find(op.labels.begin(), op.labels.end(), label) - op.labels.begin());
    }
    bool identity = true;
    for (size_t i = 0; i < axes.size(); ++i) identity = identity && axes[i] == static_cast<int64_t>(i);
    if (identity) return op.value;
    return ctx_.Call("transpose", {op.value}, MakeAttrs({{"axes", IntArray(axes)}}));
  }

 private:
  TensorData IdentityTensor(int64_t n, std::vector<int64_t> shape) {
    std::string bytes(static_cast<size_t>(n * n * DataTypeBytes(dtype_)), '\0');
    TensorData one = ScalarTensor(dtype_, 1.0);
    const std::string& one_bytes = one->bytes;
    for (int64_t i = 0; i < n; ++i) {
      bytes.replace(static_cast<size_t>((i * n + i) * DataTypeBytes(dtype_)), one_bytes.size(),
                    one_bytes);
    }
    return MakeTensorData(dtype_, std::move(shape), std::move(bytes));
  }

  std::vector<int64_t> Extents(const std::vector<Label>& labels) const {
    std::vector<int64_t> out;
    for (Label label : labels) out.push_back(extents_.at(label));
    return out;
  }

  int64_t Product(const std::vector<Label>& labels) const {
    int64_t product = 1;
    for (Label label : labels) product *= extents_.at(label);
    return product;
  }

  absl::StatusOr<Expr> Sum(const Expr& x, std::vector<int64_t> axes) {
    return ctx_.Call("sum", {x}, MakeAttrs({{"axis", IntArray(axes)}, {"keepdims", false}}));
  }

  absl::StatusOr<Expr> Reshape(const Expr& x, std::vector<int64_t> shape) {
    return ctx_.Call("reshape", {x}, MakeAttrs({{"newshape", IntArray(shape)}}));
  }

  // `op` transposed to the groups' labels in order and reshaped to one axis per group.
  absl::StatusOr<Expr> Arrange(const Operand& op, const std::vector<std::vector<Label>>& groups) {
    std::vector<Label> order;
    std::vector<int64_t> shape;
    for (const auto& group : groups) {
      order.insert(order.end(), group.begin(), group.end());
      shape.push_back(Product(group));
    }
    KILN_ASSIGN_OR_RETURN(Expr arranged, Transpose(op, order));
    return Reshape(arranged, shape);
  }

  ConvertContext& ctx_;
  DataType dtype_;
  std::map<Label, int64_t> extents_;
};

absl::StatusOr<std::vector<Expr>> ConvertEinsum(ConvertContext& ctx) {
  if (ctx.num_inputs() == 0) return ctx.Error("Einsum needs at least one input");
  std::vector<int64_t> ranks;
  std::vector<const TensorTypeNode*> types;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, ctx.InputTensorType(i));
    if (i > 0 && t->dtype != types[0]->dtype) return ctx.Error("inputs must have one dtype");
    types.push_back(t);
    ranks.push_back(static_cast<int64_t>(t->shape.size()));
  }
  KILN_ASSIGN_OR_RETURN(std::string text, ctx.StringAttr("equation", std::nullopt));
  KILN_ASSIGN_OR_RETURN(Equation eq, ParseEquation(ctx, text, ranks));
  EinsumBuilder builder(ctx, types[0]->dtype);
  std::vector<Operand> operands;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(Expr value, ctx.Input(i));
    Operand op{value, eq.inputs[i]};
    KILN_RETURN_IF_ERROR(builder.RecordExtents(op, types[i]));
    operands.push_back(std::move(op));
  }
  std::set<Label> output(eq.output.begin(), eq.output.end());
  for (Label label : eq.output) {
    bool found = false;
    for (const auto& labels : eq.inputs) {
      found = found || std::find(labels.begin(), labels.end(), label) != labels.end();
    }
    if (!found) return ctx.Error("the output has a label no input has");
  }
  // The labels operands after `i` or the output still need.
  auto needed_after = [&](size_t i) {
    std::set<Label> needed = output;
    for (size_t j = i + 1; j < operands.size(); ++j) {
      needed.insert(operands[j].labels.begin(), operands[j].labels.end());
    }
    return needed;
  };
  Operand result;
  for (size_t i = 0; i < operands.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Operand op, builder.Diagonals(operands[i]));
    std::set<Label> needed = needed_after(i);
    if (i == 0) {
      KILN_ASSIGN_OR_RETURN(result, builder.SumAllBut(op, needed));
      continue;
    }
    // Labels only one side has and nothing later needs are summed before the product.
    std::set<Label> keep_result = needed, keep_op = needed;
    keep_result.insert(op.labels.begin(), op.labels.end());
    keep_op.insert(result.labels.begin(), result.labels.end());
    KILN_ASSIGN_OR_RETURN(result, builder.SumAllBut(result, keep_result));
    KILN_ASSIGN_OR_RETURN(op, builder.SumAllBut(op, keep_op));
    KILN_ASSIGN_OR_RETURN(result, builder.Contract(result, op, needed));
  }
  KILN_ASSIGN_OR_RETURN(result, builder.SumAllBut(result, output));
  KILN_ASSIGN_OR_RETURN(Expr out, builder.Transpose(result, eq.output));
  return std::vector<Expr>{out};
}

}  // namespace

void RegisterEinsumConverter(ConverterTable& table) { table.Add("Einsum", ConvertEinsum); }

}  // namespace kiln::onnx_frontend
