// Filling the global pass registry, once.
#include "engine/driver/passes.h"

#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

#include "engine/loop_transform/register_loop_passes.h"
#include "engine/pass/pipeline.h"
#include "engine/transform/builtin_passes.h"
#include "engine/transform/convert_layout.h"

namespace kiln::driver {

const PassRegistry& RegisteredPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterBuiltinPasses(PassRegistry::Global());
    loop::transform::RegisterLoopPasses(PassRegistry::Global());
  });
  return PassRegistry::Global();
}

std::string DefaultGraphPipeline(int opt_level, int64_t layout_block) {
  std::string pipeline = DefaultPipeline(opt_level);
  if (layout_block == transform::kDefaultLayoutBlock) return pipeline;
  // The pipeline names ConvertLayout without options (its default block); only the block differs.
  return absl::StrReplaceAll(
      pipeline, {{"ConvertLayout,", absl::StrCat("ConvertLayout{block=", layout_block, "},")}});
}

const std::string& DefaultLoopPipeline() { return loop::transform::DefaultLoopPipeline(); }

}  // namespace kiln::driver
