// What became of one planned arm after provenance validation: a valid result, or a failure with
// its reason (crash, timeout, wrong output, missing). Statistics and reports take these.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/boxed.hpp"
#include "model/result.hpp"
#include "model/schedule.hpp"

namespace abh {

struct ArmOutcome {
  Task task;
  Boxed<ArmResult> result;  // set only for a result that passed validation
  std::string failure;      // why there is no result: "exit code 3: ...", "not run"
};

}  // namespace abh
