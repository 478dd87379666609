// Figures for the graph IR core (issue 2): print and parse throughput of a
// 20,000-node function, and the memory of one Call node with two arguments.
//
// Absolute times on shared machines are noisy, so every time is also given as
// a ratio to a baseline measured in the same process: one memoized visitor
// walk over the same graph (the cheapest thing any consumer of it does).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "bench/heap_counter.h"
#include "engine/ir/expr_visitor.h"
#include "engine/ir/module.h"
#include "engine/ir/structural_equal.h"
#include "engine/parser/parser.h"
#include "engine/printer/printer.h"


namespace kiln {
namespace {

constexpr int kNodes = 20'000;

// A conv-like chain: each node has attributes and a span, like an imported model.
IRModule MakeChainModule(int nodes) {
  Var x = MakeVar("x", MakeTensorType({1, 64, 56, 56}, DataType::kFloat32), MakeSpan("input"));
  Var w = MakeVar("w", MakeTensorType({64, 64, 3, 3}, DataType::kFloat32), MakeSpan("weight"));
  Attrs conv_attrs = MakeAttrs({{"strides", IntArray({1, 1})}, {"padding", IntArray({1, 1, 1, 1})}});
  Expr e = x;
  for (int i = 0; i < nodes; ++i) {
    std::string layer = "layer" + std::to_string(i / 2);
    if (i % 2 == 0) {
      e = MakeCall(GetOp("nn.conv2d"), {e, w}, conv_attrs, MakeSpan(layer + "/conv"));
    } else {
      e = MakeCall(GetOp("nn.relu"), {e}, nullptr, MakeSpan(layer + "/relu"));
    }
  }
  return MakeModuleFromMain(MakeFunction({x, w}, e));
}

// Fastest of `runs` calls: on a shared machine preemptions land in some runs,
// so the minimum is the stable estimate of the work itself.
double FastestSeconds(int runs, const std::function<void()>& fn) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return *std::min_element(times.begin(), times.end());
}

int Run() {
  IRModule module = MakeChainModule(kNodes);
  const int runs = 15;

  double visit = FastestSeconds(runs, [&] {
    int count = 0;
    PostOrderVisit(module->functions[0].second, [&](const Expr&) { ++count; });
  });
  std::string text;
  double print = FastestSeconds(runs, [&] { text = PrintModule(module); });
  double parse = FastestSeconds(runs, [&] {
    auto parsed = ParseModule(text);
    if (!parsed.ok()) std::abort();
  });
  auto reparsed = ParseModule(text);
  bool roundtrip = reparsed.ok() && StructuralEqual(module, *reparsed, {.compare_spans = true});

  std::printf("graph IR, %d-node function (%zu bytes of text), fastest of %d runs\n", kNodes,
              text.size(), runs);
  std::printf("  baseline visitor walk: %8.2f ms\n", visit * 1e3);
  std::printf("  print:                 %8.2f ms  %10.0f nodes/s  %6.1fx baseline  (target >= 500000 nodes/s)\n",
              print * 1e3, kNodes / print, print / visit);
  std::printf("  parse:                 %8.2f ms  %10.0f nodes/s  %6.1fx baseline  (target >= 500000 nodes/s)\n",
              parse * 1e3, kNodes / parse, parse / visit);
  std::printf("  roundtrip structurally equal (spans included): %s\n", roundtrip ? "yes" : "NO");

  // Memory of Call nodes with two arguments and no attributes or span.
  Var a = MakeVar("a"), b = MakeVar("b");
  Op add = GetOp("add");
  constexpr int kCalls = 100'000;
  std::vector<Expr> calls;
  calls.reserve(kCalls);
  int64_t before = bench::HeapBytes();
  for (int i = 0; i < kCalls; ++i) calls.push_back(MakeCall(add, {a, b}));
  int64_t per_call = (bench::HeapBytes() - before) / kCalls;
  std::printf("  memory per Call node with two arguments: %lld bytes (target <= 200)\n",
              static_cast<long long>(per_call));
  return roundtrip ? 0 : 1;
}

}  // namespace
}  // namespace kiln

int main() { return kiln::Run(); }
