#include "model/identity.hpp"

#include "system/error.hpp"
#include "system/sha256.hpp"

namespace abh {

std::string identity_digest(const SourceIdentity& id) {
  Sha256 h;
  h.field("abharness-source-identity-v1").field(id.kind).field(id.commit);
  h.field(id.tracked_diff_sha256).field(id.untracked_sha256);
  for (const auto& s : id.submodules)
    h.field(s.path).field(s.commit).field(s.dirty ? "1" : "0").field(s.content_sha256);
  return h.hex();
}

json to_json(const SourceIdentity& id) {
  json subs = json::array();
  for (const auto& s : id.submodules)
    subs.push_back({{"path", s.path},
                    {"commit", s.commit},
                    {"dirty", s.dirty},
                    {"content_sha256", s.content_sha256}});
  return json{{"requested", id.requested},
              {"kind", id.kind},
              {"commit", id.commit},
              {"tracked_diff_sha256", id.tracked_diff_sha256},
              {"untracked_sha256", id.untracked_sha256},
              {"submodules", subs},
              {"digest", id.digest}};
}

SourceIdentity source_identity_from_json(const json& j, const std::string& where) {
  SourceIdentity id;
  id.requested = field<std::string>(j, "requested", where);
  id.kind = field<std::string>(j, "kind", where);
  if (id.kind != "commit" && id.kind != "worktree")
    throw Error(where + ": field 'kind': '" + id.kind + "' is neither commit nor worktree");
  id.commit = field<std::string>(j, "commit", where);
  id.tracked_diff_sha256 = field<std::string>(j, "tracked_diff_sha256", where);
  id.untracked_sha256 = field<std::string>(j, "untracked_sha256", where);
  auto it = j.find("submodules");
  if (it == j.end() || !it->is_array())
    throw Error(where + ": field 'submodules': expected an array");
  for (size_t i = 0; i < it->size(); ++i) {
    std::string w = where + ".submodules[" + std::to_string(i) + "]";
    SubmoduleState s;
    s.path = field<std::string>((*it)[i], "path", w);
    s.commit = field<std::string>((*it)[i], "commit", w);
    s.dirty = field<bool>((*it)[i], "dirty", w);
    s.content_sha256 = field<std::string>((*it)[i], "content_sha256", w);
    id.submodules.push_back(std::move(s));
  }
  id.digest = field<std::string>(j, "digest", where);
  if (id.digest != identity_digest(id))
    throw Error(where +
                ": field 'digest': does not match the identity's other fields "
                "(the file was edited or damaged)");
  return id;
}

}  // namespace abh
