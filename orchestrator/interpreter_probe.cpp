#include "interpreter_probe.hpp"

#include <unistd.h>

#include "model/worker_protocol.hpp"
#include "system/error.hpp"
#include "system/process.hpp"
#include "variants.hpp"

namespace abh {
namespace fs = std::filesystem;

std::string requested_interpreter(const std::string& flag, const std::vector<Variant>& variants) {
  if (!flag.empty()) return flag;
  std::string chosen;
  for (const auto& v : variants) {
    if (!v.is_python() || v.recipe.python->interpreter.empty()) continue;
    const std::string& named = v.recipe.python->interpreter;
    if (!chosen.empty() && chosen != named)
      throw UsageError("the baseline and candidate manifests name different interpreters ('" +
                       chosen + "', '" + named +
                       "'); a run has one: give --python to choose it for both");
    chosen = named;
  }
  return chosen.empty() ? "python3" : chosen;
}

namespace {

// The path that is run: a path as given (made absolute, symbolic links kept: a virtualenv's
// python is its path), or a name looked up on PATH.
fs::path executable_of(const std::string& requested) {
  fs::path exe;
  if (requested.find('/') != std::string::npos) {
    exe = fs::absolute(requested).lexically_normal();
  } else {
    try {
      exe = find_program(requested);
    } catch (const Error& e) {
      throw UsageError("Python interpreter '" + requested + "': " + e.what() +
                       ": install python3, or name an interpreter with --python");
    }
  }
  if (::access(exe.c_str(), X_OK) != 0)
    throw UsageError("Python interpreter " + exe.string() +
                     " is not an executable file: give one with --python, e.g. "
                     "--python /path/to/venv/bin/python3");
  return exe;
}

}  // namespace

Interpreter describe_interpreter(const std::string& requested, const fs::path& front_end,
                                 const fs::path& scratch) {
  const fs::path exe = executable_of(requested);
  json j;
  try {
    j = command_json(worker_protocol::python_interpreter_command(exe.string(), front_end),
                     "the Python front end's description of the interpreter", "python-interpreter",
                     scratch);
  } catch (const Error& e) {
    throw UsageError("Python interpreter " + exe.string() + " cannot describe itself: " + e.what() +
                     " (abharness runs Python plugins under CPython >= 3.9)");
  }
  Interpreter p = interpreter_from_json(j, "the description of " + exe.string());
  p.requested = requested;
  return p;
}

std::string interpreter_changes(const Interpreter& planned, const fs::path& front_end,
                                const fs::path& scratch) {
  const Interpreter now = describe_interpreter(planned.executable, front_end, scratch);
  return identity_json(now) == identity_json(planned) ? "" : describe_changes(planned, now);
}

}  // namespace abh
