// The commits `abharness bisect` searches: the first-parent path from a good commit to a bad one,
// as `git rev-list --first-parent good..bad` lists them (merged branches are one step, so every
// commit on the path is one that was on the main line).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "bisect/spec.hpp"

namespace abh::git {

// [good, ..., bad], oldest first, with their subjects. Throws abh::Error naming both revisions
// when good is not on bad's first-parent chain, or when they are the same commit.
std::vector<bisect::BisectCommit> first_parent_path(const std::filesystem::path& repo,
                                                    const std::string& good,
                                                    const std::string& bad);

}  // namespace abh::git
