#include "system/json_large.hpp"

#include <algorithm>

#include "system/error.hpp"

namespace abh {
namespace {

// An element of a top-level array as json::dump(2) lays it out: every line indented by two more
// levels. A JSON string never holds a raw line break, so every '\n' of the element's own text
// starts a line.
void append_indented(std::string& out, const std::string& text) {
  out.append(4, ' ');
  std::size_t from = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    out.append(text, from, nl + 1 - from).append(4, ' ');
    from = nl + 1;
  }
  out.append(text, from, std::string::npos);
}

// The body of one array, and its canonical text into `digest` when given.
std::string body_of(const LargeArray& a, Sha256* digest) {
  std::string body;
  if (digest) digest->update("[");
  for (std::size_t i = 0; i < a.size; ++i) {
    const json e = a.element(i);
    if (i) body.append(",\n");
    append_indented(body, e.dump(2));
    if (digest) digest->update(i ? "," : "").update(canonical(e));
  }
  if (digest) digest->update("]");
  return body;
}

const LargeArray* large_named(const std::vector<LargeArray>& arrays, const std::string& key) {
  for (const auto& a : arrays)
    if (a.key == key) return &a;
  return nullptr;
}

}  // namespace

void update_canonical(Sha256& digest, const json& value) {
  if (!value.is_array()) {
    digest.update(canonical(value));
    return;
  }
  digest.update("[");
  for (std::size_t i = 0; i < value.size(); ++i)
    digest.update(i ? "," : "").update(canonical(value[i]));
  digest.update("]");
}

std::vector<std::string> large_bodies(const json& object, const std::vector<LargeArray>& arrays,
                                      Sha256* digest, const std::string& skip) {
  std::vector<std::string> bodies(arrays.size());
  if (!digest) {
    for (std::size_t i = 0; i < arrays.size(); ++i) bodies[i] = body_of(arrays[i], nullptr);
    return bodies;
  }
  // canonical() member by member, in the object's (sorted) key order.
  digest->update("{");
  bool first = true;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (it.key() == skip) continue;
    digest->update(first ? "" : ",").update(json(it.key()).dump()).update(":");
    first = false;
    if (const LargeArray* a = large_named(arrays, it.key()))
      bodies[a - arrays.data()] = body_of(*a, digest);
    else
      update_canonical(*digest, it.value());
  }
  digest->update("}");
  return bodies;
}

std::string splice_pretty(const json& object, const std::vector<LargeArray>& arrays,
                          const std::vector<std::string>& bodies) {
  const std::string text = object.dump(2);
  std::size_t total = text.size();
  for (const auto& b : bodies) total += b.size() + 8;
  std::string out;
  out.reserve(total);
  std::size_t from = 0;
  // A member of the top-level object starts its line after two spaces; the same text inside a
  // string would have its quotes and line break escaped.
  std::vector<std::pair<std::size_t, std::size_t>> at;  // (position of "[]", array index)
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const std::string member = "\n  " + json(arrays[i].key).dump() + ": []";
    const std::size_t pos = text.find(member);
    if (pos == std::string::npos)
      throw Error("splice_pretty: the document has no empty member " + arrays[i].key);
    at.emplace_back(pos + member.size() - 2, i);
  }
  std::sort(at.begin(), at.end());
  for (const auto& [pos, i] : at) {
    out.append(text, from, pos - from);
    if (bodies[i].empty())
      out.append("[]");
    else
      out.append("[\n").append(bodies[i]).append("\n  ]");
    from = pos + 2;
  }
  out.append(text, from, std::string::npos);
  return out;
}

}  // namespace abh
