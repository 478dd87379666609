// Hand-built graph IR shared by the printer's unit and golden tests. Each function builds a
// small module exercising one part of docs/graph-text-format.md; the expected texts live in the
// tests (computed by hand from the format document) and in tests/golden/printer/.
#pragma once

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine/ir/module.h"

namespace kiln::testing {

inline Type F32(std::initializer_list<int64_t> shape) {
  return MakeTensorType(shape, DataType::kFloat32);
}

inline Call CallOp(std::string_view op, std::vector<Expr> args, Attrs attrs = nullptr,
                   const char* span = nullptr) {
  return MakeCall(GetOp(op), std::move(args), std::move(attrs), span ? MakeSpan(span) : Span());
}

inline Constant FloatTensor(std::vector<int64_t> shape, const std::vector<float>& values,
                            Span span = nullptr) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return MakeConstant(MakeTensorData(DataType::kFloat32, std::move(shape), std::move(bytes)),
                      std::move(span));
}

// The format document's first example: conv, relu, add of a scalar constant.
inline IRModule ConvReluModule() {
  Var x = MakeVar("x", F32({1, 3, 224, 224}), MakeSpan("input"));
  Var w = MakeVar("w", F32({64, 3, 7, 7}));
  Call conv = CallOp(
      "nn.conv2d", {x, w},
      MakeAttrs({{"strides", IntArray({2, 2})}, {"padding", IntArray({3, 3, 3, 3})}}), "conv1");
  Call relu = CallOp("nn.relu", {conv}, nullptr, "relu1");
  Call add = CallOp("add", {relu, MakeConstant(MakeScalar(1.0f))}, nullptr, "add1");
  return MakeModuleFromMain(MakeFunction({x, w}, add, F32({1, 64, 112, 112})));
}

// `length` chained relus on one parameter, each with a span: the 20,000-node test graph.
inline IRModule ChainModule(int length) {
  Var x = MakeVar("x", F32({1, 8}));
  Expr current = x;
  for (int i = 0; i < length; ++i) current = CallOp("nn.relu", {current}, nullptr, "relu");
  return MakeModuleFromMain(MakeFunction({x}, current));
}

// `length` nested lets, each binding the previous variable plus one: a let chain.
inline IRModule LetChainModule(int length) {
  Var x = MakeVar("x", F32({4}));
  std::vector<Var> vars;
  std::vector<Expr> values;
  Expr previous = x;
  for (int i = 0; i < length; ++i) {
    vars.push_back(MakeVar("v"));
    values.push_back(CallOp("add", {previous, previous}));
    previous = vars.back();
  }
  Expr body = previous;
  for (int i = length - 1; i >= 0; --i) body = MakeLet(vars[i], values[i], body);
  return MakeModuleFromMain(MakeFunction({x}, body));
}

}  // namespace kiln::testing
