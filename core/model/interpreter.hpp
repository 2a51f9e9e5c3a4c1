// The Python interpreter that runs a Python plugin's arms (docs/python.md). It is the user's,
// named with --python or the manifest (default: python3 on PATH), and it is part of what was
// measured: the plan records it once, with the list of distributions visible to it, and every
// result of a Python arm records it again as the arm saw it. Provenance compares the two; resume
// refuses when it changed and names what changed.
#pragma once

#include <string>
#include <vector>

#include "system/json_io.hpp"

namespace abh {

struct Interpreter {
  std::string requested;   // as given: --python, the manifest's "interpreter", or "python3"
  std::string executable;  // the absolute path that is run (a virtualenv's python is its path)
  std::string real_path;   // the binary behind it, symbolic links resolved
  std::string version;     // e.g. "3.12.3"
  std::string sha256;      // of real_path
  // SHA-256 over the sorted "name==version" of every distribution visible to the interpreter.
  std::string distributions_sha256;
  // The list itself: in the plan (so that a change can be named); empty in results.
  std::vector<std::string> distributions;
  // A cheap fingerprint of the interpreter's sys.path directories (path, mtime, the names of the
  // distribution metadata in them): while it equals the plan's, an arm need not list the
  // distributions again. Not part of the identity: a change only means "list them again".
  std::string site_sha256;
  bool operator==(const Interpreter&) const = default;
};

json to_json(const Interpreter& p);
Interpreter interpreter_from_json(const json& j, const std::string& where);

// The fields that identify the interpreter an arm ran under (what provenance compares): path,
// binary, version and distributions digest.
json identity_json(const Interpreter& p);

// What differs between `planned` and `now`, for a person: "version 3.12.3 -> 3.12.4; torch
// 2.11.0 -> 2.11.1; numpy 1.26.4 removed". Empty when their identities are equal.
std::string describe_changes(const Interpreter& planned, const Interpreter& now);

}  // namespace abh
