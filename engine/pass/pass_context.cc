// PassContext: settings, config checking, the thread-local context stack and
// the instrument dispatch with the seed's call order and error rules.
#include "engine/pass/pass_context.h"

#include <algorithm>
#include <exception>
#include <functional>

#include "absl/strings/str_cat.h"
#include "engine/pass/pass_config.h"
#include "engine/pass/pass_registry.h"

namespace kiln {
namespace {

bool Contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Runs one hook, turning a thrown exception into a Status: instruments may be
// written by users, and an exception must not unwind through the pass manager
// (the seed's "exceptions" are Kiln's Status errors).
absl::Status CallHook(const PassInstrument& instrument, const char* hook,
                      const std::function<absl::Status()>& call) {
  absl::Status status;
  try {
    status = call();
  } catch (const std::exception& e) {
    status = absl::InternalError(absl::StrCat("threw: ", e.what()));
  } catch (...) {
    status = absl::InternalError("threw a non-standard exception");
  }
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("instrument '", instrument.name(), "' failed in ",
                                                  hook, ": ", std::string(status.message())));
}

struct ThreadContexts {
  PassContext default_context;
  std::vector<PassContext*> stack;
};

ThreadContexts& ThisThreadContexts() {
  // Per thread, constructed on the thread's first use.
  thread_local ThreadContexts contexts;
  return contexts;
}

}  // namespace

PassContext::PassContext() = default;

void PassContext::AddRequiredPass(std::string name) {
  if (!IsRequired(name)) required_.push_back(std::move(name));
}

void PassContext::AddDisabledPass(std::string name) {
  if (!IsDisabled(name)) disabled_.push_back(std::move(name));
}

bool PassContext::IsRequired(std::string_view name) const { return Contains(required_, name); }
bool PassContext::IsDisabled(std::string_view name) const { return Contains(disabled_, name); }

bool PassContext::PassEnabled(const PassInfo& info) const {
  if (IsDisabled(info.name)) return false;
  if (IsRequired(info.name)) return true;
  return opt_level_ >= info.opt_level;
}

absl::Status PassContext::SetConfig(std::string_view key, ConfigValue value) {
  const PassConfigOption* option = config_registry().Find(key);
  if (option == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown config option '", std::string(key),
                     "'; valid options: ", config_registry().ValidKeys()));
  }
  absl::StatusOr<ConfigValue> coerced = CoerceConfigValue(value, option->type);
  if (!coerced.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("config option '", option->name,
                                                   "': ", std::string(coerced.status().message())));
  }
  config_[option->name] = *std::move(coerced);
  return absl::OkStatus();
}

absl::Status PassContext::SetConfigFromString(std::string_view key, std::string_view text) {
  const PassConfigOption* option = config_registry().Find(key);
  if (option == nullptr) return SetConfig(key, std::string(text));  // the unknown-key error
  absl::StatusOr<ConfigValue> value = ParseConfigValue(text, option->type);
  if (!value.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("config option '", option->name,
                                                   "': ", std::string(value.status().message())));
  }
  return SetConfig(key, *std::move(value));
}

absl::Status PassContext::SetConfigFromAssignment(std::string_view assignment) {
  size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected KEY=VALUE, got '", std::string(assignment), "'"));
  }
  return SetConfigFromString(assignment.substr(0, eq), assignment.substr(eq + 1));
}

const ConfigValue& PassContext::GetConfigValue(std::string_view key) const {
  auto it = config_.find(key);
  if (it != config_.end()) return it->second;
  const PassConfigOption* option = config_registry().Find(key);
  KILN_CHECK(option != nullptr) << "config option '" << std::string(key)
                                << "' is read but not registered in pass_config.cc";
  return option->default_value;
}

void PassContext::EmitDiagnostic(DiagnosticSeverity severity, std::string message, Span span) {
  std::string pass = running_passes_.empty() ? std::string() : running_passes_.back();
  diagnostics_.push_back(
      PassDiagnostic{severity, std::move(pass), std::move(message), std::move(span)});
}

void PassContext::AddInstrument(std::shared_ptr<PassInstrument> instrument) {
  KILN_CHECK(instrument != nullptr) << "null instrument";
  instruments_.push_back(std::move(instrument));
}

absl::Status PassContext::OverrideInstruments(
    std::vector<std::shared_ptr<PassInstrument>> instruments) {
  absl::Status exit_status = InstrumentExitPassContext();
  instruments_ = std::move(instruments);
  absl::Status enter_status = InstrumentEnterPassContext();
  return exit_status.ok() ? enter_status : exit_status;
}

absl::Status PassContext::InstrumentEnterPassContext() {
  for (size_t i = 0; i < instruments_.size(); ++i) {
    PassInstrument& instrument = *instruments_[i];
    absl::Status status =
        CallHook(instrument, "EnterPassContext", [&] { return instrument.EnterPassContext(); });
    if (status.ok()) continue;
    // Instrumentation is off from here on; the ones already entered are
    // exited so they can release what they acquired.
    std::vector<std::shared_ptr<PassInstrument>> entered(instruments_.begin(),
                                                         instruments_.begin() + i);
    instruments_.clear();
    for (const std::shared_ptr<PassInstrument>& done : entered) {
      absl::Status ignored =
          CallHook(*done, "ExitPassContext", [&] { return done->ExitPassContext(); });
      (void)ignored;
    }
    return status;
  }
  return absl::OkStatus();
}

absl::Status PassContext::InstrumentExitPassContext() {
  for (const std::shared_ptr<PassInstrument>& instrument : instruments_) {
    absl::Status status =
        CallHook(*instrument, "ExitPassContext", [&] { return instrument->ExitPassContext(); });
    if (!status.ok()) {
      instruments_.clear();
      return status;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> PassContext::InstrumentBeforePass(const IRModule& module,
                                                       const PassInvocation& pass) {
  bool should_run = true;
  if (!pass.required) {
    for (const std::shared_ptr<PassInstrument>& instrument : instruments_) {
      bool run = true;
      absl::Status status = CallHook(*instrument, "ShouldRun", [&]() -> absl::Status {
        absl::StatusOr<bool> answer = instrument->ShouldRun(module, pass);
        if (!answer.ok()) return answer.status();
        run = *answer;
        return absl::OkStatus();
      });
      if (!status.ok()) return status;
      should_run = should_run && run;
    }
  }
  if (!should_run) return false;
  for (const std::shared_ptr<PassInstrument>& instrument : instruments_) {
    absl::Status status = CallHook(*instrument, "RunBeforePass",
                                   [&] { return instrument->RunBeforePass(module, pass); });
    if (!status.ok()) return status;
  }
  return true;
}

absl::Status PassContext::InstrumentAfterPass(const IRModule& module, const PassInvocation& pass) {
  for (const std::shared_ptr<PassInstrument>& instrument : instruments_) {
    absl::Status status = CallHook(*instrument, "RunAfterPass",
                                   [&] { return instrument->RunAfterPass(module, pass); });
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status PassContext::InstrumentAfterPassFailed(const IRModule& module_before,
                                                    const PassInvocation& pass,
                                                    const absl::Status& error) {
  std::string notes;
  for (const std::shared_ptr<PassInstrument>& instrument : instruments_) {
    absl::Status status = CallHook(*instrument, "RunAfterPassFailed", [&] {
      return instrument->RunAfterPassFailed(module_before, pass, error);
    });
    if (!status.ok()) absl::StrAppend(&notes, "\nnote: ", std::string(status.message()));
  }
  if (notes.empty()) return error;
  return absl::Status(error.code(), absl::StrCat(std::string(error.message()), notes));
}

const PassRegistry& PassContext::pass_registry() const {
  return pass_registry_ != nullptr ? *pass_registry_ : PassRegistry::Global();
}

const PassConfigRegistry& PassContext::config_registry() const {
  return config_registry_ != nullptr ? *config_registry_ : PassConfigRegistry::Global();
}

PassContext& PassContext::Current() {
  ThreadContexts& contexts = ThisThreadContexts();
  return contexts.stack.empty() ? contexts.default_context : *contexts.stack.back();
}

PassContext::Scope::Scope(PassContext& context) : context_(&context) {
  // Instruments are entered before the push, as in the seed: a context whose
  // instruments failed to enter never becomes current.
  status_ = context_->InstrumentEnterPassContext();
  if (!status_.ok()) return;
  ThisThreadContexts().stack.push_back(context_);
  open_ = true;
}

PassContext::Scope::~Scope() {
  absl::Status ignored = Close();
  (void)ignored;
}

absl::Status PassContext::Scope::Close() {
  if (!open_) return absl::OkStatus();
  open_ = false;
  std::vector<PassContext*>& stack = ThisThreadContexts().stack;
  KILN_CHECK(!stack.empty() && stack.back() == context_)
      << "PassContext scopes closed out of order (or on another thread)";
  stack.pop_back();
  return context_->InstrumentExitPassContext();
}

}  // namespace kiln
