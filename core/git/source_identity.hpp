// The handle-based form of compute_source_identity (core/model/identity.hpp), for code in core/git
// that already holds an open repository (submodules, materialization's final check).
#pragma once

#include <string>

#include "git/repository.hpp"
#include "model/identity.hpp"

namespace abh::git {

SourceIdentity source_identity(git_repository* repo, const std::string& rev);

}  // namespace abh::git
