// Filling the global pass registry, once.
#include "engine/driver/passes.h"

#include <mutex>

#include "engine/loop_transform/register_loop_passes.h"
#include "engine/pass/pipeline.h"
#include "engine/transform/builtin_passes.h"

namespace kiln::driver {

const PassRegistry& RegisteredPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterBuiltinPasses(PassRegistry::Global());
    loop::transform::RegisterLoopPasses(PassRegistry::Global());
  });
  return PassRegistry::Global();
}

const std::string& DefaultGraphPipeline(int opt_level) { return DefaultPipeline(opt_level); }

const std::string& DefaultLoopPipeline() { return loop::transform::DefaultLoopPipeline(); }

}  // namespace kiln::driver
