// PassContext: everything a pass run depends on besides the module: the opt
// level (default 2), required and disabled pass names, typed config options
// (keys from pass_config.h only), instruments, and the pass registry used to
// resolve required passes. Each thread has its own stack of current contexts
// (a PassContext::Scope pushes one), so worker threads compiling different
// requests never see each other's settings.
//
// Instrument call order and error rules (the seed's, with Status for
// exceptions; a hook that throws counts as a failure with an internal error):
//   enter (Scope, OverrideInstruments): EnterPassContext of each instrument in
//     order. If one fails, the instruments are cleared, those entered before it
//     are exited in order (their exit errors are dropped: the enter error is the
//     one reported), later ones are never entered, and the enter error returns.
//   exit (end of Scope, OverrideInstruments): ExitPassContext of each in order.
//     If one fails, the instruments are cleared, later ones are not exited, and
//     the error returns.
//   before a pass: unless the pass is required, ShouldRun of every instrument
//     (all are asked; the pass runs when all say true; the first error returns
//     at once). Then, if it runs, RunBeforePass of each in order; the first
//     error returns at once (later instruments are not called, the pass does
//     not run, and no after hook is called for it).
//   after a pass: RunAfterPass of each in order; the first error returns at
//     once and becomes the pass's result.
//   after a failed pass: RunAfterPassFailed of each in order, all of them; the
//     pass's error is returned, with the messages of failing hooks appended.
// A context is used by one thread at a time (it tracks the nesting depth of the
// passes running under it); copy it to give each worker its own.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/pass/config_value.h"
#include "engine/pass/instrument.h"
#include "engine/pass/pass_diagnostic.h"
#include "engine/pass/pass.h"
#include "engine/support/check.h"
#include "engine/support/compile_budget.h"

namespace kiln {

class PassConfigRegistry;
class PassRegistry;

class PassContext {
 public:
  PassContext();

  int opt_level() const { return opt_level_; }
  void set_opt_level(int level) { opt_level_ = level; }

  const std::vector<std::string>& required_passes() const { return required_; }
  const std::vector<std::string>& disabled_passes() const { return disabled_; }
  void AddRequiredPass(std::string name);
  void AddDisabledPass(std::string name);
  bool IsRequired(std::string_view name) const;
  bool IsDisabled(std::string_view name) const;

  // The seed's enabling rule, used by Sequential: a disabled pass is off; else
  // a required pass is on; else the pass is on when opt_level() >= its level.
  bool PassEnabled(const PassInfo& info) const;

  // Config. Keys must be registered (pass_config.h); an unknown key is an
  // InvalidArgument error listing the valid keys, a value of the wrong type one
  // naming the expected type.
  absl::Status SetConfig(std::string_view key, ConfigValue value);
  // `text` parsed as the key's type.
  absl::Status SetConfigFromString(std::string_view key, std::string_view text);
  // "key=value" (the CLI's --config and the service's config map entries).
  absl::Status SetConfigFromAssignment(std::string_view assignment);
  // The value set, or the registered default. The key must be registered (a
  // lookup of an unregistered key is a Kiln bug, not a user error).
  const ConfigValue& GetConfigValue(std::string_view key) const;
  template <typename T>
  T GetConfig(std::string_view key) const {
    const ConfigValue& value = GetConfigValue(key);
    KILN_CHECK(std::holds_alternative<T>(value))
        << "config option '" << std::string(key) << "' is a " << ConfigTypeName(TypeOf(value));
    return std::get<T>(value);
  }
  // Explicitly set options only, in key order.
  const std::map<std::string, ConfigValue, std::less<>>& config() const { return config_; }

  // Instruments, called in this order. Add them before the context is entered;
  // to change them while it is current, use OverrideInstruments.
  void AddInstrument(std::shared_ptr<PassInstrument> instrument);
  const std::vector<std::shared_ptr<PassInstrument>>& instruments() const { return instruments_; }
  // Tells every instrument about a pass a backend ran (LLVM's passes during code generation).
  void ReportBackendPass(const BackendPassRun& run) const {
    for (const auto& instrument : instruments_) instrument->RunAfterBackendPass(run);
  }
  // The seed's override_instruments: exits the current instruments, installs
  // `instruments`, enters them (each step with the rules above). An exit
  // failure still installs and enters the new ones; the first error returns.
  absl::Status OverrideInstruments(std::vector<std::shared_ptr<PassInstrument>> instruments);

  // The hooks, as PassNode and Scope call them (see the rules above).
  absl::Status InstrumentEnterPassContext();
  absl::Status InstrumentExitPassContext();
  absl::StatusOr<bool> InstrumentBeforePass(const IRModule& module, const PassInvocation& pass);
  absl::Status InstrumentAfterPass(const IRModule& module, const PassInvocation& pass);
  absl::Status InstrumentAfterPassFailed(const IRModule& module_before, const PassInvocation& pass,
                                         const absl::Status& error);

  // Where Sequential finds required passes; null means PassRegistry::Global().
  const PassRegistry& pass_registry() const;
  void set_pass_registry(const PassRegistry* registry) { pass_registry_ = registry; }
  // Where config keys are checked; null means PassConfigRegistry::Global().
  const PassConfigRegistry& config_registry() const;
  void set_config_registry(const PassConfigRegistry* registry) { config_registry_ = registry; }

  // The compile's budget (bytes, interpreter steps, cancellation), shared by
  // copies of the context; null: unlimited. Every pass is refused once it
  // says the compile is cancelled, and passes that materialize tensors
  // (FoldConstant) charge it before allocating.
  CompileBudget* budget() const { return budget_.get(); }
  void set_budget(std::shared_ptr<CompileBudget> budget) { budget_ = std::move(budget); }

  // How many passes are running under this context right now (nesting).
  int depth() const { return depth_; }

  // Diagnostics: a pass reports a note or warning; it is recorded with the
  // name of the innermost running pass. Collected in report order.
  void EmitDiagnostic(DiagnosticSeverity severity, std::string message, Span span = nullptr);
  const std::vector<PassDiagnostic>& diagnostics() const { return diagnostics_; }

  // The innermost context of this thread's stack, or the thread's default
  // context (opt level 2, nothing set) when no Scope is open.
  static PassContext& Current();

  // Makes a context current for the lifetime of the scope: enters its
  // instruments, pushes it on this thread's stack; the destructor pops it and
  // exits the instruments. Check status() after construction: when entering
  // failed, nothing was pushed. Call Close() to see the exit status (the
  // destructor cannot report it).
  class Scope {
   public:
    explicit Scope(PassContext& context);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

    const absl::Status& status() const { return status_; }
    absl::Status Close();

   private:
    PassContext* context_;
    bool open_ = false;
    absl::Status status_;
  };

 private:
  friend class PassNode;

  int opt_level_ = 2;
  std::vector<std::string> required_;
  std::vector<std::string> disabled_;
  std::map<std::string, ConfigValue, std::less<>> config_;
  std::vector<std::shared_ptr<PassInstrument>> instruments_;
  const PassRegistry* pass_registry_ = nullptr;
  const PassConfigRegistry* config_registry_ = nullptr;
  std::shared_ptr<CompileBudget> budget_;
  int depth_ = 0;
  std::vector<std::string> running_passes_;  // innermost last
  std::vector<PassDiagnostic> diagnostics_;
};

}  // namespace kiln
