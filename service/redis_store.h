// A connection to the Redis server behind kilnd's shared result cache (--cache-redis), through
// hiredis: GET and SET with a timeout on every command, bounded values, and the server's health.
// Redis down or slow is never a request's error: an operation that fails returns nothing, the
// store counts it, says so once in the log, and connects again at most once per retry interval,
// so a dead server costs a request nothing after the first timeout.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"

struct redisContext;

namespace kiln::service {

struct RedisStoreOptions {
  std::string address;  // host:port, or unix:/path/to/socket
  // Connecting and every command: past it, the operation has failed.
  absl::Duration timeout = absl::Milliseconds(250);
  absl::Duration retry_interval = absl::Seconds(1);
  // Longer values are neither stored nor read (a read checks the length before fetching).
  int64_t max_value_bytes = int64_t{64} << 20;
};

class RedisStore {
 public:
  explicit RedisStore(RedisStoreOptions options);
  ~RedisStore();
  RedisStore(const RedisStore&) = delete;
  RedisStore& operator=(const RedisStore&) = delete;

  // The value of `key`; nullopt when it is absent, longer than the bound, or Redis is unavailable
  // (then `*unavailable` is set when given).
  std::optional<std::string> Get(const std::string& key, bool* unavailable = nullptr);
  // Stores `value` under `key` for `ttl`; false when it is too long or Redis is unavailable.
  bool Set(const std::string& key, std::string_view value, absl::Duration ttl);
  // Whether the last operation reached Redis.
  bool up() const;

 private:
  // Connects when there is no connection and the retry interval has passed; true when connected.
  bool ConnectLocked();
  // Drops the connection after a failed command (logged once per outage).
  void FailLocked(const std::string& what);

  const RedisStoreOptions options_;
  std::string host_;
  int port_ = 0;
  std::string unix_path_;  // a unix: address
  mutable std::mutex mutex_;
  redisContext* context_ = nullptr;  // mutex_
  absl::Time next_attempt_ = absl::InfinitePast();  // mutex_
  bool up_ = false;  // mutex_
  bool reported_down_ = false;  // mutex_
};

}  // namespace kiln::service
