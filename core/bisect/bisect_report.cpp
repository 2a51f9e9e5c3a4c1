#include "bisect/bisect_report.hpp"

#include <cstdio>
#include <sstream>

#include "report/text_table.hpp"

namespace abh::bisect {

namespace {

CommitRef commit_ref(const BisectSpec& spec, int i) {
  return {i, spec.commits.at(i).sha, spec.commits.at(i).subject};
}

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 12);
}

std::string number(std::optional<double> v, const char* format = "%.4f") {
  if (!v) return "-";
  char b[32];
  std::snprintf(b, sizeof b, format, *v);
  return b;
}

// "0.6412x [0.6301, 0.6520] slower"
std::string verdict_text(const ShapeVerdict& v) {
  std::string s = v.speedup ? number(v.speedup) + "x" : std::string("-");
  if (v.lo && v.hi) s += " [" + number(v.lo) + ", " + number(v.hi) + "]";
  return s + " " + v.verdict;
}

json verdict_json(const ShapeVerdict& v) {
  auto opt = [](std::optional<double> x) { return x ? json(*x) : json(nullptr); };
  return json{
      {"verdict", v.verdict}, {"speedup", opt(v.speedup)}, {"lo", opt(v.lo)}, {"hi", opt(v.hi)}};
}

json commit_json(const CommitRef& c) {
  return json{{"index", c.index}, {"sha", c.sha}, {"subject", c.subject}};
}

// "3f2a1b0c9d8e "subject"" for tables.
std::string commit_text(const CommitRef& c) {
  return short_sha(c.sha) + " " + c.subject;
}

}  // namespace

BisectReport make_bisect_report(const BisectSpec& spec, const Search& search,
                                const std::vector<ProbeRecord>& probes) {
  BisectReport r;
  r.id = spec.id;
  r.good = commit_ref(spec, 0);
  r.bad = commit_ref(spec, search.bad());
  r.commits = static_cast<int>(spec.commits.size());
  r.stats = spec.stats;
  for (const auto& s : search.shapes()) {
    BisectShape b;
    b.shape = s.shape;
    b.state = to_string(s.state);
    b.direction = s.direction;
    b.moved = s.moved;
    if (s.state == ShapeSearch::State::found || s.state == ShapeSearch::State::confirmed) {
      b.first_bad = commit_ref(spec, s.hi);
      b.last_good = commit_ref(spec, s.lo);
      for (int c = s.lo + 1; c < s.hi; ++c) b.untestable.push_back(commit_ref(spec, c));
    }
    b.culprit = s.culprit;
    b.notes = s.notes;
    r.shapes.push_back(std::move(b));
  }
  for (const auto& [c, why] : search.unbuildable()) r.unbuildable.push_back(commit_ref(spec, c));
  r.probes = probes;
  return r;
}

bool complete(const BisectReport& r) {
  for (const auto& s : r.shapes)
    if (s.state != "dropped" && s.state != "confirmed") return false;
  return true;
}

std::vector<std::string> undecided_shapes(const BisectReport& r) {
  std::vector<std::string> out;
  for (const auto& s : r.shapes)
    if (s.state == "dropped" && s.moved.verdict != "same")
      out.push_back(s.shape + " (" + s.moved.verdict + ")");
  return out;
}

json to_json(const BisectReport& r) {
  json shapes = json::array();
  for (const auto& s : r.shapes) {
    json untestable = json::array();
    for (const auto& c : s.untestable) untestable.push_back(commit_json(c));
    shapes.push_back({{"shape", s.shape},
                      {"state", s.state},
                      {"direction", s.direction},
                      {"moved", verdict_json(s.moved)},
                      {"first_bad", s.first_bad ? commit_json(*s.first_bad) : json(nullptr)},
                      {"last_good", s.last_good ? commit_json(*s.last_good) : json(nullptr)},
                      {"untestable", untestable},
                      {"culprit", s.culprit ? verdict_json(*s.culprit) : json(nullptr)},
                      {"notes", s.notes}});
  }
  json unbuildable = json::array();
  for (const auto& c : r.unbuildable) unbuildable.push_back(commit_json(c));
  json probes = json::array();
  for (const auto& p : r.probes)
    probes.push_back({{"name", p.name},
                      {"kind", to_string(p.probe.kind)},
                      {"baseline", p.probe.baseline},
                      {"candidate", p.probe.candidate},
                      {"shapes", p.probe.shapes},
                      {"unbuildable", p.unbuildable},
                      {"note", p.note}});
  return json{{"schema_version", r.schema_version},
              {"id", r.id},
              {"good", commit_json(r.good)},
              {"bad", commit_json(r.bad)},
              {"commits", r.commits},
              {"stats", abh::to_json(r.stats)},
              {"complete", complete(r)},
              {"shapes", shapes},
              {"unbuildable", unbuildable},
              {"probes", probes}};
}

std::string render_markdown(const BisectReport& r) {
  std::ostringstream o;
  o << "# abharness bisect " << r.id << "\n\n"
    << "Good `" << short_sha(r.good.sha) << "` (" << r.good.subject << ") to bad `"
    << short_sha(r.bad.sha) << "` (" << r.bad.subject << "): " << r.commits
    << " commits on the first-parent path, " << r.probes.size() << " probes, noise band ±"
    << number(r.stats.noise_band * 100, "%.2g") << " %.\n\n"
    << "| shape | first bad commit | its subject | against the commit before it (95 % CI) | "
       "good → bad |\n| --- | --- | --- | --- | --- |\n";
  for (const auto& s : r.shapes) {
    if (s.state == "dropped") continue;
    o << "| " << s.shape << " | "
      << (s.first_bad ? "`" + short_sha(s.first_bad->sha) + "`" : std::string("not found yet"))
      << " | " << (s.first_bad ? s.first_bad->subject : "") << " | "
      << (s.culprit ? verdict_text(*s.culprit) : std::string("-")) << " | " << verdict_text(s.moved)
      << " |\n";
  }
  o << "\n";
  for (const auto& s : r.shapes) {
    if (!s.untestable.empty()) {
      o << "- " << s.shape << ": the first bad commit is one of `" << short_sha(s.first_bad->sha)
        << "`";
      for (const auto& c : s.untestable) o << ", `" << short_sha(c.sha) << "`";
      o << " (the commits between could not be measured)\n";
    }
    for (const auto& n : s.notes) o << "- " << s.shape << ": " << n << "\n";
  }
  for (const auto& c : r.unbuildable)
    o << "- skipped `" << short_sha(c.sha) << "` (" << c.subject << "): it does not build\n";
  o << "\nProbes (each a run directory under `probes/`, verifiable with `abharness verify`):\n\n";
  for (const auto& p : r.probes)
    o << "- `" << p.name << "` " << to_string(p.probe.kind) << ": commit " << p.probe.candidate
      << " against " << p.probe.baseline << " on " << p.probe.shapes.size() << " shape(s)"
      << (p.unbuildable ? ", did not build" : "") << "\n";
  return o.str();
}

std::string render_terminal(const BisectReport& r, bool colour) {
  using text_table::Cell;
  std::ostringstream o;
  o << "bisect " << r.id << ": good " << short_sha(r.good.sha) << " .. bad " << short_sha(r.bad.sha)
    << ", " << r.commits << " commits on the first-parent path, " << r.probes.size()
    << " probe(s)\n\n";
  std::vector<std::vector<Cell>> rows{
      {{"shape"}, {"first bad commit"}, {"vs the commit before it"}, {"good -> bad"}}};
  for (const auto& s : r.shapes) {
    if (s.state == "dropped") continue;
    const char* c = s.direction == "slower" ? "\033[31m" : "\033[32m";
    rows.push_back({{s.shape},
                    {s.first_bad ? commit_text(*s.first_bad) : "(not found yet)"},
                    {s.culprit ? verdict_text(*s.culprit) : "-", c},
                    {verdict_text(s.moved)}});
  }
  if (rows.size() > 1) o << text_table::render(rows, colour) << "\n";
  for (const auto& s : r.shapes) {
    if (s.state == "dropped") {
      o << "dropped " << s.shape << ": " << (s.notes.empty() ? "" : s.notes.front()) << "\n";
      continue;
    }
    if (!s.untestable.empty()) {
      o << s.shape << ": the first bad commit is one of " << short_sha(s.first_bad->sha);
      for (const auto& c : s.untestable) o << ", " << short_sha(c.sha);
      o << " (the commits between could not be measured)\n";
    }
    for (const auto& n : s.notes) o << s.shape << ": " << n << "\n";
  }
  for (const auto& c : r.unbuildable) o << "skipped " << commit_text(c) << ": it does not build\n";
  return o.str();
}

}  // namespace abh::bisect
