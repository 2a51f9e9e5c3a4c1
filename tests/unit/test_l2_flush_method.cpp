// The L2 flush methods a GPU worker offers (worker/l2_flush_method.cpp): their names, the bench's
// choice through the environment, and the cache preparation a result records. The flushes
// themselves run on a GPU (tests/gpu/l2_cold_warm.sh proves each one empties the L2).
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>

#include "l2_flush_method.hpp"
#include "model/worker_protocol.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
using namespace abh::worker;

namespace {

// Sets ABH_L2_FLUSH for the life of the object (unset when `value` is null), then restores it.
class FlushEnv {
 public:
  explicit FlushEnv(const char* value) {
    const char* old = std::getenv(worker_protocol::kL2FlushEnv);
    had_ = old != nullptr;
    if (had_) old_ = old;
    set(value);
  }
  ~FlushEnv() { set(had_ ? old_.c_str() : nullptr); }

 private:
  static void set(const char* v) {
    if (v)
      ::setenv(worker_protocol::kL2FlushEnv, v, 1);
    else
      ::unsetenv(worker_protocol::kL2FlushEnv);
  }
  bool had_ = false;
  std::string old_;
};

}  // namespace

TEST_CASE("l2 flush: every method has a distinct name that parses back to it") {
  std::set<std::string_view> names;
  for (const auto& info : l2_flush_methods()) {
    CHECK(names.insert(info.name).second);
    CHECK(parse_l2_flush_method(info.name, "test") == info.method);
    CHECK(l2_flush_method_name(info.method) == info.name);
    CHECK_FALSE(info.what.empty());
  }
  CHECK(names == std::set<std::string_view>{"memset", "read", "memset-read", "memset-discard"});
}

TEST_CASE("l2 flush: an unknown name is refused, naming where it came from and every method") {
  const std::string e =
      test::error_of([] { parse_l2_flush_method("discard", worker_protocol::kL2FlushEnv); });
  CHECK(e ==
        "ABH_L2_FLUSH is 'discard', which is no L2 flush method: use one of memset, read, "
        "memset-read, memset-discard, or leave it unset for the default (read)");
  CHECK_THROWS_AS(parse_l2_flush_method("", "x"), UsageError);
}

TEST_CASE("l2 flush: the environment chooses the method, unset or empty keeps the default") {
  {
    FlushEnv env(nullptr);
    CHECK(l2_flush_method_from_env() == default_l2_flush_method());
  }
  {
    FlushEnv env("");
    CHECK(l2_flush_method_from_env() == default_l2_flush_method());
  }
  {
    FlushEnv env("memset-read");
    CHECK(l2_flush_method_from_env() == L2FlushMethod::memset_read);
  }
  {
    FlushEnv env("Memset");
    CHECK_THROWS_AS(l2_flush_method_from_env(), UsageError);
  }
}

TEST_CASE("l2 flush: a result's cache preparation names the method and the buffer size") {
  CHECK(flush_cache_preparation(L2FlushMethod::memset, 125829120) ==
        "flush-memset 125829120 bytes");
  CHECK(flush_cache_preparation(L2FlushMethod::memset_discard, 16777216) ==
        "flush-memset-discard 16777216 bytes");
  CHECK(kWarmCachePreparation == "warm");
}
