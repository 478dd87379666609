// Channel and call-context construction. The token travels as call metadata
// rather than call credentials because gRPC refuses call credentials on a
// plaintext channel, and a loopback kilnd with a token file is a real setup.
#include "clients/cli/channel.h"

#include <grpc/support/log.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <arpa/inet.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "clients/cli/service_config.h"
#include "absl/time/time.h"

namespace kiln::cli {
namespace {

std::string FlagOrEnv(const CommandLine& line, absl::string_view flag, const char* env,
                      std::string fallback) {
  if (std::optional<std::string> value = line.Value(flag)) return *value;
  if (const char* value = std::getenv(env); value != nullptr && *value != '\0') return value;
  return fallback;
}

// gRPC core logs TLS handshake failures and the like on stderr, on top of
// the status the call returns (which kiln prints). GRPC_VERBOSITY, when set,
// asks for those logs back.
void DropGrpcLog(gpr_log_func_args* /*args*/) {}

}  // namespace

absl::StatusOr<Connection> ConnectionFromFlags(const CommandLine& line) {
  Connection connection;
  connection.server = FlagOrEnv(line, "server", "KILN_SERVER", kDefaultServer);
  if (connection.server.empty()) return absl::InvalidArgumentError("--server is empty");
  if (absl::Status valid = ChannelTarget(connection.server).status(); !valid.ok()) return valid;
  connection.token = FlagOrEnv(line, "token", "KILN_TOKEN", "");

  if (std::optional<std::string> ca_path = line.Value("tls-ca")) {
    std::ifstream file(*ca_path, std::ios::binary);
    if (!file)
      return absl::InvalidArgumentError(absl::StrCat("cannot read --tls-ca file '", *ca_path, "'"));
    std::ostringstream pem;
    pem << file.rdbuf();
    connection.tls_ca_pem = pem.str();
    if (connection.tls_ca_pem.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--tls-ca file '", *ca_path, "' is empty"));
    }
  }

  absl::Duration deadline = absl::Seconds(30);
  if (std::optional<std::string> text = line.Value("deadline")) {
    if (!absl::ParseDuration(*text, &deadline) || deadline <= absl::ZeroDuration() ||
        deadline == absl::InfiniteDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--deadline: '", *text, "' is not a positive duration (e.g. 30s, 2m, 1h30m, 500ms)"));
    }
  }
  connection.deadline = std::chrono::system_clock::now() +
                        std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            absl::ToChronoNanoseconds(deadline));
  return connection;
}

absl::StatusOr<std::string> ChannelTarget(const std::string& server) {
  if (server.find(',') == std::string::npos) return server;
  std::vector<std::string> addresses = absl::StrSplit(server, ',');
  bool ipv6 = !addresses.empty() && absl::StartsWith(addresses[0], "[");
  for (const std::string& address : addresses) {
    size_t colon = address.rfind(':');
    std::string host = colon == std::string::npos ? "" : address.substr(0, colon);
    int port = 0;
    bool valid = colon != std::string::npos && absl::SimpleAtoi(address.substr(colon + 1), &port) &&
                 port > 0 && port < 65536;
    if (ipv6) {
      valid = valid && absl::StartsWith(host, "[") && absl::EndsWith(host, "]");
    } else {
      in_addr parsed;
      valid = valid && inet_pton(AF_INET, host.c_str(), &parsed) == 1;
    }
    if (!valid) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--server: '", address, "' in a list of addresses must be IP:PORT (all IPv4, or all "
          "[IPv6]:PORT); to balance over a name's addresses, give the one name"));
    }
  }
  return absl::StrCat(ipv6 ? "ipv6:" : "ipv4:", server);
}

std::shared_ptr<grpc::Channel> MakeChannel(const Connection& connection) {
  if (std::getenv("GRPC_VERBOSITY") == nullptr) gpr_set_log_function(DropGrpcLog);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (connection.tls_ca_pem.empty()) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = connection.tls_ca_pem;
    credentials = grpc::SslCredentials(options);
  }
  grpc::ChannelArguments arguments;
  // Artifacts and IR dumps of a large model exceed gRPC's 4 MiB default.
  arguments.SetMaxReceiveMessageSize(kMaxReceiveMessageBytes);
  arguments.SetServiceConfigJSON(kServiceConfigJson);
  // ConnectionFromFlags validated the server: the target is there.
  return grpc::CreateCustomChannel(*ChannelTarget(connection.server), credentials, arguments);
}

std::unique_ptr<grpc::ClientContext> MakeContext(const Connection& connection) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(connection.deadline);
  if (!connection.token.empty()) {
    context->AddMetadata("authorization", absl::StrCat("Bearer ", connection.token));
  }
  return context;
}

}  // namespace kiln::cli
