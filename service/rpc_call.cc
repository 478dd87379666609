#include "service/rpc_call.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace kiln::service {
namespace {

RpcCall::Clock::time_point DeadlineOf(const grpc::CallbackServerContext& context,
                                      absl::Duration default_deadline) {
  // Saturating: an infinite default is no deadline of kilnd's own.
  const RpcCall::Clock::time_point now = RpcCall::Clock::now();
  const auto room = std::chrono::duration_cast<std::chrono::nanoseconds>(
      RpcCall::Clock::time_point::max() - now);
  const auto wait = absl::ToChronoNanoseconds(default_deadline);
  RpcCall::Clock::time_point fallback = wait >= room ? RpcCall::Clock::time_point::max()
                                                     : now + std::chrono::duration_cast<
                                                                 RpcCall::Clock::duration>(wait);
  return std::min(context.deadline(), fallback);
}

}  // namespace

grpc::Status ForClient(grpc::Status status) {
  constexpr size_t kMaxMessageBytes = 4096;
  if (status.error_message().size() <= kMaxMessageBytes) return status;
  std::string message = status.error_message().substr(0, kMaxMessageBytes);
  absl::StrAppend(&message, "... (", status.error_message().size() - kMaxMessageBytes,
                  " more bytes)");
  return grpc::Status(status.error_code(), message, status.error_details());
}

std::string TruncatedForLog(const std::string& field) {
  if (field.size() <= kMaxLoggedFieldBytes) return field;
  return absl::StrCat(field.substr(0, kMaxLoggedFieldBytes), "...(", field.size(), " bytes)");
}

RpcCall::RpcCall(Rpc rpc, grpc::CallbackServerContext* context, absl::Duration default_deadline,
                 Metrics* metrics)
    : rpc_(rpc),
      context_(context),
      metrics_(metrics),
      start_(std::chrono::steady_clock::now()),
      deadline_(DeadlineOf(*context, default_deadline)) {}

RpcCall::~RpcCall() {
  if (alarm_state_ != nullptr) {
    std::lock_guard<std::recursive_mutex> lock(alarm_state_->mutex);
    alarm_state_->context = nullptr;
  }
  // Destroying the alarm cancels it; its callback then sees ok == false.
}

void RpcCall::ArmDeadline() {
  alarm_state_ = std::make_shared<AlarmState>();
  alarm_state_->context = context_;
  alarm_ = std::make_unique<grpc::Alarm>();
  alarm_->Set(deadline_, [state = alarm_state_](bool fired) {
    if (!fired) return;
    std::lock_guard<std::recursive_mutex> lock(state->mutex);
    if (state->context != nullptr) state->context->TryCancel();
  });
}

void RpcCall::Describe(std::string compile_id, std::string model_name) {
  compile_id_ = std::move(compile_id);
  model_name_ = std::move(model_name);
}

void RpcCall::End() {
  if (alarm_state_ != nullptr) {
    std::lock_guard<std::recursive_mutex> lock(alarm_state_->mutex);
    alarm_state_->context = nullptr;
  }
  if (on_end_) on_end_();
}

void RpcCall::Record(const grpc::Status& status) {
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  metrics_->ObserveRequest(rpc_, status.error_code());
  nlohmann::json line = {{"rpc", RpcName(rpc_)},
                         {"compile_id", compile_id_},
                         {"model", TruncatedForLog(model_name_)},
                         {"status", StatusCodeName(status.error_code())},
                         {"duration_ms", std::round(seconds * 1e6) / 1e3},
                         {"peer", TruncatedForLog(context_->peer())}};
  if (!status.ok()) line["message"] = TruncatedForLog(status.error_message());
  // Names from a model may be any bytes: invalid UTF-8 is replaced, not thrown.
  std::fprintf(stderr, "%s\n",
               line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace kiln::service
