// A run directory while its run is being planned: created new by this process, and removed with
// everything in it when the run fails before its plan is written (a check that failed, a plugin
// that refused a shape, a probe that failed), so that a failed start leaves nothing behind and its
// --run-id can be used again. A start that was killed leaves its directory; run and resume then
// say it holds no plan and how to remove it. A failed build is the exception: its log in the
// directory is the evidence the error names, and the directory stays (resume and run say what to
// do with it). The runs root goes too when this process created it and nothing else is in it.
#pragma once

#include <filesystem>
#include <string>

namespace abh {

class NewRunDir {
 public:
  // Creates runs_root/<id> (create_run_dir in planner.hpp: `id` is chosen when empty).
  NewRunDir(const std::filesystem::path& runs_root, std::string& id);
  ~NewRunDir();
  NewRunDir(const NewRunDir&) = delete;
  NewRunDir& operator=(const NewRunDir&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  // The plan is written, or a failed build's log is kept: the directory stays.
  void keep() { keep_ = true; }

 private:
  std::filesystem::path runs_root_;
  std::filesystem::path first_created_;  // the outermost directory of the runs root made here
  std::filesystem::path dir_;
  bool keep_ = false;
};

}  // namespace abh
