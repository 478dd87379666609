// Random tensors drawn at import: ONNX's RandomUniform, RandomNormal and their -Like forms,
// Bernoulli (through its function body) and training-mode Dropout's mask.
//
// Kiln compiles deterministic artifacts, so a random operator's values are drawn once, when the
// model is compiled, from a stream fixed by the node's `seed` attribute, and every run of the
// compiled model sees the same values (as a traced graph's random tensors are fixed). The stream
// is NumPy's legacy generator (`numpy.random.seed(s)`: MT19937 seeded by init_genrand, 53-bit
// doubles, the polar Box-Muller method for normals), so the values an ONNX test computes with
// NumPy from a fixed seed are the values Kiln computes. Without a seed the stream's seed comes
// from the node's first output name (FNV-1a): different nodes draw different values, and the
// same model always compiles to the same ones.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

// NumPy's legacy RandomState for a 32-bit seed.
class NumpyLegacyRandom {
 public:
  explicit NumpyLegacyRandom(uint32_t seed) : mt_(seed) {}

  // random_sample(): a double in [0, 1) from two 32-bit draws.
  double Uniform();
  // standard_normal(): the polar method; each pair of accepted draws gives two values.
  double Gauss();

 private:
  std::mt19937 mt_;
  bool has_gauss_ = false;
  double gauss_ = 0;
};

// The node's stream seed: its `seed` attribute (a float in ONNX) truncated and taken modulo
// 2^32, or, without one, a hash of its first output's name.
absl::StatusOr<uint32_t> NodeSeed(const ConvertContext& ctx);

struct RandomDistribution {
  enum class Kind { kUniform, kNormal } kind = Kind::kUniform;
  double a = 0, b = 1;  // uniform: [low, high); normal: mean, scale
};

// A float64 constant of `shape` drawn from the node's stream (size checked against the import's
// limits and charged to its budget before it is allocated).
absl::StatusOr<Expr> RandomConstant(ConvertContext& ctx, const std::vector<int64_t>& shape,
                                    const RandomDistribution& distribution);

// The static dims of input 0, whose shape random values are drawn for; an error when symbolic.
absl::StatusOr<std::vector<int64_t>> DrawShapeOfInput0(const ConvertContext& ctx);

}  // namespace kiln::onnx_frontend
