// One HTTP request to the gateway and its response, over civetweb's C API: query parameters,
// a bounded body, JSON and error replies, and a server-sent event stream.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct mg_connection;
struct mg_request_info;

namespace kiln::explorer {

class HttpExchange {
 public:
  explicit HttpExchange(mg_connection* connection);

  const std::string& method() const { return method_; }
  // The path without the query (decoded by civetweb).
  const std::string& path() const { return path_; }
  // The first value of query parameter `name`, decoded; nullopt when absent.
  std::optional<std::string> Query(const char* name) const;
  // Every value of a repeated query parameter.
  std::vector<std::string> QueryAll(const char* name) const;

  // The request body, refused before reading when it is larger than `max_bytes` (or its length
  // is not given): RESOURCE_EXHAUSTED / INVALID_ARGUMENT naming the limit.
  absl::StatusOr<std::string> ReadBody(int64_t max_bytes);

  void SendJson(int status, const std::string& json);
  void SendBytes(int status, const std::string& content_type, const std::string& bytes,
                 const std::string& download_name = "");
  // {"error": {"code": "INVALID_ARGUMENT", "message": ...}} with the HTTP status for `status`.
  void SendError(const absl::Status& status);

  // Starts a text/event-stream response; Event() then sends one event and returns false once
  // the client is gone.
  void StartEvents();
  bool Event(std::string_view name, std::string_view data);

 private:
  mg_connection* connection_;
  std::string method_, path_, query_;
};

// The HTTP status for a status code (INVALID_ARGUMENT 400, NOT_FOUND 404, UNAVAILABLE 503, ...).
int HttpStatusFor(absl::StatusCode code);

}  // namespace kiln::explorer
