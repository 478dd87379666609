// `kiln health`: asks grpc.health.v1.Health/Check about kiln.v1.Compiler.
// Debian ships no generated health stubs for clients, so the two tiny
// messages are encoded by hand (HealthCheckRequest{string service = 1},
// HealthCheckResponse{ServingStatus status = 1}) and sent with GenericStub.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>

#include <future>
#include <iostream>
#include <vector>

#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"

namespace kiln::cli {
namespace {

using google::protobuf::internal::WireFormatLite;

constexpr char kHealthCheckMethod[] = "/grpc.health.v1.Health/Check";
constexpr char kCompilerService[] = "kiln.v1.Compiler";
constexpr int kServingStatusField = 1;
constexpr uint32_t kServing = 1;

std::string EncodeHealthCheckRequest(const std::string& service) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    WireFormatLite::WriteString(1, service, &out);
  }  // the coded stream flushes into `bytes` when destroyed
  return bytes;
}

// The status field of a HealthCheckResponse; 0 (UNKNOWN) when absent, as
// proto3 defaults say. False when the bytes are not a valid message.
bool DecodeServingStatus(const std::string& bytes, uint32_t* status) {
  *status = 0;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (uint32_t tag = in.ReadTag()) {
    if (tag == WireFormatLite::MakeTag(kServingStatusField, WireFormatLite::WIRETYPE_VARINT)) {
      if (!in.ReadVarint32(status)) return false;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

const char* ServingStatusName(uint32_t status) {
  switch (status) {
    case 1:
      return "SERVING";
    case 2:
      return "NOT_SERVING";
    case 3:
      return "SERVICE_UNKNOWN";
    default:
      return "UNKNOWN";
  }
}

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (!buffer.Dump(&slices).ok()) return bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

}  // namespace

int RunHealth(const CommandLine& /*line*/, const Connection& connection) {
  grpc::GenericStub stub(MakeChannel(connection));
  grpc::Slice request_slice(EncodeHealthCheckRequest(kCompilerService));
  grpc::ByteBuffer request(&request_slice, 1);
  grpc::ByteBuffer response;
  std::unique_ptr<grpc::ClientContext> context = MakeContext(connection);
  std::promise<grpc::Status> done;
  stub.UnaryCall(context.get(), kHealthCheckMethod, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(std::move(status)); });
  grpc::Status status = done.get_future().get();
  if (!status.ok()) return ReportRpcError(status);

  uint32_t serving;
  if (!DecodeServingStatus(Flatten(response), &serving)) {
    return ReportLocalError("the health service sent a response that is not a HealthCheckResponse");
  }
  std::cout << ServingStatusName(serving) << "\n";
  return serving == kServing ? kExitOk : kExitOther;
}

}  // namespace kiln::cli
