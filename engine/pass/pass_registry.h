// The pass registry: pass name -> PassInfo, summary, typed options and a
// factory. It is how pipelines (`FoldConstant,FuseOps{fuse_opt_level=2}`),
// `kiln-opt --list-passes`, the service's ListPasses and Sequential's
// required-pass resolution find passes. Filled by one explicit call,
// RegisterBuiltinPasses() (engine/transform/builtin_passes.h), never by
// static initializers: the linker cannot drop a pass, and the order is fixed.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/pass/config_value.h"
#include "engine/pass/pass.h"
#include "engine/support/check.h"

namespace kiln {

// One option a pass accepts in a pipeline: `FuseOps{fuse_opt_level=2}`.
struct PassOptionSpec {
  std::string name;
  ConfigType type;
  ConfigValue default_value;
  std::string doc;
};

// The options one pass instance was created with: every declared option, as
// given or defaulted. Factories read them with Get<T>.
class PassOptions {
 public:
  using Given = std::vector<std::pair<std::string, ConfigValue>>;

  PassOptions() = default;
  PassOptions(const std::vector<PassOptionSpec>* specs, Given given)
      : specs_(specs), given_(std::move(given)) {}

  // The value given, or the declared default. `name` must be declared.
  const ConfigValue& GetValue(std::string_view name) const;
  template <typename T>
  T Get(std::string_view name) const {
    const ConfigValue& value = GetValue(name);
    KILN_CHECK(std::holds_alternative<T>(value))
        << "pass option '" << std::string(name) << "' is a " << ConfigTypeName(TypeOf(value));
    return std::get<T>(value);
  }
  // The options written in the pipeline, in the order written.
  const Given& given() const { return given_; }

 private:
  const std::vector<PassOptionSpec>* specs_ = nullptr;
  Given given_;
};

using PassFactory = std::function<absl::StatusOr<Pass>(const PassOptions&)>;

struct PassRegistration {
  // The name, opt level, required passes and stage every instance has.
  PassInfo info;
  // One line for --list-passes.
  std::string summary;
  std::vector<PassOptionSpec> options;
  PassFactory factory;
};

class PassRegistry {
 public:
  PassRegistry() = default;
  PassRegistry(const PassRegistry&) = delete;
  PassRegistry& operator=(const PassRegistry&) = delete;

  // The process-wide registry. It starts empty: the driver fills it once,
  // with RegisterBuiltinPasses and RegisterLoopPasses.
  static PassRegistry& Global();

  // A duplicate name, an empty name, a missing factory or an option default of
  // the wrong type is an error.
  absl::Status Register(PassRegistration registration);
  // For passes without options.
  absl::Status Register(PassInfo info, std::string summary, std::function<Pass()> factory);

  // Null when absent. Entries are never removed, so the pointer stays valid.
  const PassRegistration* Find(std::string_view name) const;
  // In name order.
  std::vector<const PassRegistration*> List() const;
  // "A, B, C" (for error messages).
  std::string ValidNames() const;

  // A new instance of pass `name` with `options` (checked against the
  // declared ones: an unknown option lists the valid ones, a value of the
  // wrong type names the expected type). The pass remembers its name and
  // options so PrintPipeline can write it back.
  absl::StatusOr<Pass> Create(std::string_view name, const PassOptions::Given& options = {}) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<PassRegistration>, std::less<>> entries_;
};

// A pass created by PassRegistry::Create: runs the factory's pass and knows the
// registry name and options it was created with.
class RegisteredPassNode final : public PassNode {
 public:
  RegisteredPassNode(Pass inner, std::string registered_name, PassOptions::Given options);
  const Pass& inner() const { return inner_; }
  const std::string& registered_name() const { return registered_name_; }
  const PassOptions::Given& options() const { return options_; }
  bool is_sequential() const override { return inner_->is_sequential(); }
  absl::StatusOr<IRModule> Run(const IRModule& module, PassContext& context) const override;

 private:
  Pass inner_;
  std::string registered_name_;
  PassOptions::Given options_;
};

}  // namespace kiln
