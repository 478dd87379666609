// Figures for the ONNX frontend (issue 3): import time of a ResNet-50-sized
// model (about 25M parameters, ~175 nodes) built here with the ONNX protobuf
// API, per node and for the weights separately, and what span filling costs
// in time and memory.
//
// Times are medians of repeated runs, each also given as a ratio to a
// baseline measured in the same process: parsing the same bytes into an
// onnx::ModelProto, the floor any importer pays.
#include <onnx/onnx_pb.h>

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
#include "bench/resnet_model.h"
#include "engine/frontend/onnx/importer.h"


namespace {

double MedianSeconds(int runs, const std::function<void()>& fn) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Peak heap growth while importing (the model bytes themselves excluded).
int64_t ImportPeakBytes(const std::string& bytes, const kiln::OnnxImportOptions& options) {
  int64_t base = kiln::bench::HeapBytes();
  kiln::bench::ResetHeapPeak();
  auto module = kiln::ImportOnnxModel(bytes, options);
  if (!module.ok()) std::abort();
  return kiln::bench::HeapPeakBytes() - base;
}

}  // namespace

int main() {
  kiln::bench::ResNetBuilder full_builder(true);
  std::string full = full_builder.Build();
  kiln::bench::ResNetBuilder graph_builder(false);
  std::string graph_only = graph_builder.Build();
  const int runs = 9;

  kiln::OnnxImportOptions spans_on;
  kiln::OnnxImportOptions spans_off;
  spans_off.span_filling = false;
  for (const std::string* bytes : {&full, &graph_only}) {
    auto check = kiln::ImportOnnxModel(*bytes, spans_on);
    if (!check.ok()) {
      std::fprintf(stderr, "import failed: %s\n", std::string(check.status().message()).c_str());
      return 1;
    }
  }

  double parse = MedianSeconds(runs, [&] {
    onnx::ModelProto model;
    model.ParseFromString(full);
  });
  // On and off alternate within each round, so load from other processes
  // hits both alike.
  std::vector<double> on_times, off_times, graph_on_times, graph_off_times;
  auto time_once = [](const std::string& bytes, const kiln::OnnxImportOptions& options) {
    auto start = std::chrono::steady_clock::now();
    auto module = kiln::ImportOnnxModel(bytes, options);
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!module.ok()) std::abort();
    return t;
  };
  for (int round = 0; round < runs; ++round) {
    on_times.push_back(time_once(full, spans_on));
    off_times.push_back(time_once(full, spans_off));
    for (int k = 0; k < 20; ++k) {
      graph_on_times.push_back(time_once(graph_only, spans_on));
      graph_off_times.push_back(time_once(graph_only, spans_off));
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double with_spans = median(on_times), without_spans = median(off_times);
  double graph_time = median(graph_on_times), graph_no_spans = median(graph_off_times);
  int64_t mem_on = ImportPeakBytes(full, spans_on);
  int64_t mem_off = ImportPeakBytes(full, spans_off);

  int nodes = full_builder.nodes();
  std::printf("ONNX import, ResNet-50-sized model: %d nodes, %.1fM parameters, %.1f MB\n", nodes,
              full_builder.parameters() / 1e6, full.size() / 1e6);
  std::printf("  baseline ModelProto parse:   %7.2f ms\n", parse * 1e3);
  std::printf("  import (spans on):           %7.2f ms  %5.2fx baseline  (target <= 100 ms)\n",
              with_spans * 1e3, with_spans / parse);
  std::printf("  import (spans off):          %7.2f ms  %5.2fx baseline\n", without_spans * 1e3,
              without_spans / parse);
  std::printf("  graph only (no weights):     %7.2f ms  = %.1f us per node\n", graph_time * 1e3,
              graph_time * 1e6 / nodes);
  std::printf("  weights (full - graph only): %7.2f ms\n", (with_spans - graph_time) * 1e3);
  std::printf("  span filling time overhead:  %+6.2f%% of import (graph only: %+6.2f%%)  (target <= 5%%)\n",
              (with_spans / without_spans - 1) * 100, (graph_time / graph_no_spans - 1) * 100);
  std::printf("  peak import memory: %.1f MB spans on, %.1f MB off: %+6.3f%%  (target <= 1%%)\n",
              mem_on / 1e6, mem_off / 1e6, (double(mem_on) / double(mem_off) - 1) * 100);
  return 0;
}
