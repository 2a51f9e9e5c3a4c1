#include "model/interpreter.hpp"

#include <map>

#include "system/error.hpp"

namespace abh {

json to_json(const Interpreter& p) {
  json j{{"requested", p.requested},    {"executable", p.executable},
         {"real_path", p.real_path},    {"version", p.version},
         {"sha256", p.sha256},          {"distributions_sha256", p.distributions_sha256},
         {"site_sha256", p.site_sha256}};
  if (!p.distributions.empty()) j["distributions"] = p.distributions;
  return j;
}

Interpreter interpreter_from_json(const json& j, const std::string& where) {
  Interpreter p;
  p.requested = field<std::string>(j, "requested", where);
  p.executable = field<std::string>(j, "executable", where);
  p.real_path = field<std::string>(j, "real_path", where);
  p.version = field<std::string>(j, "version", where);
  p.sha256 = field<std::string>(j, "sha256", where);
  p.distributions_sha256 = field<std::string>(j, "distributions_sha256", where);
  p.site_sha256 = field<std::string>(j, "site_sha256", where);
  if (auto it = j.find("distributions"); it != j.end()) {
    if (!it->is_array()) throw Error(where + ": field 'distributions': expected an array");
    for (const auto& d : *it) {
      if (!d.is_string() || d.get<std::string>().find("==") == std::string::npos)
        throw Error(where + ": field 'distributions': expected \"name==version\" strings, found " +
                    d.dump());
      p.distributions.push_back(d.get<std::string>());
    }
  }
  return p;
}

json identity_json(const Interpreter& p) {
  return json{{"executable", p.executable},
              {"real_path", p.real_path},
              {"version", p.version},
              {"sha256", p.sha256},
              {"distributions_sha256", p.distributions_sha256}};
}

namespace {

// name -> version of a "name==version" list.
std::map<std::string, std::string> by_name(const std::vector<std::string>& list) {
  std::map<std::string, std::string> out;
  for (const auto& d : list) {
    const auto eq = d.find("==");
    out[d.substr(0, eq)] = eq == std::string::npos ? "" : d.substr(eq + 2);
  }
  return out;
}

void append(std::string& s, const std::string& item) {
  s += (s.empty() ? "" : "; ") + item;
}

std::string describe_distribution_changes(const Interpreter& planned, const Interpreter& now) {
  const auto a = by_name(planned.distributions), b = by_name(now.distributions);
  std::string s;
  for (const auto& [name, version] : a) {
    auto it = b.find(name);
    if (it == b.end())
      append(s, name + " " + version + " removed");
    else if (it->second != version)
      append(s, name + " " + version + " -> " + it->second);
  }
  for (const auto& [name, version] : b)
    if (!a.count(name)) append(s, name + " " + version + " added");
  if (s.empty())
    s = "distributions digest " + planned.distributions_sha256.substr(0, 12) + " -> " +
        now.distributions_sha256.substr(0, 12);
  return s;
}

}  // namespace

std::string describe_changes(const Interpreter& planned, const Interpreter& now) {
  std::string s;
  if (planned.executable != now.executable)
    append(s, "executable " + planned.executable + " -> " + now.executable);
  if (planned.real_path != now.real_path)
    append(s, "binary " + planned.real_path + " -> " + now.real_path);
  if (planned.version != now.version)
    append(s, "version " + planned.version + " -> " + now.version);
  if (planned.sha256 != now.sha256)
    append(s, "binary SHA-256 " + planned.sha256.substr(0, 12) + " -> " + now.sha256.substr(0, 12));
  if (planned.distributions_sha256 != now.distributions_sha256)
    append(s, describe_distribution_changes(planned, now));
  return s;
}

}  // namespace abh
