// See random_values.h. Also the converters of RandomUniform, RandomNormal, RandomUniformLike and
// RandomNormalLike.
#include "engine/frontend/onnx/random_values.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {

double NumpyLegacyRandom::Uniform() {
  const uint32_t a = mt_() >> 5, b = mt_() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double NumpyLegacyRandom::Gauss() {
  if (has_gauss_) {
    has_gauss_ = false;
    return gauss_;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * Uniform() - 1.0;
    x2 = 2.0 * Uniform() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  has_gauss_ = true;
  gauss_ = f * x1;
  return f * x2;
}

absl::StatusOr<uint32_t> NodeSeed(const ConvertContext& ctx) {
  if (ctx.HasAttr("seed")) {
    KILN_ASSIGN_OR_RETURN(double seed, ctx.FloatAttr("seed", std::nullopt));
    if (!std::isfinite(seed) || std::abs(seed) >= 9.2e18) {
      return ctx.Error(absl::StrCat("attribute 'seed' is ", seed, ", expected a finite number"));
    }
    return static_cast<uint32_t>(static_cast<uint64_t>(static_cast<int64_t>(seed)));
  }
  const std::string& name = ctx.node().output_size() > 0 ? ctx.node().output(0) : ctx.node().name();
  uint32_t hash = 2166136261u;
  for (unsigned char c : name) hash = (hash ^ c) * 16777619u;
  return hash;
}

absl::StatusOr<Expr> RandomConstant(ConvertContext& ctx, const std::vector<int64_t>& shape,
                                    const RandomDistribution& distribution) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && count > ctx.options().max_tensor_elements / d)) {
      return ctx.Error(absl::StrCat("a random tensor of shape ", DimsString(shape),
                                    " is over the limit of ", ctx.options().max_tensor_elements,
                                    " elements"));
    }
    count *= d;
  }
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(count * int64_t{sizeof(double)}, "the random values"));
  KILN_ASSIGN_OR_RETURN(uint32_t seed, NodeSeed(ctx));
  NumpyLegacyRandom stream(seed);
  std::string bytes(static_cast<size_t>(count) * sizeof(double), '\0');
  double* values = reinterpret_cast<double*>(bytes.data());
  for (int64_t i = 0; i < count; ++i) {
    values[i] = distribution.kind == RandomDistribution::Kind::kUniform
                    ? distribution.a + (distribution.b - distribution.a) * stream.Uniform()
                    : distribution.a + distribution.b * stream.Gauss();
  }
  return ctx.Constant(MakeTensorData(DataType::kFloat64, shape, std::move(bytes)));
}

absl::StatusOr<std::vector<int64_t>> DrawShapeOfInput0(const ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* input, ctx.InputTensorType(0));
  std::vector<int64_t> shape;
  for (const Dim& d : input->shape) {
    if (!d.is_static()) {
      return ctx.Error(
          "input 0 has a symbolic shape; random values are drawn at compile time for a static "
          "shape");
    }
    shape.push_back(d.value);
  }
  return shape;
}

namespace {

// RandomUniform / RandomNormal (shape from the attribute) and their -Like forms (shape, and
// dtype unless given, from input 0).
absl::StatusOr<std::vector<Expr>> ConvertRandom(ConvertContext& ctx, RandomDistribution::Kind kind,
                                                bool like) {
  std::vector<int64_t> shape;
  DataType dtype = DataType::kFloat32;
  if (like) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* input, ctx.InputTensorType(0));
    KILN_ASSIGN_OR_RETURN(shape, DrawShapeOfInput0(ctx));
    dtype = input->dtype;
  } else {
    KILN_ASSIGN_OR_RETURN(shape, ctx.IntsAttr("shape", std::nullopt));
  }
  if (ctx.HasAttr("dtype")) {
    KILN_ASSIGN_OR_RETURN(int64_t code, ctx.IntAttr("dtype", std::nullopt));
    absl::StatusOr<DataType> given = DataTypeFromOnnx(static_cast<int32_t>(code));
    if (!given.ok())
      return ctx.Error(absl::StrCat("attribute 'dtype': ", given.status().message()));
    dtype = *given;
  }
  if (dtype != DataType::kFloat16 && dtype != DataType::kBFloat16 && dtype != DataType::kFloat32 &&
      dtype != DataType::kFloat64) {
    return ctx.Error(absl::StrCat("dtype is ", DataTypeName(dtype),
                                  ", expected float16, bfloat16, float32 or float64"));
  }
  RandomDistribution distribution;
  distribution.kind = kind;
  if (kind == RandomDistribution::Kind::kUniform) {
    KILN_ASSIGN_OR_RETURN(distribution.a, ctx.FloatAttr("low", 0.0f));
    KILN_ASSIGN_OR_RETURN(distribution.b, ctx.FloatAttr("high", 1.0f));
  } else {
    KILN_ASSIGN_OR_RETURN(distribution.a, ctx.FloatAttr("mean", 0.0f));
    KILN_ASSIGN_OR_RETURN(distribution.b, ctx.FloatAttr("scale", 1.0f));
  }
  KILN_ASSIGN_OR_RETURN(Expr values, RandomConstant(ctx, shape, distribution));
  if (dtype != DataType::kFloat64) {
    KILN_ASSIGN_OR_RETURN(values, ctx.Call("cast", {values}, MakeAttrs({{"dtype", dtype}})));
  }
  return std::vector<Expr>{values};
}

}  // namespace

void RegisterRandomConverters(ConverterTable& table) {
  using Kind = RandomDistribution::Kind;
  table.Add("RandomUniform",
            [](ConvertContext& ctx) { return ConvertRandom(ctx, Kind::kUniform, false); });
  table.Add("RandomNormal",
            [](ConvertContext& ctx) { return ConvertRandom(ctx, Kind::kNormal, false); });
  table.Add("RandomUniformLike",
            [](ConvertContext& ctx) { return ConvertRandom(ctx, Kind::kUniform, true); });
  table.Add("RandomNormalLike",
            [](ConvertContext& ctx) { return ConvertRandom(ctx, Kind::kNormal, true); });
}

}  // namespace kiln::onnx_frontend
