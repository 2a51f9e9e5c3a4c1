// Test fixtures for the libgit2 code: real repositories built with the git CLI in temporary
// directories. The CLI runs without the user's global and system configuration, so its output
// (the oracle the tests compare against) does not depend on who runs the tests.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "test_support.hpp"

namespace abh::test {

namespace fs = std::filesystem;

struct CommandResult {
  int status = -1;
  std::string out;  // stdout only, byte for byte
};

inline CommandResult run_command(const std::string& cmd) {
  CommandResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed: " + cmd);
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline std::string sh(const std::string& cmd) {
  CommandResult r = run_command(cmd);
  if (r.status != 0)
    throw std::runtime_error("command failed (" + std::to_string(r.status) + "): " + cmd);
  return r.out;
}

inline std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

inline std::string quote(const fs::path& p) {
  return "'" + p.string() + "'";
}

// A git CLI with a fixed, private configuration. --no-optional-locks keeps `git status` from
// refreshing the index, which the tests watch for unwanted writes.
inline std::string git_cli(const fs::path& dir) {
  return "cd " + quote(dir) +
         " && GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git --no-optional-locks "
         "-c user.name=t -c user.email=t@t -c init.defaultBranch=main "
         "-c protocol.file.allow=always -c core.autocrlf=false -c advice.detachedHead=false ";
}

inline void write_file(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void set_executable(const fs::path& p, bool on) {
  using fs::perms;
  fs::permissions(p, perms::owner_exec | perms::group_exec | perms::others_exec,
                  on ? fs::perm_options::add : fs::perm_options::remove);
}

class GitRepo {
 public:
  explicit GitRepo(fs::path root) : root_(std::move(root)) {
    fs::create_directories(root_);
    git("init -q");
  }
  const fs::path& root() const { return root_; }
  std::string git(const std::string& args) const { return sh(git_cli(root_) + args); }
  void write(const std::string& rel, const std::string& content) const {
    write_file(root_ / rel, content);
  }
  std::string commit_all(const std::string& message) const {
    git("add -A");
    git("commit -q -m '" + message + "'");
    return head();
  }
  std::string head() const { return trim(git("rev-parse HEAD")); }

 private:
  fs::path root_;
};

// Everything about a directory tree that a build could see: each path's kind, executable bit and
// content (a symlink's target). Used to compare a materialization with `git archive`.
inline std::map<std::string, std::string> snapshot_tree(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const auto rel = it->path().lexically_relative(root).string();  // relative() follows links
    const auto st = it->symlink_status();
    if (fs::is_symlink(st))
      out[rel] = "link:" + fs::read_symlink(it->path()).string();
    else if (fs::is_directory(st))
      out[rel] = "dir";
    else
      out[rel] =
          std::string((st.permissions() & fs::perms::owner_exec) != fs::perms::none ? "exec:"
                                                                                    : "file:") +
          read_file(it->path());
  }
  return out;
}

// Any exception's message (the git CLI helpers throw std::runtime_error, the code under test
// abh::Error), or a marker that none was thrown.
template <typename F>
std::string any_error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no exception>";
}

}  // namespace abh::test
