// Errors carry context: the file, the field and the fix travel with the exception so the message a
// user finally sees can name all three.
#pragma once

#include <stdexcept>
#include <string>

namespace abh {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A failure that a user caused and can fix (bad flag, bad file). The CLI maps it to the usage
// exit code.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& what) : Error(what) {}
};

// A run directory whose evidence does not hold: an edited plan, a result that is not this plan's.
// The CLI maps it to the provenance exit code (3); a worker, to "bad plan". It is a UsageError
// because the user, not abharness, must act (start a new run).
class ProvenanceError : public UsageError {
 public:
  explicit ProvenanceError(const std::string& what) : UsageError(what) {}
};

// Prefixes an error with where it happened, keeping its type.
[[noreturn]] void rethrow_with_context(const std::string& context);

}  // namespace abh
