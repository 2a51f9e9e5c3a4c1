#include "system/error.hpp"

#include <exception>

namespace abh {

void rethrow_with_context(const std::string& context) {
  try {
    throw;
  } catch (const UsageError& e) {
    throw UsageError(context + ": " + e.what());
  } catch (const std::exception& e) {
    throw Error(context + ": " + e.what());
  }
}

}  // namespace abh
