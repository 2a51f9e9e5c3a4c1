#include "new_run_dir.hpp"

#include <iostream>

#include "planner.hpp"

namespace abh {
namespace fs = std::filesystem;

NewRunDir::NewRunDir(const fs::path& runs_root, std::string& id) : runs_root_(runs_root) {
  std::error_code ec;
  for (fs::path p = runs_root; !p.empty() && !fs::exists(fs::symlink_status(p, ec));
       p = p.parent_path()) {
    first_created_ = p;
    if (p == p.parent_path()) break;
  }
  dir_ = create_run_dir(runs_root, id);
}

NewRunDir::~NewRunDir() {
  if (keep_) return;
  // The directory was made new by this process (create_run_dir never reuses one), and everything
  // in it since; remove_all removes symbolic links, never what they point to.
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (ec) {
    std::cerr << "could not remove " << dir_.string() << " after the failed start: " << ec.message()
              << "\n";
    return;
  }
  std::cerr << "removed " << dir_.string() << ": the run failed before its first arm\n";
  // Only empty directories, from the runs root out to the first one this process made.
  if (first_created_.empty()) return;
  for (fs::path p = runs_root_;; p = p.parent_path()) {
    if (!fs::remove(p, ec) || p == first_created_ || p == p.parent_path()) break;
  }
}

}  // namespace abh
