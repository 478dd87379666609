// Figures for lowering (issue 5) on a ResNet-50-sized model: the time to
// lower the -O3 graph to loop IR (every fused function through its compute
// definition, default schedule and LowerSchedule, plus memory planning), and
// what keeping schedule records adds to that time and to peak memory.
//
// Times are the fastest of N runs; record on/off runs alternate within each
// round so machine load hits both alike. The baseline measured in the same
// process is the -O3 graph pipeline on the same model.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench/heap_counter.h"
#include "bench/resnet_model.h"
#include "engine/driver/driver.h"
#include "engine/loop_transform/register_loop_passes.h"
#include "engine/lower/lower_module.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pipeline.h"

namespace {

double Seconds(const std::function<void()>& fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

kiln::lower::LoweredModule Lower(const kiln::IRModule& optimized, bool keep_record) {
  kiln::lower::LowerOptions options;
  options.keep_schedule_record = keep_record;
  auto lowered = kiln::lower::LowerModule(optimized, options);
  if (!lowered.ok()) {
    std::fprintf(stderr, "lowering failed: %s\n", std::string(lowered.status().message()).c_str());
    std::abort();
  }
  return *std::move(lowered);
}

// Lowering as the driver does it: LowerModule, then the default loop pipeline.
kiln::IRModule LowerToFinalLoopIr(const kiln::IRModule& optimized, const kiln::Pass& loop_pipeline,
                                  bool keep_record) {
  kiln::lower::LoweredModule lowered = Lower(optimized, keep_record);
  kiln::PassContext context;
  kiln::PassContext::Scope scope(context);
  auto result = (*loop_pipeline)(lowered.module, context);
  if (!result.ok()) std::abort();
  return *result;
}

}  // namespace

int main() {
  kiln::bench::ResNetBuilder builder(true);
  std::string bytes = builder.Build();
  kiln::driver::CompileOptions options;
  options.lower = false;
  auto compiled = kiln::driver::CompileOnnx(bytes, options);
  if (!compiled.ok()) {
    std::fprintf(stderr, "%s\n", std::string(compiled.status().message()).c_str());
    return 1;
  }
  kiln::IRModule imported = compiled->imported;
  kiln::IRModule optimized = compiled->optimized;
  auto pipeline = kiln::ParsePipeline(kiln::DefaultPipeline(3));
  auto loop_pipeline = kiln::ParsePipeline(kiln::loop::transform::DefaultLoopPipeline());
  if (!pipeline.ok() || !loop_pipeline.ok()) return 1;

  const int rounds = 11;
  std::vector<double> graph, with_record, without_record, full_with, full_without;
  for (int round = 0; round < rounds; ++round) {
    graph.push_back(Seconds([&] {
      kiln::PassContext context;
      context.set_opt_level(3);
      kiln::PassContext::Scope scope(context);
      (void)(**pipeline)(imported, context);
    }));
    if (round % 2 == 0) {
      with_record.push_back(Seconds([&] { Lower(optimized, true); }));
      without_record.push_back(Seconds([&] { Lower(optimized, false); }));
    } else {
      without_record.push_back(Seconds([&] { Lower(optimized, false); }));
      with_record.push_back(Seconds([&] { Lower(optimized, true); }));
    }
    full_with.push_back(Seconds([&] { LowerToFinalLoopIr(optimized, *loop_pipeline, true); }));
    full_without.push_back(
        Seconds([&] { LowerToFinalLoopIr(optimized, *loop_pipeline, false); }));
  }

  // Peak heap while lowering to final loop IR and holding the result (the
  // records live in the LoweredModule), records on and off; and the heap the
  // process holds anyway (the model and its optimized graph).
  auto peak = [&](bool keep_record, size_t* steps, size_t* kernels) {
    kiln::bench::ResetHeapPeak();
    int64_t before = kiln::bench::HeapBytes();
    kiln::lower::LoweredModule lowered = Lower(optimized, keep_record);
    kiln::PassContext context;
    kiln::PassContext::Scope scope(context);
    auto final_ir = (**loop_pipeline)(lowered.module, context);
    if (!final_ir.ok()) std::abort();
    *kernels = lowered.kernels.size();
    *steps = 0;
    for (const auto& kernel : lowered.kernels) *steps += kernel.schedule.record().size();
    return kiln::bench::HeapPeakBytes() - before;
  };
  int64_t resident = kiln::bench::HeapBytes();
  size_t steps_on = 0, steps_off = 0, kernels = 0;
  int64_t peak_on = peak(true, &steps_on, &kernels);
  int64_t peak_off = peak(false, &steps_off, &kernels);

  double base = Fastest(graph), on = Fastest(with_record), off = Fastest(without_record);
  std::printf("lowering a ResNet-50-sized model (%d ONNX nodes, %zu kernels) to loop IR\n",
              builder.nodes(), kernels);
  std::printf("  baseline -O3 graph pipeline: %8.2f ms\n", base * 1e3);
  std::printf("  lower, records kept:         %8.2f ms  %6.1fx baseline  (target <= 300 ms)\n",
              on * 1e3, on / base);
  std::printf("  lower, no records:           %8.2f ms  %6.1fx baseline\n", off * 1e3, off / base);
  std::printf("  records on vs off, time:     %+7.2f%%  (%zu steps kept)\n",
              (on / off - 1) * 100, steps_on);
  double full_on = Fastest(full_with), full_off = Fastest(full_without);
  std::printf("  lower + loop pipeline, records kept: %8.2f ms  (target <= 300 ms)\n",
              full_on * 1e3);
  std::printf("  lower + loop pipeline, no records:   %8.2f ms\n", full_off * 1e3);
  std::printf("  records on vs off, whole lowering:   %+7.2f%%  (target <= 10%%)\n",
              (full_on / full_off - 1) * 100);
  std::printf("  records on vs off, lowering's own peak heap: %+6.2f%%  (%.2f MiB vs %.2f MiB)\n",
              (static_cast<double>(peak_on) / static_cast<double>(peak_off) - 1) * 100,
              peak_on / 1048576.0, peak_off / 1048576.0);
  std::printf("  records on vs off, process peak heap:        %+6.2f%%  (target <= 10%%; "
              "%.1f MiB held before lowering)\n",
              static_cast<double>(peak_on - peak_off) / static_cast<double>(resident + peak_off) *
                  100,
              resident / 1048576.0);
  return 0;
}
