// What `abharness --version` prints: how this binary was built. The definition is generated at
// build time (cmake/build_info.cmake), so the git revision follows every commit.
#pragma once

#include <string>

namespace abh {

struct BuildInfo {
  std::string version;   // the release, as plans and results record it (system/version.hpp)
  std::string revision;  // `git describe --always --dirty` of abharness's sources, or "unknown"
  std::string compiler;  // "GNU 12.2.0, C++20"
  std::string cuda;      // the CUDA runtime, CUPTI and cuBLASLt versions, or "built without CUDA"
};

const BuildInfo& build_info();

// The --version text: one fact per line, the first being "abharness <version>".
std::string version_text(const BuildInfo& b);

}  // namespace abh
