// Under TLS, gRPC hands every call's headers to an AuthMetadataProcessor
// before it reads the request: this one refuses Compiler calls without a
// valid bearer token there, so a 512 MiB request from a client without a
// token is never received whole. Health and reflection stay open. Plaintext
// listeners have no such hook; the service's own check (the same tokens)
// refuses there before anything of the request is looked at.
#pragma once

#include "grpcpp/security/auth_metadata_processor.h"
#include "service/bearer_tokens.h"

namespace kiln::service {

class BearerTokenProcessor final : public grpc::AuthMetadataProcessor {
 public:
  explicit BearerTokenProcessor(const BearerTokens* tokens) : tokens_(tokens) {}

  // Comparing digests is quick: no need for a thread of its own.
  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

 private:
  const BearerTokens* tokens_;
};

}  // namespace kiln::service
