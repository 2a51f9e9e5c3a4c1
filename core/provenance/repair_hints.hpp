// What a user can do about a run that failed provenance validation, by the kind of its problems.
#pragma once

#include <string>
#include <vector>

#include "provenance/provenance.hpp"

namespace abh {

// A line each, with `run_dir` as the commands name it: restore a changed plan or plugin, move
// results that fail their checks out of the run and resume (which measures those arms again), or
// resume to set aside results of blocks no longer called for. Empty when there are no problems.
std::vector<std::string> repair_hints(const Validation& v, const std::string& run_dir);

}  // namespace abh
