// The recurrent converters: RNN, GRU and LSTM (opset 7 and 14) as a while_loop over the static
// sequence length (one step's graph ops, compiled once), exactly the equations of the ONNX
// operator specs:
//   RNN:  H = f(X W^T + H R^T + Wb + Rb)
//   GRU:  z = f(X Wz^T + H Rz^T + Wbz + Rbz), r likewise,
//         h = g(X Wh^T + (r * H) Rh^T + Rbh + Wbh)     (linear_before_reset = 0)
//         h = g(X Wh^T + r * (H Rh^T + Rbh) + Wbh)     (linear_before_reset = 1)
//         H = (1 - z) * h + z * H
//   LSTM: i = f(X Wi^T + H Ri^T + Pi * C + Wbi + Rbi), f likewise with Pf, c = g(... no peephole),
//         C = f * C + i * c, o = f(X Wo^T + H Ro^T + Po * C + Wbo + Rbo), H = o * h(C)
// (gates in ONNX's orders: GRU z, r, h; LSTM i, o, f, c). The input projection of every step is
// one dense over the whole sequence, before the loop; each step adds a dense of the hidden state
// and the cell's elementwise ops, which FuseOps fuses, and writes its row of Y. Forward, reverse and bidirectional; sequence_lens masks
// steps past a batch entry's length (its state stays, its Y rows are zero; forward only);
// activations with their alpha/beta; clip; layout 0 and 1; LSTM's input_forget.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/while_loop_builder.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

enum class Cell { kRnn, kGru, kLstm };

struct CellInfo {
  const char* op;
  int64_t gates;
  std::vector<std::string> default_activations;  // per direction
};

CellInfo InfoOf(Cell cell) {
  switch (cell) {
    case Cell::kRnn: return {"RNN", 1, {"Tanh"}};
    case Cell::kGru: return {"GRU", 3, {"Sigmoid", "Tanh"}};
    case Cell::kLstm: return {"LSTM", 4, {"Sigmoid", "Tanh", "Tanh"}};
  }
  return {"", 0, {}};
}

// One activation function as ONNX's recurrent ops name it, with its alpha and beta.
struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

// Builds the step graph of one node: every value of X's dtype.
class StepBuilder {
 public:
  StepBuilder(ConvertContext& ctx, DataType dtype) : ctx_(ctx), dtype_(dtype) {}

  Expr Scalar(double value) { return ctx_.Constant(ScalarTensor(dtype_, value)); }

  absl::StatusOr<Expr> Zeros(int64_t rows, int64_t columns) {
    int64_t bytes = rows * columns * static_cast<int64_t>(DataTypeBytes(dtype_));
    KILN_RETURN_IF_ERROR(ctx_.ChargeBytes(bytes, "the zero initial state"));
    return ctx_.Constant(MakeTensorData(dtype_, {rows, columns}, std::string(bytes, '\0')));
  }

  absl::StatusOr<Expr> Binary(const char* op, const Expr& a, const Expr& b) {
    return ctx_.Call(op, {a, b});
  }

  // x[begin:end] along `axis`. A constant's rows (a weight's direction or gates) are sliced
  // here, so the loop body reads a constant its kernels are specialized for (a packed weight)
  // rather than a loop parameter.
  absl::StatusOr<Expr> Slice(const Expr& x, int64_t axis, int64_t begin, int64_t end) {
    if (const auto* constant = x.as<ConstantNode>(); constant != nullptr && axis == 0) {
      const TensorData& data = constant->data;
      if (!data->shape.empty() && 0 <= begin && begin <= end && end <= data->shape[0]) {
        const size_t row_bytes = data->bytes.size() / std::max<int64_t>(data->shape[0], 1);
        std::vector<int64_t> shape = data->shape;
        shape[0] = end - begin;
        KILN_RETURN_IF_ERROR(ctx_.ChargeBytes(
            static_cast<int64_t>((end - begin) * row_bytes), "a recurrent weight's rows"));
        return ctx_.Constant(MakeTensorData(
            data->dtype, std::move(shape), data->bytes.substr(begin * row_bytes, (end - begin) * row_bytes)));
      }
    }
    return ctx_.Call("strided_slice", {x},
                     MakeAttrs({{"begin", IntArray({begin})},
                                {"end", IntArray({end})},
                                {"strides", IntArray({1})},
                                {"axes", IntArray({axis})}}));
  }

  // x[index] along axis 0, that axis dropped.
  absl::StatusOr<Expr> Row(const Expr& x, int64_t index) {
    KILN_ASSIGN_OR_RETURN(Expr row, Slice(x, 0, index, index + 1));
    if (const auto* constant = row.as<ConstantNode>()) {
      std::vector<int64_t> shape(constant->data->shape.begin() + 1, constant->data->shape.end());
      return ctx_.Constant(MakeTensorData(constant->data->dtype, std::move(shape), constant->data->bytes));
    }
    return ctx_.Call("squeeze", {row}, MakeAttrs({{"axis", IntArray({0})}}));
  }

  absl::StatusOr<Expr> Dense(const Expr& x, const Expr& weight) {
    return ctx_.Call("nn.dense", {x, weight});
  }

  absl::StatusOr<Expr> Clip(const Expr& x, std::optional<double> clip) {
    if (!clip) return x;
    return ctx_.Call("clip", {x}, MakeAttrs({{"a_min", -*clip}, {"a_max", *clip}}));
  }

  absl::StatusOr<Expr> Apply(const Activation& f, const Expr& x) {
    const std::string& name = f.name;
    if (name == "Tanh") return ctx_.Call("tanh", {x});
    if (name == "Sigmoid") return ctx_.Call("sigmoid", {x});
    if (name == "Relu") return ctx_.Call("nn.relu", {x});
    if (name == "Softplus") return ctx_.Call("softplus", {x});
    if (name == "Affine") {  // alpha * x + beta
      KILN_ASSIGN_OR_RETURN(Expr scaled, Binary("multiply", x, Scalar(f.alpha)));
      return Binary("add", scaled, Scalar(f.beta));
    }
    if (name == "LeakyRelu") {
      return ctx_.Call("nn.leaky_relu", {x}, MakeAttrs({{"alpha", f.alpha}}));
    }
    if (name == "ThresholdedRelu") {  // x when x > alpha, else 0
      KILN_ASSIGN_OR_RETURN(Expr above, Binary("greater", x, Scalar(f.alpha)));
      return ctx_.Call("where", {above, x, Scalar(0)});
    }
    if (name == "ScaledTanh") {  // alpha * tanh(beta * x)
      KILN_ASSIGN_OR_RETURN(Expr scaled, Binary("multiply", x, Scalar(f.beta)));
      KILN_ASSIGN_OR_RETURN(Expr t, ctx_.Call("tanh", {scaled}));
      return Binary("multiply", t, Scalar(f.alpha));
    }
    if (name == "HardSigmoid") {  // clip(alpha * x + beta, 0, 1)
      KILN_ASSIGN_OR_RETURN(Expr scaled, Binary("multiply", x, Scalar(f.alpha)));
      KILN_ASSIGN_OR_RETURN(Expr shifted, Binary("add", scaled, Scalar(f.beta)));
      return ctx_.Call("clip", {shifted}, MakeAttrs({{"a_min", 0.0}, {"a_max", 1.0}}));
    }
    if (name == "Elu") {  // x when x >= 0, else alpha * (exp(x) - 1)
      KILN_ASSIGN_OR_RETURN(Expr e, ctx_.Call("exp", {x}));
      KILN_ASSIGN_OR_RETURN(Expr em1, Binary("subtract", e, Scalar(1)));
      KILN_ASSIGN_OR_RETURN(Expr negative, Binary("multiply", em1, Scalar(f.alpha)));
      KILN_ASSIGN_OR_RETURN(Expr nonnegative, Binary("greater_equal", x, Scalar(0)));
      return ctx_.Call("where", {nonnegative, x, negative});
    }
    if (name == "Softsign") {  // x / (1 + |x|)
      KILN_ASSIGN_OR_RETURN(Expr a, ctx_.Call("abs", {x}));
      KILN_ASSIGN_OR_RETURN(Expr d, Binary("add", a, Scalar(1)));
      return Binary("divide", x, d);
    }
    return ctx_.Error(absl::StrCat("activation '", name, "' is not one ONNX defines for ",
                                   "recurrent ops (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ",
                                   "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, ",
                                   "Softplus)"));
  }

  ConvertContext& ctx() { return ctx_; }

 private:
  ConvertContext& ctx_;
  DataType dtype_;
};

// The activations of each direction, with ONNX's defaults for alpha and beta; the alpha and
// beta lists are consumed in order by the activations that take them.
absl::StatusOr<std::vector<std::vector<Activation>>> ReadActivations(ConvertContext& ctx,
                                                                     const CellInfo& info,
                                                                     int64_t directions) {
  const size_t per_direction = info.default_activations.size();
  KILN_ASSIGN_OR_RETURN(std::vector<std::string> names, [&]() -> absl::StatusOr<std::vector<std::string>> {
    const onnx::AttributeProto* attr = ctx.FindAttr("activations");
    if (attr == nullptr) return std::vector<std::string>{};
    return std::vector<std::string>(attr->strings().begin(), attr->strings().end());
  }());
  if (names.empty()) {
    for (int64_t d = 0; d < directions; ++d) {
      names.insert(names.end(), info.default_activations.begin(), info.default_activations.end());
    }
  } else if (names.size() == per_direction && directions == 2) {
    names.insert(names.end(), names.begin(), names.end());
  } else if (names.size() != per_direction * directions) {
    return ctx.Error(absl::StrCat("attribute 'activations' has ", names.size(), " entries, expected ",
                                  per_direction * directions, " (", per_direction,
                                  " per direction)"));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<float> alphas,
                        ctx.FloatsAttr("activation_alpha", std::vector<float>{}));
  KILN_ASSIGN_OR_RETURN(std::vector<float> betas,
                        ctx.FloatsAttr("activation_beta", std::vector<float>{}));
  size_t next_alpha = 0, next_beta = 0;
  std::vector<std::vector<Activation>> result(directions);
  for (size_t i = 0; i < names.size(); ++i) {
    Activation f{names[i]};
    // ONNX's defaults: LeakyRelu 0.01, ThresholdedRelu 1, HardSigmoid 0.2/0.5, Elu 1,
    // Affine and ScaledTanh need theirs given (1 and 0 / 1 and 1 here).
    double default_alpha = f.name == "LeakyRelu" ? 0.01 : f.name == "HardSigmoid" ? 0.2 : 1.0;
    double default_beta = f.name == "HardSigmoid" ? 0.5 : f.name == "Affine" ? 0.0 : 1.0;
    bool takes_alpha = f.name == "LeakyRelu" || f.name == "ThresholdedRelu" ||
                       f.name == "HardSigmoid" || f.name == "Elu" || f.name == "Affine" ||
                       f.name == "ScaledTanh";
    bool takes_beta = f.name == "HardSigmoid" || f.name == "Affine" || f.name == "ScaledTanh";
    f.alpha = takes_alpha && next_alpha < alphas.size() ? alphas[next_alpha++] : default_alpha;
    f.beta = takes_beta && next_beta < betas.size() ? betas[next_beta++] : default_beta;
    result[i / per_direction].push_back(f);
  }
  return result;
}

// A weight input's static shape checked against what the op needs; `what` names it.
absl::Status ExpectShape(ConvertContext& ctx, size_t input, const char* what,
                         const std::vector<int64_t>& expected) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, ctx.InputTensorType(input));
  std::vector<int64_t> dims;
  for (const auto& d : t->shape) dims.push_back(d.is_static() ? d.value : -1);
  if (dims != expected) {
    return ctx.Error(absl::StrCat("input ", input, " (", what, ") has shape [",
                                  absl::StrJoin(dims, ", "), "], expected [",
                                  absl::StrJoin(expected, ", "), "]"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Expr>> ConvertRecurrent(ConvertContext& ctx, Cell cell) {
  const CellInfo info = InfoOf(cell);
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  if (!IsFloat(tx->dtype)) return ctx.Error("X must be a float tensor");
  if (tx->shape.size() != 3) return ctx.Error("X must have rank 3");
  for (const auto& d : tx->shape) {
    if (!d.is_static()) return ctx.Error("X must have a static shape (Y has one row per step)");
  }
  KILN_ASSIGN_OR_RETURN(int64_t layout, ctx.IntAttr("layout", 0));
  if (layout != 0 && layout != 1) return ctx.Error("attribute 'layout' must be 0 or 1");
  const int64_t steps = tx->shape[layout == 0 ? 0 : 1].value;
  const int64_t batch = tx->shape[layout == 0 ? 1 : 0].value;
  const int64_t input_size = tx->shape[2].value;
  KILN_ASSIGN_OR_RETURN(std::string direction, ctx.StringAttr("direction", "forward"));
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return ctx.Error(absl::StrCat("attribute 'direction' is '", direction,
                                  "', expected forward, reverse or bidirectional"));
  }
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tr, ctx.InputTensorType(2));
  if (tr->shape.size() != 3 || !tr->shape[2].is_static()) {
    return ctx.Error("R must be a static 3-D tensor [directions, gates x hidden, hidden]");
  }
  const int64_t hidden = tr->shape[2].value;
  KILN_ASSIGN_OR_RETURN(int64_t hidden_attr, ctx.IntAttr("hidden_size", hidden));
  if (hidden_attr != hidden) {
    return ctx.Error(absl::StrCat("attribute 'hidden_size' is ", hidden_attr,
                                  ", but R's last axis is ", hidden));
  }
  const int64_t gh = info.gates * hidden;
  KILN_RETURN_IF_ERROR(ExpectShape(ctx, 1, "W", {directions, gh, input_size}));
  KILN_RETURN_IF_ERROR(ExpectShape(ctx, 2, "R", {directions, gh, hidden}));
  if (ctx.HasInput(3)) {
    KILN_RETURN_IF_ERROR(ExpectShape(ctx, 3, "B", {directions, 2 * gh}));
  }
  // The initial states are [directions, batch, hidden], or with layout 1 [batch, directions,
  // hidden] (as Y_h and Y_c are).
  const std::vector<int64_t> state_shape =
      layout == 0 ? std::vector<int64_t>{directions, batch, hidden}
                  : std::vector<int64_t>{batch, directions, hidden};
  if (ctx.HasInput(5)) {
    KILN_RETURN_IF_ERROR(ExpectShape(ctx, 5, "initial_h", state_shape));
  }
  if (cell == Cell::kLstm && ctx.HasInput(6)) {
    KILN_RETURN_IF_ERROR(ExpectShape(ctx, 6, "initial_c", state_shape));
  }
  if (cell == Cell::kLstm && ctx.HasInput(7)) {
    KILN_RETURN_IF_ERROR(ExpectShape(ctx, 7, "P", {directions, 3 * hidden}));
  }
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (i == 4 || !ctx.HasInput(i)) continue;
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, ctx.InputTensorType(i));
    if (t->dtype != tx->dtype) return ctx.Error(absl::StrCat("input ", i, " must have X's dtype"));
  }
  KILN_ASSIGN_OR_RETURN(auto activations, ReadActivations(ctx, info, directions));
  std::optional<double> clip;
  if (ctx.HasAttr("clip")) {
    KILN_ASSIGN_OR_RETURN(double c, ctx.FloatAttr("clip", std::nullopt));
    clip = c;
  }
  KILN_ASSIGN_OR_RETURN(int64_t linear_before_reset, ctx.IntAttr("linear_before_reset", 0));
  KILN_ASSIGN_OR_RETURN(int64_t input_forget, ctx.IntAttr("input_forget", 0));

  StepBuilder u(ctx, tx->dtype);
  if (layout == 1) {
    KILN_ASSIGN_OR_RETURN(x, ctx.Call("transpose", {x}, MakeAttrs({{"axes", IntArray({1, 0, 2})}})));
  }
  // sequence_lens as a [batch, 1] int64 column, compared with each step's index.
  std::optional<Expr> lengths;
  if (ctx.HasInput(4)) {
    if (direction != "forward") {
      return ctx.Error("sequence_lens is supported with direction 'forward' only");
    }
    KILN_RETURN_IF_ERROR(ExpectShape(ctx, 4, "sequence_lens", {batch}));
    KILN_ASSIGN_OR_RETURN(Expr lens, ctx.Input(4));
    KILN_ASSIGN_OR_RETURN(lens, ctx.Call("cast", {lens}, MakeAttrs({{"dtype", DataType::kInt64}})));
    KILN_ASSIGN_OR_RETURN(lens, ctx.Call("expand_dims", {lens},
                                         MakeAttrs({{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}})));
    lengths = lens;
  }
  KILN_ASSIGN_OR_RETURN(Expr w_all, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(Expr r_all, ctx.Input(2));
  KILN_ASSIGN_OR_RETURN(Expr flat_x, ctx.Call("reshape", {x}, MakeAttrs({{"newshape", IntArray({steps * batch, input_size})}})));

  // Per direction: Y (every step's hidden state, in time order) and the last states.
  std::vector<Expr> ys_by_direction, last_h, last_c;
  for (int64_t d = 0; d < directions; ++d) {
    const std::vector<Activation>& fs = activations[d];
    KILN_ASSIGN_OR_RETURN(Expr w, u.Row(w_all, d));
    KILN_ASSIGN_OR_RETURN(Expr r, u.Row(r_all, d));
    // Every step's input projection at once: (steps x batch, input) W^T + Wb.
    KILN_ASSIGN_OR_RETURN(Expr xw, u.Dense(flat_x, w));
    std::optional<Expr> rb;
    if (ctx.HasInput(3)) {
      KILN_ASSIGN_OR_RETURN(Expr b_all, ctx.Input(3));
      KILN_ASSIGN_OR_RETURN(Expr b, u.Row(b_all, d));
      KILN_ASSIGN_OR_RETURN(Expr wb, u.Slice(b, 0, 0, gh));
      KILN_ASSIGN_OR_RETURN(rb, u.Slice(b, 0, gh, 2 * gh));
      KILN_ASSIGN_OR_RETURN(xw, u.Binary("add", xw, wb));
    }
    KILN_ASSIGN_OR_RETURN(xw, ctx.Call("reshape", {xw}, MakeAttrs({{"newshape", IntArray({steps, batch, gh})}})));
    // Direction d's initial state, [batch, hidden].
    auto initial_state = [&](size_t input) -> absl::StatusOr<Expr> {
      KILN_ASSIGN_OR_RETURN(Expr all, ctx.Input(input));
      if (layout == 1) {
        KILN_ASSIGN_OR_RETURN(all, ctx.Call("transpose", {all},
                                            MakeAttrs({{"axes", IntArray({1, 0, 2})}})));
      }
      return u.Row(all, d);
    };
    Expr h, c;
    if (ctx.HasInput(5)) {
      KILN_ASSIGN_OR_RETURN(h, initial_state(5));
    } else {
      KILN_ASSIGN_OR_RETURN(h, u.Zeros(batch, hidden));
    }
    if (cell == Cell::kLstm) {
      if (ctx.HasInput(6)) {
        KILN_ASSIGN_OR_RETURN(c, initial_state(6));
      } else {
        KILN_ASSIGN_OR_RETURN(c, u.Zeros(batch, hidden));
      }
    }
    Expr pi, po, pf;
    if (cell == Cell::kLstm && ctx.HasInput(7)) {
      KILN_ASSIGN_OR_RETURN(Expr p_all, ctx.Input(7));
      KILN_ASSIGN_OR_RETURN(Expr p, u.Row(p_all, d));
      KILN_ASSIGN_OR_RETURN(pi, u.Slice(p, 0, 0, hidden));
      KILN_ASSIGN_OR_RETURN(po, u.Slice(p, 0, hidden, 2 * hidden));
      KILN_ASSIGN_OR_RETURN(pf, u.Slice(p, 0, 2 * hidden, 3 * hidden));
    }
    // GRU's candidate reads the recurrent weight and bias of its third gate apart.
    Expr r_zr, r_h, rb_zr, rb_h;
    if (cell == Cell::kGru) {
      KILN_ASSIGN_OR_RETURN(r_zr, u.Slice(r, 0, 0, 2 * hidden));
      KILN_ASSIGN_OR_RETURN(r_h, u.Slice(r, 0, 2 * hidden, gh));
      if (rb) {
        KILN_ASSIGN_OR_RETURN(rb_zr, u.Slice(*rb, 0, 0, 2 * hidden));
        KILN_ASSIGN_OR_RETURN(rb_h, u.Slice(*rb, 0, 2 * hidden, gh));
      }
    }
    auto gate = [&](const Expr& all, int64_t k) { return u.Slice(all, 1, k * hidden, (k + 1) * hidden); };
    // The steps run as a while_loop (compiled once, whatever the sequence length): the state is
    // h (and c), and Y gets the step's row; step i reads time t = i, or steps - 1 - i in reverse.
    WhileLoopBuilder loop(ctx);
    KILN_ASSIGN_OR_RETURN(Var h_state, loop.AddState("h", h, "the hidden state"));
    Var c_state;
    if (cell == Cell::kLstm) {
      KILN_ASSIGN_OR_RETURN(c_state, loop.AddState("c", c, "the cell state"));
    }
    const bool reverse = direction == "reverse" || d == 1;
    KILN_ASSIGN_OR_RETURN(Expr t, StepIndex(ctx, loop.iteration(), steps, reverse));
    KILN_ASSIGN_OR_RETURN(Expr xt, ctx.Call("take", {xw, t}, MakeAttrs({{"axis", int64_t{0}}})));
    h = h_state;
    c = c_state;
    Expr h_new, c_new;
    if (cell == Cell::kRnn) {
      KILN_ASSIGN_OR_RETURN(Expr hr, u.Dense(h, r));
      KILN_ASSIGN_OR_RETURN(Expr a, u.Binary("add", xt, hr));
      if (rb) {
        KILN_ASSIGN_OR_RETURN(a, u.Binary("add", a, *rb));
      }
      KILN_ASSIGN_OR_RETURN(a, u.Clip(a, clip));
      KILN_ASSIGN_OR_RETURN(h_new, u.Apply(fs[0], a));
    } else if (cell == Cell::kGru) {
      KILN_ASSIGN_OR_RETURN(Expr hr, u.Dense(h, r_zr));
      if (rb) {
        KILN_ASSIGN_OR_RETURN(hr, u.Binary("add", hr, rb_zr));
      }
      KILN_ASSIGN_OR_RETURN(Expr x_zr, u.Slice(xt, 1, 0, 2 * hidden));
      KILN_ASSIGN_OR_RETURN(Expr zr, u.Binary("add", x_zr, hr));
      KILN_ASSIGN_OR_RETURN(zr, u.Clip(zr, clip));
      KILN_ASSIGN_OR_RETURN(zr, u.Apply(fs[0], zr));
      KILN_ASSIGN_OR_RETURN(Expr z, gate(zr, 0));
      KILN_ASSIGN_OR_RETURN(Expr rg, gate(zr, 1));
      KILN_ASSIGN_OR_RETURN(Expr x_h, gate(xt, 2));
      Expr recurrent;
      if (linear_before_reset != 0) {
        KILN_ASSIGN_OR_RETURN(recurrent, u.Dense(h, r_h));
        if (rb) {
          KILN_ASSIGN_OR_RETURN(recurrent, u.Binary("add", recurrent, rb_h));
        }
        KILN_ASSIGN_OR_RETURN(recurrent, u.Binary("multiply", rg, recurrent));
      } else {
        KILN_ASSIGN_OR_RETURN(Expr reset, u.Binary("multiply", rg, h));
        KILN_ASSIGN_OR_RETURN(recurrent, u.Dense(reset, r_h));
        if (rb) {
          KILN_ASSIGN_OR_RETURN(recurrent, u.Binary("add", recurrent, rb_h));
        }
      }
      KILN_ASSIGN_OR_RETURN(Expr a, u.Binary("add", x_h, recurrent));
      KILN_ASSIGN_OR_RETURN(a, u.Clip(a, clip));
      KILN_ASSIGN_OR_RETURN(Expr candidate, u.Apply(fs[1], a));
      // (1 - z) * candidate + z * h
      KILN_ASSIGN_OR_RETURN(Expr keep, u.Binary("subtract", u.Scalar(1), z));
      KILN_ASSIGN_OR_RETURN(Expr fresh, u.Binary("multiply", keep, candidate));
      KILN_ASSIGN_OR_RETURN(Expr kept, u.Binary("multiply", z, h));
      KILN_ASSIGN_OR_RETURN(h_new, u.Binary("add", fresh, kept));
    } else {
      KILN_ASSIGN_OR_RETURN(Expr hr, u.Dense(h, r));
      KILN_ASSIGN_OR_RETURN(Expr a, u.Binary("add", xt, hr));
      if (rb) {
        KILN_ASSIGN_OR_RETURN(a, u.Binary("add", a, *rb));
      }
      KILN_ASSIGN_OR_RETURN(Expr ai, gate(a, 0));
      KILN_ASSIGN_OR_RETURN(Expr ao, gate(a, 1));
      KILN_ASSIGN_OR_RETURN(Expr af, gate(a, 2));
      KILN_ASSIGN_OR_RETURN(Expr ac, gate(a, 3));
      if (pi.defined()) {
        KILN_ASSIGN_OR_RETURN(Expr peep_i, u.Binary("multiply", pi, c));
        KILN_ASSIGN_OR_RETURN(ai, u.Binary("add", ai, peep_i));
        KILN_ASSIGN_OR_RETURN(Expr peep_f, u.Binary("multiply", pf, c));
        KILN_ASSIGN_OR_RETURN(af, u.Binary("add", af, peep_f));
      }
      KILN_ASSIGN_OR_RETURN(ai, u.Clip(ai, clip));
      KILN_ASSIGN_OR_RETURN(Expr i_gate, u.Apply(fs[0], ai));
      Expr f_gate;
      if (input_forget != 0) {
        KILN_ASSIGN_OR_RETURN(f_gate, u.Binary("subtract", u.Scalar(1), i_gate));
      } else {
        KILN_ASSIGN_OR_RETURN(af, u.Clip(af, clip));
        KILN_ASSIGN_OR_RETURN(f_gate, u.Apply(fs[0], af));
      }
      KILN_ASSIGN_OR_RETURN(ac, u.Clip(ac, clip));
      KILN_ASSIGN_OR_RETURN(Expr candidate, u.Apply(fs[1], ac));
      KILN_ASSIGN_OR_RETURN(Expr kept, u.Binary("multiply", f_gate, c));
      KILN_ASSIGN_OR_RETURN(Expr fresh, u.Binary("multiply", i_gate, candidate));
      KILN_ASSIGN_OR_RETURN(c_new, u.Binary("add", kept, fresh));
      if (po.defined()) {
        KILN_ASSIGN_OR_RETURN(Expr peep_o, u.Binary("multiply", po, c_new));
        KILN_ASSIGN_OR_RETURN(ao, u.Binary("add", ao, peep_o));
      }
      KILN_ASSIGN_OR_RETURN(ao, u.Clip(ao, clip));
      KILN_ASSIGN_OR_RETURN(Expr o_gate, u.Apply(fs[0], ao));
      KILN_ASSIGN_OR_RETURN(Expr hc, u.Apply(fs[2], c_new));
      KILN_ASSIGN_OR_RETURN(h_new, u.Binary("multiply", o_gate, hc));
    }
    Expr y_t = h_new;
    if (lengths) {
      // Past its length a batch entry keeps its state and outputs zeros.
      KILN_ASSIGN_OR_RETURN(Expr live, u.Binary("less", t, *lengths));
      KILN_ASSIGN_OR_RETURN(y_t, ctx.Call("where", {live, h_new, u.Scalar(0)}));
      KILN_ASSIGN_OR_RETURN(h_new, ctx.Call("where", {live, h_new, h}));
      if (cell == Cell::kLstm) {
        KILN_ASSIGN_OR_RETURN(c_new, ctx.Call("where", {live, c_new, c}));
      }
    }
    KILN_RETURN_IF_ERROR(loop.SetNext(2, h_new, "the hidden state"));
    if (cell == Cell::kLstm) {
      KILN_RETURN_IF_ERROR(loop.SetNext(3, c_new, "the cell state"));
    }
    KILN_RETURN_IF_ERROR(loop.AddAccumulator("y", steps, y_t, t, "Y"));
    KILN_ASSIGN_OR_RETURN(Expr next_cond,
                          loop.NextBelow(ctx.Constant(ScalarTensor(DataType::kInt64, steps))));
    KILN_ASSIGN_OR_RETURN(
        Expr state, loop.Build(ctx.Constant(ScalarTensor(DataType::kBool, steps > 0)), next_cond));
    const int states = cell == Cell::kLstm ? 2 : 1;
    KILN_ASSIGN_OR_RETURN(Expr last, ctx.TupleGetItem(state, 2));
    last_h.push_back(last);
    if (cell == Cell::kLstm) {
      KILN_ASSIGN_OR_RETURN(last, ctx.TupleGetItem(state, 3));
      last_c.push_back(last);
    }
    KILN_ASSIGN_OR_RETURN(Expr y, ctx.TupleGetItem(state, 2 + states));
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("expand_dims", {y}, MakeAttrs({{"axis", int64_t{1}},
                                                                     {"num_newaxis", int64_t{1}}})));
    ys_by_direction.push_back(y);  // [steps, 1, batch, hidden]
  }

  // [directions, batch, hidden] from one [batch, hidden] per direction.
  auto stack = [&](const std::vector<Expr>& parts) -> absl::StatusOr<Expr> {
    std::vector<Expr> expanded;
    for (const Expr& part : parts) {
      KILN_ASSIGN_OR_RETURN(Expr e, ctx.Call("expand_dims", {part},
                                             MakeAttrs({{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}})));
      expanded.push_back(e);
    }
    if (expanded.size() == 1) return expanded[0];
    return ctx.Call("concatenate", std::move(expanded), MakeAttrs({{"axis", int64_t{0}}}));
  };
  Expr y = ys_by_direction[0];  // [steps, directions, batch, hidden]
  if (directions > 1) {
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("concatenate", ys_by_direction,
                                      MakeAttrs({{"axis", int64_t{1}}})));
  }
  KILN_ASSIGN_OR_RETURN(Expr y_h, stack(last_h));
  std::vector<Expr> outputs = {y, y_h};
  if (cell == Cell::kLstm) {
    KILN_ASSIGN_OR_RETURN(Expr y_c, stack(last_c));
    outputs.push_back(y_c);
  }
  if (layout == 1) {  // [batch, steps, directions, hidden] and [batch, directions, hidden]
    KILN_ASSIGN_OR_RETURN(outputs[0], ctx.Call("transpose", {outputs[0]},
                                               MakeAttrs({{"axes", IntArray({2, 0, 1, 3})}})));
    for (size_t i = 1; i < outputs.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(outputs[i], ctx.Call("transpose", {outputs[i]},
                                                 MakeAttrs({{"axes", IntArray({1, 0, 2})}})));
    }
  }
  outputs.resize(std::min<size_t>(outputs.size(), ctx.node().output_size()));
  return outputs;
}

absl::StatusOr<std::vector<Expr>> ConvertRnn(ConvertContext& ctx) {
  return ConvertRecurrent(ctx, Cell::kRnn);
}
absl::StatusOr<std::vector<Expr>> ConvertGru(ConvertContext& ctx) {
  return ConvertRecurrent(ctx, Cell::kGru);
}
absl::StatusOr<std::vector<Expr>> ConvertLstm(ConvertContext& ctx) {
  return ConvertRecurrent(ctx, Cell::kLstm);
}

}  // namespace

void RegisterRecurrentConverters(ConverterTable& table) {
  table.Add("RNN", ConvertRnn);
  table.Add("GRU", ConvertGru);
  table.Add("LSTM", ConvertLstm);
}

}  // namespace kiln::onnx_frontend
