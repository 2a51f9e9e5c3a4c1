#include "provenance/results_scan.hpp"

#include "system/text.hpp"

namespace abh {

namespace {

// Whether the entry `e` of a shape's directory, at `rel`, is a planned result to read; an
// interrupted write is listed in `v.leftovers`, anything else is a problem in `v.problems`.
bool planned_result(const RunDirFs::Entry& e, const std::string& rel,
                    const std::unordered_map<std::string, const Task*>& planned, Validation& v) {
  using Kind = RunDirFs::Kind;
  if (e.kind == Kind::file && planned.count(rel)) return true;
  if (planned.count(rel)) {
    // A link, FIFO, device or directory where a planned result belongs is a malformed result. It
    // is never opened: reading a FIFO would block.
    v.problems.push_back({"result-format", printable(rel), "", "a regular file", e.what});
  } else if (e.kind == Kind::symlink) {
    v.problems.push_back(
        {"unplanned-file", printable(rel), "", "regular files only", "a symbolic link"});
  } else if (e.kind == Kind::file && e.name.size() > 1 && e.name[0] == '.' &&
             e.name.find(".tmp.") != std::string::npos) {
    v.leftovers.push_back(rel);
  } else {
    v.problems.push_back({"unplanned-file", printable(rel), "",
                          "only planned results/<shape>/<arm>.json",
                          e.kind == Kind::file ? "a file the plan does not list" : e.what});
  }
  return false;
}

}  // namespace

std::set<std::string> scan_results(const RunDirFs& run, const PlanIndex& plan,
                                   const std::unordered_map<std::string, const Task*>& planned,
                                   Validation& v) {
  std::set<std::string> present;
  using Kind = RunDirFs::Kind;
  const Kind top = run.kind("results");
  if (top == Kind::absent) return present;
  if (top != Kind::directory) {
    v.problems.push_back({"unplanned-file", "results", "", "a directory",
                          top == Kind::symlink ? "a symbolic link" : "not a directory"});
    return present;
  }
  for (const auto& shape_dir : run.list("results")) {
    const std::string rel_dir = "results/" + shape_dir.name;
    if (shape_dir.kind == Kind::symlink) {
      v.problems.push_back(
          {"unplanned-file", printable(rel_dir), "", "regular files only", "a symbolic link"});
      continue;
    }
    if (shape_dir.kind != Kind::directory) {
      if (!planned.count(rel_dir))
        v.problems.push_back({"unplanned-file", printable(rel_dir), "",
                              "only planned results/<shape>/<arm>.json",
                              "a file the plan does not list"});
      continue;
    }
    if (!plan.shape(shape_dir.name))
      v.problems.push_back(
          {"unplanned-file", printable(rel_dir), "", "a planned shape directory", "other"});
    for (const auto& e : run.list(rel_dir))
      if (planned_result(e, rel_dir + "/" + e.name, planned, v))
        present.insert(rel_dir + "/" + e.name);
  }
  return present;
}

}  // namespace abh
