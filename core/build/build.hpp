// Builds a materialized variant with its recipe, and caches the artifact by
// (source identity, recipe, toolchain identity): a second run with the same revisions builds
// nothing, and says so in the variant's build log.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "model/identity.hpp"
#include "model/manifest.hpp"

namespace abh {

struct BuildOutcome {
  std::filesystem::path plugin;  // the plugin copied into the variant directory
  std::string plugin_sha256;
  std::string cache_key;
  std::string recipe_sha256;
  std::string toolchain_id;  // resolved compiler path + SHA-256 of that binary
  bool cache_hit = false;
  std::filesystem::path log;  // the build log inside the variant directory
};

// `src` holds the materialized sources; `variant_dir` receives build.log and the plugin;
// `cache_root` holds one directory per cache key. A failed build throws with the tail of its log.
// `before_compiling` is called once before the recipe runs, never for a cached build: the
// orchestrator waits there for a measurement that a compile would load.
BuildOutcome build_variant(const BuildRecipe& recipe, const std::filesystem::path& src,
                           const SourceIdentity& id, const std::filesystem::path& cache_root,
                           const std::filesystem::path& variant_dir,
                           const std::function<void()>& before_compiling = {});

// A cached build's artifact named `artifact_name` whose bytes have SHA-256 `sha256` (what a plan
// records of its plugin), for restoring a plugin replaced in a run directory; nullopt when the
// cache at `cache_root` holds none. Entries are matched by their meta.json, then hashed.
std::optional<std::filesystem::path> cached_artifact(const std::filesystem::path& cache_root,
                                                     const std::string& artifact_name,
                                                     const std::string& sha256);

}  // namespace abh
