// A failure that ends the worker with a given exit code (model/worker_protocol.hpp): an
// unsupported request, or a wrong result. Other failures map to an exit code by their type
// (worker/main.cpp).
#pragma once

#include <string>

#include "model/worker_protocol.hpp"
#include "system/error.hpp"

namespace abh::worker {

struct ExitError : Error {
  ExitError(worker_protocol::ExitCode code, const std::string& what) : Error(what), code(code) {}
  worker_protocol::ExitCode code;
};

}  // namespace abh::worker
