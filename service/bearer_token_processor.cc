#include "service/bearer_token_processor.h"

#include <string_view>

namespace kiln::service {

grpc::Status BearerTokenProcessor::Process(const InputMetadata& auth_metadata,
                                           grpc::AuthContext*, OutputMetadata*,
                                           OutputMetadata*) {
  // Only the Compiler service needs a token. When gRPC does not show the
  // path, the call goes on and the service checks the token itself.
  auto path = auth_metadata.find(":path");
  if (path == auth_metadata.end()) return grpc::Status::OK;
  constexpr std::string_view kGuarded = "/kiln.v1.Compiler/";
  if (std::string_view(path->second.data(), path->second.size()).substr(0, kGuarded.size()) !=
      kGuarded) {
    return grpc::Status::OK;
  }
  auto authorization = auth_metadata.find("authorization");
  if (authorization == auth_metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "this server requires `authorization: Bearer <token>` metadata");
  }
  if (!tokens_->Accepts(
          std::string_view(authorization->second.data(), authorization->second.size()))) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the bearer token is not valid");
  }
  return grpc::Status::OK;
}

}  // namespace kiln::service
