// `kiln bisect`: the first pass that changes a model's outputs. One trace with the numerics
// check (kilnd runs the model after every graph pass that changed it, and the native code, on
// the same seeded inputs, against the model as imported); the first module whose worst output
// is off by more than both --rtol and --atol is the culprit, printed with the commands that
// show its IR and confirm it (the trace without that pass).
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/compile_request.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/numeric_drift.h"
#include "kiln/v1/compiler.grpc.pb.h"

namespace kiln::cli {
namespace {

std::optional<double> Tolerance(const CommandLine& line, const char* flag, double fallback,
                                std::string* error) {
  std::optional<std::string> text = line.Value(flag);
  if (!text) return fallback;
  double value = 0;
  if (!absl::SimpleAtod(*text, &value) || value < 0) {
    *error = absl::StrCat("--", flag, ": '", *text, "' is not a tolerance >= 0");
    return std::nullopt;
  }
  return value;
}

// True when some output of `drift` is off by more than both tolerances.
bool Exceeds(const kiln::v1::NumericDrift& drift, double rtol, double atol) {
  for (const kiln::v1::OutputDrift& output : drift.outputs()) {
    if (output.max_rel_error() > rtol && output.max_abs_error() > atol) return true;
  }
  return false;
}

// `'arg'` for a shell, as the commands printed for copying.
std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The pass flags the user gave, spelled for kiln (`kiln_opt`: for kiln-opt).
std::vector<std::string> PassFlags(const CommandLine& line, bool kiln_opt) {
  std::vector<std::string> flags;
  std::string level = line.Value("opt-level").value_or("3");
  flags.push_back(kiln_opt ? absl::StrCat("-O", level) : absl::StrCat("--opt-level=", level));
  if (std::optional<std::string> pipeline = line.Value("pipeline")) {
    flags.push_back(Quote(absl::StrCat(kiln_opt ? "--passes=" : "--pipeline=", *pipeline)));
  }
  for (const char* repeated : {"config", "input-shape"}) {
    for (const std::string& value : line.List(repeated)) {
      flags.push_back(Quote(absl::StrCat("--", repeated, "=", value)));
    }
  }
  return flags;
}

}  // namespace

int RunBisect(const CommandLine& line, const Connection& connection) {
  std::string error;
  std::optional<double> rtol = Tolerance(line, "rtol", 1e-5, &error);
  std::optional<double> atol = Tolerance(line, "atol", 1e-6, &error);
  if (!rtol || !atol) return ReportUsageError(error);
  absl::StatusOr<kiln::v1::CompileRequest> compile = CompileRequestFromFlags(line);
  if (!compile.ok()) return ReportUsageError(std::string(compile.status().message()));
  kiln::v1::TraceRequest request;
  *request.mutable_compile() = *std::move(compile);
  if (absl::Status numerics = SetNumericsFlags(line, &request, /*force=*/true); !numerics.ok()) {
    return ReportUsageError(std::string(numerics.message()));
  }
  request.set_numerics_rtol(*rtol > 0 ? *rtol : 1e-300);  // 0 on the wire means the default
  request.set_numerics_atol(*atol > 0 ? *atol : 1e-300);
  request.add_stages("graph");  // graph and loop passes are checked; LLVM's need no events
  request.add_stages("loop");

  std::unique_ptr<kiln::v1::Compiler::Stub> stub = kiln::v1::Compiler::NewStub(MakeChannel(connection));
  std::unique_ptr<grpc::ClientContext> context = MakeContext(connection);
  std::unique_ptr<grpc::ClientReader<kiln::v1::PassEvent>> reader =
      stub->TracePass(context.get(), request);
  kiln::v1::PassEvent event;
  std::optional<kiln::v1::PassEvent> culprit;
  std::optional<kiln::v1::NumericDrift> native;
  int64_t checked = 0;
  while (reader->Read(&event)) {
    if (event.pass_name().empty()) {  // the summary: the native code's drift
      if (event.has_numerics()) native = event.numerics();
      continue;
    }
    if (!event.has_numerics() || culprit.has_value()) continue;
    if (!event.numerics().error().empty()) {
      std::cout << "#" << event.index() << " " << event.pass_name()
                << ": " << DriftLine(event.numerics()) << "\n";
      continue;
    }
    ++checked;
    if (Exceeds(event.numerics(), *rtol, *atol)) culprit = event;
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return ReportRpcError(status);

  const std::string model = Quote(line.positionals().empty() ? "MODEL" : line.positionals()[0]);
  if (culprit.has_value()) {
    std::cout << "first pass over rtol " << *rtol << " and atol " << *atol << ": #"
              << culprit->index() << " " << culprit->pass_name() << " ("
              << DriftLine(culprit->numerics()) << ")\n";
    for (const kiln::v1::OutputDrift& output : culprit->numerics().outputs()) {
      std::cout << "  output " << output.name() << ": max rel " << output.max_rel_error()
                << ", max abs " << output.max_abs_error() << "\n";
    }
    // Where it appears: the layers whose values the pass changed, in the model's order.
    for (const kiln::v1::LayerDrift& layer : culprit->numerics().layers()) {
      std::cout << "  layer " << absl::StrJoin(layer.layers(), ", ") << ": max rel "
                << layer.max_rel_error() << ", max abs " << layer.max_abs_error() << "\n";
    }
    if (!culprit->numerics().layers_error().empty()) {
      std::cout << "  layers not compared: " << culprit->numerics().layers_error() << "\n";
    }
    std::cout << "the IR after it:      kiln-opt " << model << " "
              << absl::StrJoin(PassFlags(line, true), " ") << " "
              << Quote(absl::StrCat("--print-after=", culprit->pass_name())) << "\n";
    std::cout << "the trace without it: kiln trace " << model << " "
              << absl::StrJoin(PassFlags(line, false), " ") << " --check-numerics "
              << Quote(absl::StrCat("--disable-pass=", culprit->pass_name())) << "\n";
    return kExitOther;
  }
  std::cout << "every graph pass keeps the outputs within rtol " << *rtol << " and atol " << *atol
            << " (" << checked << " checked)\n";
  if (native.has_value()) {
    std::cout << "native code: " << DriftLine(*native) << "\n";
    if (native->error().empty() && Exceeds(*native, *rtol, *atol)) {
      std::cout << "the native code is over the tolerance: the loop passes or code generation "
                   "changed the numbers\n";
      return kExitOther;
    }
  }
  return kExitOk;
}

}  // namespace kiln::cli
