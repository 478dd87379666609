// ONNX models the integration tests send, built with ONNX's protobuf API:
// a small residual CNN that compiles in milliseconds, the ResNet-50-sized
// model of the benchmarks for work that must take a while, and broken ones.
#pragma once

#include <cstdint>
#include <string>

namespace kiln::testing {

// input[1,3,8,8] -> Conv(3->4, 3x3, pad 1) "conv" -> Relu "relu" -> Add "residual" (with the
// conv output) -> output. `scale` multiplies every weight (distinct models, distinct compile ids).
std::string SmallModel(float scale = 1.0f);
// ~100 MB, ~1 s to compile (bench/resnet_model.h).
std::string ResNet50Model();
// The small model with a NonMaxSuppression node, which Kiln does not implement.
std::string UnsupportedOpModel();
// Conv whose weight has 5 input channels for a 3-channel input.
std::string ShapeMismatchModel();

// s[1] "at" of a float sequence input "s" (its element shapes come with the request) -> y.
std::string SequenceInputModel();

// input[1,512] -> Gemm "dense0" (a 1 MiB weight) -> Relu "relu0" -> Gemm "dense1" -> output: a
// classifier whose second weight the first layer's kernel can fetch ahead (native code).
std::string ClassifierModel();

// cond (bool[1]), input[1,64] -> If "branch" (then: Relu "then_relu", else: Neg "else_neg") ->
// output: a condition known only at run time.
std::string BranchModel();

// trips (int64 scalar), input[1,64] -> Loop "repeat" of `trips` iterations (body: Tanh
// "step_tanh" of the carried value) -> output: a loop known only at run time.
std::string LoopModel();

// x[N, 2] (N an ONNX dim_param) -> Mul "double" by 2 -> Add "shift" 1 -> ReduceSum "row_sum"
// over axis 1 -> y[N]: a batch known only at run time, each row on its own.
std::string BatchRowSumModel();

// x[S, 2] (S an ONNX dim_param) -> Relu "relu" -> ReduceSum "column_sum" over axis 0 -> y[2]:
// a symbolic dim summed over (no batch), compiled over its value.
std::string ColumnSumModel();

// x[3, 4] -> NonZero "nonzero" -> Transpose "transpose" -> y, y's type undeclared: torch.nonzero's
// export, a bounded output of 12 rows and its length.
std::string NonZeroModel();

// Models an attacker would send: a few hundred bytes each.
// ConstantOfShape([elements]) of float 1 "fill" -> ReduceMax "max" -> output.
std::string ConstantOfShapeModel(int64_t elements);
// Range(0, limit, 1) of int64 "range" -> ReduceMax "max" -> output.
std::string RangeModel(int64_t limit);
// A float input of `rank` dimensions, all 1 -> Relu -> output.
std::string HighRankInputModel(int rank);
// ConstantOfShape([elements]) float "fill", then `adds` Add nodes "add_K"
// each adding the previous result to itself: FoldConstant folds every one.
std::string RepeatedFoldingModel(int64_t elements, int adds);
// ConstantOfShape([n, n]) "fill" -> MatMul "square" (fill x fill) -> output:
// folding it takes n^3 multiply-adds in the interpreter (seconds for n=2048).
std::string SlowFoldingModel(int64_t n);

}  // namespace kiln::testing
