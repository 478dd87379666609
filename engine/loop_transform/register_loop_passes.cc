// The table of loop passes (RegisterLoopPasses) and the default loop pipeline.
#include "engine/loop_transform/register_loop_passes.h"

#include "engine/loop_transform/flatten_buffer.h"
#include "engine/loop_transform/loop_partition.h"
#include "engine/loop_transform/lower_intrin.h"
#include "engine/loop_transform/remove_no_op.h"
#include "engine/loop_transform/simplify.h"
#include "engine/loop_transform/storage_rewrite.h"
#include "engine/loop_transform/unroll_loop.h"
#include "engine/loop_transform/vectorize_loop.h"
#include "engine/support/check.h"

namespace kiln::loop::transform {

void RegisterLoopPasses(PassRegistry& registry) {
  struct LoopPass {
    Pass (*factory)();
    const char* summary;
  };
  // In pipeline order; --list-passes sorts by name.
  const LoopPass passes[] = {
      {Simplify, "loop IR: simplify index arithmetic from loop ranges; drop decided ifs and "
                 "loops of extent <= 1"},
      {RemoveNoOp, "loop IR: remove statements that do nothing (empty loops, self-stores, ...)"},
      {FlattenBuffer, "loop IR: rewrite multi-dimensional buffer accesses to flat indices"},
      {LoopPartition, "loop IR: split serial loops at the bounds their body tests (padded borders, "
                      "split tails) so the middle loop runs without the tests"},
      {VectorizeLoop, "loop IR: turn vectorized loops into Ramp/Broadcast vector code"},
      {StorageRewrite, "loop IR: let allocations with disjoint lifetimes share storage"},
      {LowerIntrin, "loop IR: expand sigmoid, rsqrt, ... into calls code generation maps"},
  };
  for (const LoopPass& pass : passes) {
    absl::Status status = registry.Register(pass.factory()->info(), pass.summary, pass.factory);
    KILN_CHECK(status.ok()) << status.message();
  }

  Pass unroll = UnrollLoop();
  absl::Status status = registry.Register(PassRegistration{
      unroll->info(),
      "loop IR: repeat the body of short unrolled loops with the variable substituted",
      {{"max_extent", ConfigType::kInt, ConfigValue(kDefaultMaxUnrollExtent),
        "loops of kind unroll with a longer (or non-constant) extent stay loops"}},
      [](const PassOptions& options) -> absl::StatusOr<Pass> {
        int64_t max_extent = options.Get<int64_t>("max_extent");
        if (max_extent < 0) {
          return absl::InvalidArgumentError(
              "UnrollLoop: max_extent must be at least 0 (0 unrolls nothing)");
        }
        return UnrollLoop(max_extent);
      }});
  KILN_CHECK(status.ok()) << status.message();
}

const std::string& DefaultLoopPipeline() {
  static const std::string* const kPipeline = new std::string(
      "Simplify,FlattenBuffer,Simplify,LoopPartition,Simplify,VectorizeLoop,UnrollLoop,Simplify,RemoveNoOp,StorageRewrite,"
      "LowerIntrin");
  return *kPipeline;
}

}  // namespace kiln::loop::transform
