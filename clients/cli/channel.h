// How kiln reaches kilnd: the server address, TLS, the bearer token and the
// deadline, read from the global flags and the environment, and turned into
// a gRPC channel and per-call contexts.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "clients/cli/command_line.h"

namespace kiln::cli {

inline constexpr char kDefaultServer[] = "127.0.0.1:50051";
inline constexpr int kMaxReceiveMessageBytes = 512 << 20;

struct Connection {
  std::string server;
  std::string tls_ca_pem;  // empty: plaintext channel
  std::string token;       // empty: no authorization metadata
  // One deadline for the whole command, so a compile that needs two calls
  // (progress, then artifacts) still ends when the user said.
  std::chrono::system_clock::time_point deadline;
};

// Reads --server/KILN_SERVER (one address, a DNS name, or several addresses separated by
// commas), --tls-ca, --token/KILN_TOKEN and --deadline.
// Errors (unreadable CA file, bad duration) are usage errors.
absl::StatusOr<Connection> ConnectionFromFlags(const CommandLine& line);

// The gRPC target for --server: one address or DNS name as given (every address a name
// resolves to is used), or several IP:PORT addresses separated by commas ("ipv4:a,b,c").
absl::StatusOr<std::string> ChannelTarget(const std::string& server);

// A channel that balances calls round-robin over the target's addresses and retries
// UNAVAILABLE on another (clients/service_config.json).
std::shared_ptr<grpc::Channel> MakeChannel(const Connection& connection);

// A context carrying the deadline and the authorization metadata.
std::unique_ptr<grpc::ClientContext> MakeContext(const Connection& connection);

}  // namespace kiln::cli
