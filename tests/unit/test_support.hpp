// Small fixtures shared by the unit tests: a temporary directory owned by a test, and whole-file
// reads and writes.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "system/error.hpp"

namespace abh::test {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "abh-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = std::filesystem::canonical(tmpl);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The whole file, or "" when it cannot be read (a /proc entry of a process that is gone).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// The message of the abh::Error `f` throws, or a marker that it threw none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const abh::Error& e) {
    return e.what();
  }
  return "(no abh::Error thrown)";
}

// The message of the abh::UsageError `f` throws, or a marker that it threw none: a plain Error
// would end a command as an internal error (exit 1) instead of a refusal the user can fix (exit 2).
inline std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const abh::UsageError& e) {
    return e.what();
  }
  return "(no abh::UsageError thrown)";
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace abh::test
