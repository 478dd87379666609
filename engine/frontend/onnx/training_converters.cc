// The optimizers of the `ai.onnx.preview.training` domain (Adagrad, Adam, Momentum) as
// elementwise graph ops: one update of n tensors per node, its inputs R (learning rate), T (the
// update count, int64) and then n tensors per role (X..., G..., then the optimizer's state),
// its outputs the new X... and the new state, in the formulas of the ONNX operator specs.
// T is a run-time value: the branches it selects (the first update's learning rate and
// momentum coefficient) are both computed and chosen with `where`.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// The inputs and output count of one optimizer node: R, T, then `roles` groups of n tensors.
struct OptimizerOperands {
  Expr rate;           // R, a scalar of the tensors' float type
  Expr step;           // T cast to R's type
  Expr step_is_first;  // T <= 0: the spec's "T > 0" test negated
  DataType dtype = DataType::kFloat32;
  int n = 0;
  // groups[role][i]: the i-th tensor of that role (X, G, then state).
  std::vector<std::vector<Expr>> groups;
};

absl::StatusOr<OptimizerOperands> ReadOperands(ConvertContext& ctx, int roles, int outputs_per_tensor) {
  int tensor_inputs = static_cast<int>(ctx.num_inputs()) - 2;
  if (tensor_inputs < roles || tensor_inputs % roles != 0) {
    return ctx.Error(absl::StrCat("expected R, T and ", roles, " groups of n tensors (",
                                  roles, "n inputs after R and T), got ", tensor_inputs,
                                  " inputs after R and T"));
  }
  OptimizerOperands operands;
  operands.n = tensor_inputs / roles;
  if (ctx.node().output_size() != outputs_per_tensor * operands.n) {
    return ctx.Error(absl::StrCat("expected ", outputs_per_tensor * operands.n, " outputs (",
                                  outputs_per_tensor, " per optimized tensor), got ",
                                  ctx.node().output_size()));
  }
  KILN_ASSIGN_OR_RETURN(operands.rate, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* rate_type, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* step_type, ctx.InputTensorType(1));
  if (!rate_type->shape.empty() || !step_type->shape.empty()) {
    return ctx.Error("inputs R and T must be scalars (rank 0)");
  }
  if (rate_type->dtype != DataType::kFloat32 && rate_type->dtype != DataType::kFloat64) {
    return ctx.Error("input R must be float32 or float64");
  }
  if (step_type->dtype != DataType::kInt64) return ctx.Error("input T must be int64");
  operands.dtype = rate_type->dtype;
  KILN_ASSIGN_OR_RETURN(Expr step, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(operands.step,
                        ctx.Call("cast", {step}, MakeAttrs({{"dtype", operands.dtype}})));
  KILN_ASSIGN_OR_RETURN(operands.step_is_first,
                        ctx.Call("less_equal", {step, ctx.Constant(ScalarTensor(DataType::kInt64, 0))}));
  operands.groups.resize(roles);
  for (int role = 0; role < roles; ++role) {
    for (int i = 0; i < operands.n; ++i) {
      KILN_ASSIGN_OR_RETURN(Expr tensor, ctx.Input(2 + role * operands.n + i));
      operands.groups[role].push_back(tensor);
    }
  }
  return operands;
}

// Arithmetic on one node's values, each call typed and spanned through the context.
class Arithmetic {
 public:
  Arithmetic(ConvertContext& ctx, DataType dtype) : ctx_(ctx), dtype_(dtype) {}
  Expr Scalar(double v) { return ctx_.Constant(ScalarTensor(dtype_, v)); }
  absl::StatusOr<Expr> operator()(const char* op, Expr a, Expr b) { return ctx_.Call(op, {a, b}); }
  absl::StatusOr<Expr> Sqrt(Expr a) { return ctx_.Call("sqrt", {a}); }
  absl::StatusOr<Expr> Where(Expr c, Expr a, Expr b) { return ctx_.Call("where", {c, a, b}); }

 private:
  ConvertContext& ctx_;
  DataType dtype_;
};

// norm_coefficient * X + G: the gradient of the L2 regularization term added.
absl::StatusOr<Expr> RegularizedGradient(Arithmetic& f, double norm_coefficient, Expr x, Expr g) {
  KILN_ASSIGN_OR_RETURN(Expr decay, f("multiply", f.Scalar(norm_coefficient), x));
  return f("add", decay, g);
}

// r = R / (1 + T * decay_factor); G' = norm_coefficient * X + G; H_new = H + G' * G';
// X_new = X - r * G' / (sqrt(H_new) + epsilon).
absl::StatusOr<std::vector<Expr>> ConvertAdagrad(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(OptimizerOperands in, ReadOperands(ctx, 3, 2));
  KILN_ASSIGN_OR_RETURN(double decay_factor, ctx.FloatAttr("decay_factor", 0.0f));
  KILN_ASSIGN_OR_RETURN(double epsilon, ctx.FloatAttr("epsilon", 0.0f));
  KILN_ASSIGN_OR_RETURN(double norm_coefficient, ctx.FloatAttr("norm_coefficient", 0.0f));
  Arithmetic f(ctx, in.dtype);
  KILN_ASSIGN_OR_RETURN(Expr decayed_steps, f("multiply", in.step, f.Scalar(decay_factor)));
  KILN_ASSIGN_OR_RETURN(Expr divisor, f("add", f.Scalar(1), decayed_steps));
  KILN_ASSIGN_OR_RETURN(Expr rate, f("divide", in.rate, divisor));
  std::vector<Expr> x_new, h_new;
  for (int i = 0; i < in.n; ++i) {
    Expr x = in.groups[0][i], g = in.groups[1][i], h = in.groups[2][i];
    KILN_ASSIGN_OR_RETURN(Expr gr, RegularizedGradient(f, norm_coefficient, x, g));
    KILN_ASSIGN_OR_RETURN(Expr gr2, f("multiply", gr, gr));
    KILN_ASSIGN_OR_RETURN(Expr h1, f("add", h, gr2));
    KILN_ASSIGN_OR_RETURN(Expr root, f.Sqrt(h1));
    KILN_ASSIGN_OR_RETURN(Expr scale, f("add", root, f.Scalar(epsilon)));
    KILN_ASSIGN_OR_RETURN(Expr step, f("multiply", rate, gr));
    KILN_ASSIGN_OR_RETURN(Expr update, f("divide", step, scale));
    KILN_ASSIGN_OR_RETURN(Expr x1, f("subtract", x, update));
    x_new.push_back(x1);
    h_new.push_back(h1);
  }
  x_new.insert(x_new.end(), h_new.begin(), h_new.end());
  return x_new;
}

// G' = norm_coefficient * X + G; V_new = alpha * V + beta' * G' (beta' = 1 at T = 0);
// standard: X_new = X - R * V_new; nesterov: X_new = X - R * (G' + alpha * V_new).
absl::StatusOr<std::vector<Expr>> ConvertMomentum(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(OptimizerOperands in, ReadOperands(ctx, 3, 2));
  KILN_ASSIGN_OR_RETURN(double alpha, ctx.FloatAttr("alpha", std::nullopt));
  KILN_ASSIGN_OR_RETURN(double beta, ctx.FloatAttr("beta", std::nullopt));
  KILN_ASSIGN_OR_RETURN(double norm_coefficient, ctx.FloatAttr("norm_coefficient", std::nullopt));
  std::string mode;
  KILN_ASSIGN_OR_RETURN(mode, ctx.StringAttr("mode", std::nullopt));
  if (mode != "standard" && mode != "nesterov") {
    return ctx.Error(absl::StrCat("attribute 'mode' is '", mode,
                                  "'; expected 'standard' or 'nesterov'"));
  }
  Arithmetic f(ctx, in.dtype);
  KILN_ASSIGN_OR_RETURN(Expr gradient_coefficient,
                        f.Where(in.step_is_first, f.Scalar(1), f.Scalar(beta)));
  std::vector<Expr> x_new, v_new;
  for (int i = 0; i < in.n; ++i) {
    Expr x = in.groups[0][i], g = in.groups[1][i], v = in.groups[2][i];
    KILN_ASSIGN_OR_RETURN(Expr gr, RegularizedGradient(f, norm_coefficient, x, g));
    KILN_ASSIGN_OR_RETURN(Expr kept, f("multiply", f.Scalar(alpha), v));
    KILN_ASSIGN_OR_RETURN(Expr added, f("multiply", gradient_coefficient, gr));
    KILN_ASSIGN_OR_RETURN(Expr v1, f("add", kept, added));
    Expr direction = v1;
    if (mode == "nesterov") {
      KILN_ASSIGN_OR_RETURN(Expr ahead, f("multiply", f.Scalar(alpha), v1));
      KILN_ASSIGN_OR_RETURN(direction, f("add", gr, ahead));
    }
    KILN_ASSIGN_OR_RETURN(Expr update, f("multiply", in.rate, direction));
    KILN_ASSIGN_OR_RETURN(Expr x1, f("subtract", x, update));
    x_new.push_back(x1);
    v_new.push_back(v1);
  }
  x_new.insert(x_new.end(), v_new.begin(), v_new.end());
  return x_new;
}

// G' = norm_coefficient * X + G; V_new = alpha * V + (1 - alpha) * G';
// H_new = beta * H + (1 - beta) * G'^2; R' = R * sqrt(1 - beta^T) / (1 - alpha^T) for T > 0,
// else R; X_new = (1 - norm_coefficient_post) * (X - R' * V_new / (sqrt(H_new) + epsilon)).
absl::StatusOr<std::vector<Expr>> ConvertAdam(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(OptimizerOperands in, ReadOperands(ctx, 4, 3));
  KILN_ASSIGN_OR_RETURN(double alpha, ctx.FloatAttr("alpha", 0.9f));
  KILN_ASSIGN_OR_RETURN(double beta, ctx.FloatAttr("beta", 0.999f));
  KILN_ASSIGN_OR_RETURN(double epsilon, ctx.FloatAttr("epsilon", 1e-6f));
  KILN_ASSIGN_OR_RETURN(double norm_coefficient, ctx.FloatAttr("norm_coefficient", 0.0f));
  KILN_ASSIGN_OR_RETURN(double norm_coefficient_post, ctx.FloatAttr("norm_coefficient_post", 0.0f));
  Arithmetic f(ctx, in.dtype);
  // The bias-corrected rate; at T = 0 its divisor is 0, and `where` keeps R instead.
  KILN_ASSIGN_OR_RETURN(Expr beta_t, f("power", f.Scalar(beta), in.step));
  KILN_ASSIGN_OR_RETURN(Expr alpha_t, f("power", f.Scalar(alpha), in.step));
  KILN_ASSIGN_OR_RETURN(Expr beta_rest, f("subtract", f.Scalar(1), beta_t));
  KILN_ASSIGN_OR_RETURN(Expr alpha_rest, f("subtract", f.Scalar(1), alpha_t));
  KILN_ASSIGN_OR_RETURN(Expr root, f.Sqrt(beta_rest));
  KILN_ASSIGN_OR_RETURN(Expr scaled_rate, f("multiply", in.rate, root));
  KILN_ASSIGN_OR_RETURN(Expr corrected_rate, f("divide", scaled_rate, alpha_rest));
  KILN_ASSIGN_OR_RETURN(Expr rate, f.Where(in.step_is_first, in.rate, corrected_rate));
  std::vector<Expr> x_new, v_new, h_new;
  for (int i = 0; i < in.n; ++i) {
    Expr x = in.groups[0][i], g = in.groups[1][i], v = in.groups[2][i], h = in.groups[3][i];
    KILN_ASSIGN_OR_RETURN(Expr gr, RegularizedGradient(f, norm_coefficient, x, g));
    KILN_ASSIGN_OR_RETURN(Expr v_kept, f("multiply", f.Scalar(alpha), v));
    KILN_ASSIGN_OR_RETURN(Expr v_added, f("multiply", f.Scalar(1 - alpha), gr));
    KILN_ASSIGN_OR_RETURN(Expr v1, f("add", v_kept, v_added));
    KILN_ASSIGN_OR_RETURN(Expr gr2, f("multiply", gr, gr));
    KILN_ASSIGN_OR_RETURN(Expr h_kept, f("multiply", f.Scalar(beta), h));
    KILN_ASSIGN_OR_RETURN(Expr h_added, f("multiply", f.Scalar(1 - beta), gr2));
    KILN_ASSIGN_OR_RETURN(Expr h1, f("add", h_kept, h_added));
    KILN_ASSIGN_OR_RETURN(Expr h_root, f.Sqrt(h1));
    KILN_ASSIGN_OR_RETURN(Expr scale, f("add", h_root, f.Scalar(epsilon)));
    KILN_ASSIGN_OR_RETURN(Expr direction, f("divide", v1, scale));
    KILN_ASSIGN_OR_RETURN(Expr update, f("multiply", rate, direction));
    KILN_ASSIGN_OR_RETURN(Expr x1, f("subtract", x, update));
    if (norm_coefficient_post != 0) {
      KILN_ASSIGN_OR_RETURN(x1, f("multiply", f.Scalar(1 - norm_coefficient_post), x1));
    }
    x_new.push_back(x1);
    v_new.push_back(v1);
    h_new.push_back(h1);
  }
  x_new.insert(x_new.end(), v_new.begin(), v_new.end());
  x_new.insert(x_new.end(), h_new.begin(), h_new.end());
  return x_new;
}

}  // namespace

void RegisterTrainingConverters(ConverterTable& table) {
  table.Add(QualifiedOpType(kTrainingDomain, "Adagrad"), ConvertAdagrad);
  table.Add(QualifiedOpType(kTrainingDomain, "Adam"), ConvertAdam);
  table.Add(QualifiedOpType(kTrainingDomain, "Momentum"), ConvertMomentum);
}

}  // namespace kiln::onnx_frontend
