// hiredis calls for RedisStore (see redis_store.h).
#include "service/redis_store.h"

#include <hiredis/hiredis.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace kiln::service {
namespace {

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

}  // namespace

RedisStore::RedisStore(RedisStoreOptions options) : options_(std::move(options)) {
  if (options_.address.rfind("unix:", 0) == 0) {
    unix_path_ = options_.address.substr(5);
    return;
  }
  size_t colon = options_.address.rfind(':');
  host_ = options_.address.substr(0, colon);
  if (colon == std::string::npos || !absl::SimpleAtoi(options_.address.substr(colon + 1), &port_)) {
    port_ = 6379;
    host_ = options_.address;
  }
}

RedisStore::~RedisStore() {
  if (context_ != nullptr) redisFree(context_);
}

bool RedisStore::up() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return up_;
}

bool RedisStore::ConnectLocked() {
  if (context_ != nullptr) return true;
  absl::Time now = absl::Now();
  if (now < next_attempt_) return false;
  next_attempt_ = now + options_.retry_interval;
  redisContext* context =
      unix_path_.empty()
          ? redisConnectWithTimeout(host_.c_str(), port_, absl::ToTimeval(options_.timeout))
          : redisConnectUnixWithTimeout(unix_path_.c_str(), absl::ToTimeval(options_.timeout));
  if (context == nullptr || context->err != 0 ||
      redisSetTimeout(context, absl::ToTimeval(options_.timeout)) != REDIS_OK) {
    std::string error = context != nullptr ? context->errstr : "out of memory";
    if (context != nullptr) redisFree(context);
    FailLocked(absl::StrCat("cannot connect: ", error));
    return false;
  }
  context_ = context;
  if (reported_down_) {
    std::fprintf(stderr, "kilnd: shared cache: Redis at %s is reachable again\n",
                 options_.address.c_str());
    reported_down_ = false;
  }
  up_ = true;
  return true;
}

void RedisStore::FailLocked(const std::string& what) {
  if (context_ != nullptr) {
    redisFree(context_);
    context_ = nullptr;
  }
  up_ = false;
  if (!reported_down_) {
    std::fprintf(stderr,
                 "kilnd: shared cache: Redis at %s is unavailable (%s); compiling with the local "
                 "cache only until it is back\n",
                 options_.address.c_str(), what.c_str());
    reported_down_ = true;
  }
}

std::optional<std::string> RedisStore::Get(const std::string& key, bool* unavailable) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto fail = [&](const std::string& what) -> std::optional<std::string> {
    FailLocked(what);
    if (unavailable != nullptr) *unavailable = true;
    return std::nullopt;
  };
  if (!ConnectLocked()) {
    if (unavailable != nullptr) *unavailable = true;
    return std::nullopt;
  }
  // The length first, so a value over the bound is never fetched.
  const char* strlen_argv[] = {"STRLEN", key.c_str()};
  const size_t strlen_lens[] = {6, key.size()};
  Reply length(static_cast<redisReply*>(redisCommandArgv(context_, 2, strlen_argv, strlen_lens)));
  if (length == nullptr) return fail(context_->errstr);
  if (length->type != REDIS_REPLY_INTEGER) return fail("STRLEN did not return an integer");
  if (length->integer == 0 || length->integer > options_.max_value_bytes) return std::nullopt;
  const char* get_argv[] = {"GET", key.c_str()};
  const size_t get_lens[] = {3, key.size()};
  Reply value(static_cast<redisReply*>(redisCommandArgv(context_, 2, get_argv, get_lens)));
  if (value == nullptr) return fail(context_->errstr);
  if (value->type == REDIS_REPLY_NIL) return std::nullopt;  // expired in between
  if (value->type != REDIS_REPLY_STRING) return fail("GET did not return a string");
  return std::string(value->str, value->len);
}

bool RedisStore::Set(const std::string& key, std::string_view value, absl::Duration ttl) {
  if (static_cast<int64_t>(value.size()) > options_.max_value_bytes) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!ConnectLocked()) return false;
  std::string seconds = absl::StrCat(std::max<int64_t>(1, absl::ToInt64Seconds(ttl)));
  const char* argv[] = {"SET", key.c_str(), value.data(), "EX", seconds.c_str()};
  const size_t lens[] = {3, key.size(), value.size(), 2, seconds.size()};
  Reply reply(static_cast<redisReply*>(redisCommandArgv(context_, 5, argv, lens)));
  if (reply == nullptr) {
    FailLocked(context_->errstr);
    return false;
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    // A refusal (out of memory under maxmemory, say) is this value's problem, not an outage.
    return false;
  }
  return true;
}

}  // namespace kiln::service
