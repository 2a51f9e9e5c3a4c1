// The listing of a run's results/ directory that validation trusts: which planned results are
// there to be read, which files are interrupted writes, and what else is there as problems.
#pragma once

#include <set>
#include <string>
#include <unordered_map>

#include "model/plan.hpp"
#include "model/plan_index.hpp"
#include "provenance/provenance.hpp"
#include "system/run_dir_fs.hpp"

namespace abh {

// Lists the files under results/, without following links: planned results are returned
// (run-relative), hidden temp files are interrupted atomic writes (the rename never happened) and
// are listed as leftovers, not trusted, and everything else (an unplanned file or directory, a
// symbolic link, results/ itself a link, a link or FIFO at a planned result's name) is a problem.
// `planned`: relative result path -> task.
std::set<std::string> scan_results(const RunDirFs& run, const PlanIndex& plan,
                                   const std::unordered_map<std::string, const Task*>& planned,
                                   Validation& v);

}  // namespace abh
