// HttpExchange over civetweb.
#include "clients/web/gateway/http_exchange.h"

#include <civetweb.h>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace kiln::explorer {
namespace {

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 422: return "Unprocessable Content";
    case 499: return "Client Closed Request";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Error";
  }
}

}  // namespace

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists: return 409;
    case absl::StatusCode::kResourceExhausted: return 413;
    case absl::StatusCode::kFailedPrecondition: return 422;
    case absl::StatusCode::kCancelled: return 499;
    case absl::StatusCode::kUnimplemented: return 501;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    default: return 502;
  }
}

HttpExchange::HttpExchange(mg_connection* connection) : connection_(connection) {
  const mg_request_info* info = mg_get_request_info(connection);
  method_ = info->request_method != nullptr ? info->request_method : "";
  path_ = info->local_uri != nullptr ? info->local_uri : "";
  query_ = info->query_string != nullptr ? info->query_string : "";
}

std::optional<std::string> HttpExchange::Query(const char* name) const {
  std::vector<std::string> values = QueryAll(name);
  if (values.empty()) return std::nullopt;
  return values.front();
}

std::vector<std::string> HttpExchange::QueryAll(const char* name) const {
  std::vector<std::string> values;
  // A decoded value is never longer than the query it comes from.
  std::string buffer(query_.size() + 1, '\0');
  for (size_t occurrence = 0;; ++occurrence) {
    int length = mg_get_var2(query_.data(), query_.size(), name, buffer.data(), buffer.size(),
                             occurrence);
    if (length < 0) break;
    values.emplace_back(buffer.data(), static_cast<size_t>(length));
  }
  return values;
}

absl::StatusOr<std::string> HttpExchange::ReadBody(int64_t max_bytes) {
  const long long length = mg_get_request_info(connection_)->content_length;
  if (length < 0) {
    return absl::InvalidArgumentError("the request has no Content-Length (chunked uploads are "
                                      "not taken)");
  }
  if (length > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("the upload is ", length,
                                                     " bytes; the gateway takes at most ",
                                                     max_bytes, " (--max-upload-bytes)"));
  }
  std::string body(static_cast<size_t>(length), '\0');
  size_t read = 0;
  while (read < body.size()) {
    int n = mg_read(connection_, body.data() + read, body.size() - read);
    if (n <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("the upload ended after ", read, " of ", length, " bytes"));
    }
    read += static_cast<size_t>(n);
  }
  return body;
}

void HttpExchange::SendBytes(int status, const std::string& content_type, const std::string& bytes,
                             const std::string& download_name) {
  std::string head = absl::StrCat("HTTP/1.1 ", status, " ", ReasonPhrase(status),
                                  "\r\nContent-Type: ", content_type,
                                  "\r\nContent-Length: ", bytes.size(),
                                  "\r\nCache-Control: no-store\r\n");
  if (!download_name.empty()) {
    absl::StrAppend(&head, "Content-Disposition: attachment; filename=\"", download_name, "\"\r\n");
  }
  absl::StrAppend(&head, "\r\n");
  mg_write(connection_, head.data(), head.size());
  mg_write(connection_, bytes.data(), bytes.size());
}

void HttpExchange::SendJson(int status, const std::string& json) {
  SendBytes(status, "application/json", json);
}

void HttpExchange::SendError(const absl::Status& status) {
  nlohmann::json body = {{"error",
                          {{"code", absl::StatusCodeToString(status.code())},
                           {"message", std::string(status.message())}}}};
  SendJson(HttpStatusFor(status.code()), body.dump());
}

void HttpExchange::StartEvents() {
  static constexpr char kHead[] =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
      "Connection: close\r\nX-Accel-Buffering: no\r\n\r\n";
  mg_write(connection_, kHead, sizeof(kHead) - 1);
}

bool HttpExchange::Event(std::string_view name, std::string_view data) {
  // `data` is one line of JSON: no newline can end the event early.
  std::string event = absl::StrCat("event: ", absl::string_view(name.data(), name.size()),
                                   "\ndata: ", absl::string_view(data.data(), data.size()), "\n\n");
  return mg_write(connection_, event.data(), event.size()) == static_cast<int>(event.size());
}

}  // namespace kiln::explorer
