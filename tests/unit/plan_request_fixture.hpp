// A request of `abharness run` as the planner's tests need it: a real repository with two commits
// (HEAD~1 the baseline, HEAD the candidate) and a grid of shapes the CPU GEMM plugin takes.
#pragma once

#include <string>
#include <vector>

#include "git_test_repo.hpp"
#include "model/grid.hpp"
#include "planner.hpp"
#include "system/json_io.hpp"

namespace abh::test {

// A grid file of square shapes m<m> (m = n = k).
inline void write_grid(const fs::path& path, const std::vector<int>& ms) {
  Grid g;
  for (int m : ms)
    g.shapes.push_back(Shape{"m" + std::to_string(m), "", json{{"m", m}, {"n", m}, {"k", m}}, ""});
  write_json_atomic(path, to_json(g));
}

struct Request {
  TempDir tmp{"abh-planner"};
  GitRepo repo{tmp.path() / "repo"};
  PlanRequest req;
  Request() {
    repo.write("kernel.cpp", "int k() { return 1; }\n");
    repo.commit_all("baseline");
    repo.write("kernel.cpp", "int k() { return 2; }\n");
    repo.commit_all("candidate");
    write_grid(tmp.path() / "grid.json", {32, 64});
    req.repo = repo.root().string();
    req.baseline = "HEAD~1";
    req.candidate = "HEAD";
    req.grid = (tmp.path() / "grid.json").string();
  }
  // What resolve_request refuses the request with.
  std::string refusal() const {
    return usage_error_of([&] { resolve_request(req); });
  }
};

}  // namespace abh::test
