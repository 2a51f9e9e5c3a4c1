// The interpreter of a run's Python plugins (model/interpreter.hpp): which one (--python, else the
// manifests' "interpreter", else python3 on PATH), and what it is, as the Python front end
// describes it when run by that interpreter. Planning records it; resume checks that it is still
// the same.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/interpreter.hpp"
#include "model/plan.hpp"

namespace abh {

// The interpreter a run uses: `flag` (--python) when given; else the "interpreter" the Python
// variants' manifests name (they must agree); else "python3". UsageError when the manifests
// disagree and no flag settles it.
std::string requested_interpreter(const std::string& flag, const std::vector<Variant>& variants);

// Runs `requested` (a path, or a name looked up on PATH) on the Python front end (`front_end`, its
// script) and returns its identity, with the distributions it sees. UsageError naming the
// interpreter when it cannot be run or is not a usable CPython.
Interpreter describe_interpreter(const std::string& requested,
                                 const std::filesystem::path& front_end,
                                 const std::filesystem::path& scratch);

// What changed in the plan's interpreter since (its binary, version or distributions), described
// again now; empty when nothing did.
std::string interpreter_changes(const Interpreter& planned, const std::filesystem::path& front_end,
                                const std::filesystem::path& scratch);

}  // namespace abh
