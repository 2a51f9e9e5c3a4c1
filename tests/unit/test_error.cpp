// Errors carry context: rethrow_with_context prefixes where it happened and keeps the type, so a
// usage error stays a usage error (exit 2) however deep it was thrown.
#include <doctest/doctest.h>

#include <stdexcept>

#include "system/error.hpp"

using namespace abh;

namespace {

template <typename E>
void throw_in_context(const E& e) {
  try {
    throw e;
  } catch (...) {
    rethrow_with_context("reading plan.json");
  }
}

}  // namespace

TEST_CASE("error: context is prefixed and a usage error stays one") {
  CHECK_THROWS_WITH_AS(throw_in_context(UsageError("bad flag")), "reading plan.json: bad flag",
                       UsageError);
  CHECK_THROWS_WITH_AS(throw_in_context(Error("disk full")), "reading plan.json: disk full", Error);
  // Any standard exception becomes an abh::Error with the context, not a usage error.
  try {
    throw_in_context(std::out_of_range("index 3"));
    FAIL("nothing was thrown");
  } catch (const UsageError&) {
    FAIL("a std::out_of_range became a usage error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "reading plan.json: index 3");
  }
}
