#include "report/shape_match.hpp"

#include "system/text.hpp"

namespace abh {

ShapeMatch::Place ShapeMatch::place(const ShapeRow& row, std::size_t run) {
  const std::string version =
      row.params.dump() + (row.timing.empty() ? "" : ", timing " + row.timing);
  auto [it, fresh] = rows_.emplace(row.shape + '\n' + version, rows_.size());
  if (fresh) {
    auto& seen = versions_[row.shape];
    if (seen.empty()) ids_in_order_.push_back(row.shape);
    seen.push_back({version, run});
  }
  return {it->second, fresh};
}

std::vector<std::string> ShapeMatch::notes(const std::vector<std::string>& labels) const {
  std::vector<std::string> out;
  for (const std::string& id : ids_in_order_) {
    const auto& seen = versions_.at(id);
    if (seen.size() < 2) continue;
    std::vector<std::string> each;
    for (const Version& v : seen)
      each.push_back(v.params + " from run " +
                     (v.first_run < labels.size() ? labels[v.first_run] : "?"));
    out.push_back("shape " + id + " is a different problem in different runs (" + join(each, "; ") +
                  "): each version has its own row and is not compared");
  }
  return out;
}

}  // namespace abh
