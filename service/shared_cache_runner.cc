// The shared result cache's Compile path (see shared_cache_runner.h).
#include "service/shared_cache_runner.h"

#include <openssl/sha.h>

#include "absl/strings/str_cat.h"
#include "service/compile_request.h"
#include "service/sha256.h"

namespace kiln::service {
namespace {

constexpr char kMagic[] = "KILN1";
constexpr size_t kMagicBytes = sizeof(kMagic) - 1;

std::string RawSha256(std::string_view bytes) {
  std::string digest(SHA256_DIGEST_LENGTH, '\0');
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(),
         reinterpret_cast<unsigned char*>(digest.data()));
  return digest;
}

}  // namespace

std::string SharedCacheKey(const v1::CompileRequest& request, const std::string& compile_id) {
  std::string content = absl::StrCat(compile_id, "\n", request.name(), "\n");
  for (int kind : request.artifacts()) absl::StrAppend(&content, kind, ",");
  return absl::StrCat("kiln:v1:response:", Sha256Hex(content));
}

std::string EncodeSharedValue(const v1::CompileResponse& response) {
  std::string bytes;
  response.SerializeToString(&bytes);
  return absl::StrCat(kMagic, RawSha256(bytes), bytes);
}

bool DecodeSharedValue(const std::string& value, const std::string& compile_id,
                       v1::CompileResponse* response) {
  const size_t header = kMagicBytes + SHA256_DIGEST_LENGTH;
  if (value.size() < header || value.compare(0, kMagicBytes, kMagic) != 0) return false;
  std::string_view bytes(value.data() + header, value.size() - header);
  if (RawSha256(bytes) != std::string_view(value.data() + kMagicBytes, SHA256_DIGEST_LENGTH)) {
    return false;
  }
  v1::CompileResponse decoded;
  if (!decoded.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      decoded.compile_id() != compile_id) {
    return false;
  }
  *response = std::move(decoded);
  return true;
}

grpc::Status SharedCacheJobRunner::Compile(JobControl& control, const v1::CompileRequest& request,
                                           v1::CompileResponse* response) {
  const std::string compile_id = CompileId(request);
  // This process's cache answers faster than a round trip to Redis.
  if (local_ != nullptr && local_->Find(compile_id) != nullptr) {
    return inner_->Compile(control, request, response);
  }
  const std::string key = SharedCacheKey(request, compile_id);
  bool unavailable = false;
  std::optional<std::string> value = store_->Get(key, &unavailable);
  metrics_->SetSharedCacheUp(!unavailable);
  if (value) {
    if (DecodeSharedValue(*value, compile_id, response)) {
      metrics_->SharedCacheHit();
      control.Describe(compile_id, request.name());
      return grpc::Status::OK;
    }
    metrics_->SharedCacheCorrupt();
  } else if (unavailable) {
    metrics_->SharedCacheUnavailable();
  } else {
    metrics_->SharedCacheMiss();
  }
  grpc::Status status = inner_->Compile(control, request, response);
  if (status.ok() && !unavailable) {
    if (!store_->Set(key, EncodeSharedValue(*response), ttl_) && !store_->up()) {
      metrics_->SharedCacheUnavailable();
    }
  }
  metrics_->SetSharedCacheUp(store_->up());
  return status;
}

}  // namespace kiln::service
