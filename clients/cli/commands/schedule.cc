// `kiln schedule`: the schedule record of one kernel, step by step: the
// primitive and its arguments, whether --verify found it equivalent to step
// 0, and the unified diff of the loop IR it made (step 0: the whole IR).
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/compile_request.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/unified_diff.h"
#include "kiln/v1/compiler.grpc.pb.h"

namespace kiln::cli {
namespace {

std::string StepLabel(const kiln::v1::ScheduleStep& step) {
  return absl::StrCat("step ", step.step(), " ", step.primitive());
}

std::string VerifiedNote(const kiln::v1::ScheduleStep& step) {
  if (!step.has_verified()) return "";
  return step.verified() ? "  [verified]" : "  [MISMATCH: differs from step 0]";
}

}  // namespace

int RunSchedule(const CommandLine& line, const Connection& connection) {
  absl::StatusOr<kiln::v1::CompileRequest> compile = CompileRequestFromFlags(line);
  if (!compile.ok()) return ReportUsageError(std::string(compile.status().message()));
  std::optional<std::string> selector = line.Value("selector");
  if (!selector.has_value() || selector->empty()) {
    return ReportUsageError(
        "kiln schedule needs --selector=S (a call index, a fused function name or an ONNX layer "
        "name)");
  }
  kiln::v1::ScheduleRecordRequest request;
  *request.mutable_compile() = *std::move(compile);
  request.set_selector(*selector);
  request.set_verify(line.Bool("verify"));

  std::unique_ptr<kiln::v1::Compiler::Stub> stub =
      kiln::v1::Compiler::NewStub(MakeChannel(connection));
  std::unique_ptr<grpc::ClientContext> context = MakeContext(connection);
  kiln::v1::ScheduleRecord record;
  grpc::Status status = stub->GetScheduleRecord(context.get(), request, &record);
  if (!status.ok()) return ReportRpcError(status);

  std::cout << "kernel " << record.kernel();
  if (!record.spans().empty())
    std::cout << " (layers: " << absl::StrJoin(record.spans(), ", ") << ")";
  std::cout << "\ncompile id: " << record.compile_id() << "\n";

  int mismatches = 0;
  const kiln::v1::ScheduleStep* previous = nullptr;
  for (const kiln::v1::ScheduleStep& step : record.steps()) {
    std::cout << absl::StrFormat("\nstep %d: %s(%s)%s\n", step.step(), step.primitive(),
                                 absl::StrJoin(step.arguments(), ", "), VerifiedNote(step));
    if (previous == nullptr) {
      std::cout << step.loop_ir();
      if (!step.loop_ir().empty() && step.loop_ir().back() != '\n') std::cout << "\n";
    } else {
      std::string diff =
          UnifiedDiff(previous->loop_ir(), step.loop_ir(), StepLabel(*previous), StepLabel(step));
      std::cout << (diff.empty() ? "(loop IR unchanged)\n" : diff);
    }
    if (step.has_verified() && !step.verified()) ++mismatches;
    previous = &step;
  }
  if (mismatches > 0) {
    return ReportLocalError(absl::StrCat(mismatches,
                                         " schedule step(s) compute something "
                                         "different from step 0"));
  }
  return kExitOk;
}

}  // namespace kiln::cli
