// The "pr" rendering: always within GitHub's 65,536 characters per comment, from 1 to 5,000
// shapes, with short and with the longest allowed shape ids and with hostile free text; the
// headline first (geomean with interval, regressions worst first, then improvements, then the
// shapes that decide the exit code), the full table folded and truncated with a count, provenance
// and the result-set digest with the command that re-verifies it.
#include <doctest/doctest.h>

#include <string>

#include "report/markdown.hpp"
#include "report_fixtures.hpp"

using namespace abh;
using namespace abh::test;

namespace {

std::size_t count_of(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + what.size()))
    ++n;
  return n;
}

// Every byte sequence is well-formed UTF-8: cutting text never splits a character.
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80         ? 1
                            : (c >> 5) == 6  ? 2
                            : (c >> 4) == 14 ? 3
                            : (c >> 3) == 30 ? 4
                                             : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

// A report as the builder would make it, without measuring: `n` shapes cycling through every
// verdict, ids of `id_len` characters, and (when `hostile`) kilobytes of Markdown specials and
// multi-byte characters in every free-text field.
Report synthetic_report(int n, std::size_t id_len, bool hostile) {
  const std::string junk = hostile ? std::string(3000, '|') + std::string(600, '`') +
                                         "\xc2\xb5\xe2\x86\x92<details>**_[x](y)_**"
                                   : "";
  Report r;
  r.schema_version = kReportSchemaVersion;
  for (int i = 0; i < n; ++i) {
    ShapeRow row;
    std::string id = "s" + std::to_string(i) + "_";
    row.shape = id + std::string(id_len > id.size() ? id_len - id.size() : 0, 'x');
    row.label = junk;
    const int kind = i % 6;
    row.verdict = kind == 0   ? Verdict::slower
                  : kind == 1 ? Verdict::faster
                  : kind == 2 ? Verdict::same
                  : kind == 3 ? Verdict::ambiguous
                  : kind == 4 ? Verdict::unstable
                              : Verdict::failed;
    if (row.verdict == Verdict::failed) {
      row.failure = "A2: exit code 3: " + junk + std::string(5000, 'e');
    } else {
      const double s = kind == 0 ? 0.9 - 1e-5 * i : kind == 1 ? 1.1 + 1e-5 * i : 1.0;
      row.speedup = s;
      row.ci = Interval{s - 0.01, s + 0.01};
      row.baseline_ns = 123456.0 + i;
      row.candidate_ns = row.baseline_ns.value() / s;
      row.drift = 1.001;
    }
    r.shapes.push_back(row);
    r.summary.verdicts[to_string(row.verdict)]++;
  }
  r.summary.shapes_total = n;
  r.summary.regressed = r.summary.verdicts["slower"];
  r.summary.improved = r.summary.verdicts["faster"];
  r.summary.shapes_failed = r.summary.verdicts["failed"];
  r.summary.shapes_compared = n - r.summary.shapes_failed;
  if (r.summary.shapes_compared > 0) {
    r.summary.geomean = 1.02;
    r.summary.geomean_ci = Interval{1.01, 1.03};
    r.summary.geomean_verdict = Verdict::faster;
  }
  Provenance& p = r.provenance;
  p.run_id = "20260101-000000-abcdef";
  p.harness_version = "0.1.0";
  p.repo = "/work/" + junk;
  p.plugin_target = "cuda" + junk;
  p.command = std::vector<std::string>(200, "--flag" + junk);
  p.result_set_digest = "sha256:" + std::string(64, 'f');
  for (const char* name : {"baseline", "candidate"}) {
    SourceIdentity id;
    id.requested = "branch" + junk;
    id.kind = "commit";
    id.commit = std::string(40, 'a');
    id.digest = std::string(64, 'd');
    p.variants.push_back({name, id, std::string(64, 'p'), "g++"});
  }
  for (int g = 0; g < 16; ++g) {
    Environment e;
    e.hostname = "host" + junk;
    GpuInfo gpu;
    gpu.index = g;
    gpu.name = "NVIDIA H200" + junk;
    gpu.uuid = "GPU-" + std::to_string(g);
    e.gpu = gpu;
    p.machine.push_back(e);
  }
  return r;
}

}  // namespace

TEST_CASE("pr: the comment fits GitHub's limit from 1 to 5000 shapes") {
  for (int n : {1, 2, 7, 60, 400, 1000, 5000})
    for (std::size_t id_len : {std::size_t(8), std::size_t(100)})
      for (bool hostile : {false, true}) {
        CAPTURE(n);
        CAPTURE(id_len);
        CAPTURE(hostile);
        const std::string pr = render(synthetic_report(n, id_len, hostile), "pr", {});
        CHECK(pr.size() <= kPrCommentLimit);
        CHECK(pr.rfind(kPrMarker, 0) == 0);
        CHECK(valid_utf8(pr));
        CHECK(pr.find("**Geomean speedup 1.0200x** (95% CI [1.0100, 1.0300], faster)") !=
              std::string::npos);
        CHECK(pr.find("Result-set digest `sha256:" + std::string(64, 'f') + "`") !=
              std::string::npos);
        CHECK(pr.find("`abharness verify runs/20260101-000000-abcdef`") != std::string::npos);
        CHECK(count_of(pr, "<details>") == count_of(pr, "</details>"));
        const std::size_t rows = count_of(pr, "| `s");  // table and list rows name shapes so
        if (pr.find("_Showing ") != std::string::npos) {
          // Truncated: the table used the room (well over half of the limit) and counts the rest.
          CHECK(pr.size() > kPrCommentLimit * 3 / 4);
          CHECK(pr.find(" worst of " + std::to_string(n) + " shapes (failed arms first") !=
                std::string::npos);
        } else {
          CHECK(rows >= static_cast<std::size_t>(n));  // every shape has its table row
        }
      }
}

TEST_CASE("pr: regressions come first, worst first, then improvements, then the exit code") {
  const std::string pr = render(synthetic_report(60, 12, false), "pr", {});
  const auto regressions = pr.find("**Regressions** (10)");
  const auto improvements = pr.find("**Improvements** (10)");
  const auto decide = pr.find("**Shapes that decide the exit code**");
  const auto table = pr.find("<details><summary>All 60 shapes</summary>");
  const auto provenance = pr.find("<details><summary>Provenance</summary>");
  REQUIRE(regressions != std::string::npos);
  REQUIRE(improvements != std::string::npos);
  REQUIRE(decide != std::string::npos);
  CHECK(regressions < improvements);
  CHECK(improvements < decide);
  CHECK(decide < table);
  CHECK(table < provenance);
  // The worst regression (shape 54: 0.9 - 54e-5) is listed first.
  CHECK(pr.find("`s54_xxxxxxxx`", regressions) < pr.find("`s0_xxxxxxxxx`", regressions));
  CHECK(pr.find("10 shape(s) with a failed arm") != std::string::npos);
  CHECK(pr.find("10 regression(s), listed above: exit 5 under `--fail-on-regression`") !=
        std::string::npos);
  CHECK(pr.find("_Showing") == std::string::npos);  // 60 shapes fit
}

TEST_CASE("pr: long lists are cut to ten names with a count") {
  const std::string pr = render(synthetic_report(600, 12, false), "pr", {});
  CHECK(pr.find("**Regressions** (100)") != std::string::npos);
  CHECK(pr.find("_... and 90 more: see the full table below._") != std::string::npos);
  CHECK(pr.find("  - ... and 90 more") != std::string::npos);  // failed shapes
}

TEST_CASE("pr: a real report shows every shape, its failure and no exit-code noise when clean") {
  Report r = sample_report();
  const std::string pr = render(r, "pr", {});
  for (const auto& row : r.shapes) CHECK(pr.find("`" + row.shape + "`") != std::string::npos);
  CHECK(pr.find("worker crashed") != std::string::npos);
  CHECK(pr.find("_Showing") == std::string::npos);

  Report clean = synthetic_report(3, 8, false);
  for (auto& row : clean.shapes) row.verdict = Verdict::same;
  clean.summary.regressed = 0;
  clean.summary.shapes_failed = 0;
  CHECK(render(clean, "pr", {}).find("decide the exit code") == std::string::npos);
}

TEST_CASE("markdown: mentions and issue references in free text are quoted, not linked") {
  using markdown::esc;
  CHECK(esc("@octocat") == "@&#8203;octocat");
  CHECK(esc("cc @org/team") == "cc @&#8203;org/team");
  CHECK(esc("fixes #123, repo#4") == "fixes #&#8203;123, repo#&#8203;4");
  CHECK(esc("GH-45 gh-6") == "GH-&#8203;45 gh-&#8203;6");
  // What GitHub does not link stays as it is.
  for (const char* plain : {"@", "@ x", "C# and #x", "# 1", "GH-x", "a-GH"})
    CHECK(esc(plain) == plain);
  // The entity's '&' is the renderer's own: a '&' of the text is still escaped.
  CHECK(esc("&#64;x @y") == "\\&#&#8203;64;x @&#8203;y");
}

TEST_CASE("pr: a label, a failure and a machine that mention users reach no one") {
  Report r = sample_report();
  const std::string refs = "@octocat @org/team #123 GH-45";
  r.shapes.front().label = "cc " + refs;
  r.shapes.back().verdict = Verdict::failed;
  r.shapes.back().failure = "B: exit code 3: RuntimeError: ask " + refs;
  r.provenance.machine.front().hostname = "host " + refs;
  for (const char* format : {"pr", "markdown"}) {
    CAPTURE(format);
    const std::string out = render(r, format, {});
    for (const char* linked : {"@octocat", "@org/team", "#123", "GH-45"})
      CHECK(out.find(linked) == std::string::npos);
    CHECK(count_of(out, "@&#8203;octocat @&#8203;org/team #&#8203;123 GH-&#8203;45") >= 3);
  }
  // Text made of nothing but references still fits one comment.
  Report dense = synthetic_report(2000, 8, false);
  std::string many;
  while (many.size() < 4000) many += "@a #1 ";
  for (auto& row : dense.shapes) row.label = many, row.failure = row.failure.empty() ? "" : many;
  for (auto& m : dense.provenance.machine) m.hostname = many;
  const std::string pr = render(dense, "pr", {});
  CHECK(pr.size() <= kPrCommentLimit);
  CHECK(pr.find("@a") == std::string::npos);
}

TEST_CASE("pr: a table that does not fit shows the worst shapes, one that fits keeps plan order") {
  // synthetic_report: i % 6 == 5 failed, i % 6 == 0 slower (the higher i, the slower), i % 6 == 1
  // faster. Only the first three failures are kept; the rest become `same`.
  Report r = synthetic_report(3000, 100, false);
  for (std::size_t i = 20; i < r.shapes.size(); ++i)
    if (r.shapes[i].verdict == Verdict::failed) {
      r.shapes[i].verdict = Verdict::same;
      r.shapes[i].failure.clear();
      r.shapes[i].speedup = 1.0;
      r.shapes[i].ci = Interval{0.99, 1.01};
      r.shapes[i].baseline_ns = r.shapes[i].candidate_ns = 1000.0;
    }
  const std::string big = render(r, "pr", {});
  const std::size_t table = big.find("<details><summary>All 3000 shapes");
  REQUIRE(table != std::string::npos);
  const std::string rows = big.substr(table, big.find("</details>", table) - table);
  REQUIRE(rows.find("| `s17_") != std::string::npos);
  CHECK(rows.find("| `s5_") < rows.find("| `s17_"));     // failed first, in plan order
  CHECK(rows.find("| `s17_") < rows.find("| `s2994_"));  // then the slowest
  CHECK(rows.find("| `s2994_") < rows.find("| `s2988_"));
  CHECK(rows.find("| `s1_") == std::string::npos);  // faster shapes did not fit
  const std::string small = render(synthetic_report(12, 8, false), "pr", {});
  CHECK(small.find("| `s0_") < small.find("| `s1_"));  // plan order when everything fits
  CHECK(small.find("| `s1_") < small.find("| `s5_"));
}

TEST_CASE("pr: the provenance shows no directory of the machine that ran") {
  Report r = synthetic_report(3, 8, false);
  r.provenance.repo = "/home/runner/work/kernels/kernels/";
  r.provenance.command = {"abharness",
                          "run",
                          "--repo",
                          "/home/runner/work/kernels",
                          "--runs-root=/tmp/runner/runs",
                          "--grid",
                          "grids/shapes.json",
                          "--label=a/b"};
  const std::string pr = render(r, "pr", {});
  CHECK(pr.find("/home/runner") == std::string::npos);
  CHECK(pr.find("/tmp/runner") == std::string::npos);
  CHECK(pr.find("Repository `\u2026/kernels`") != std::string::npos);
  CHECK(pr.find("--repo \u2026/kernels --runs-root=\u2026/runs --grid grids/shapes.json "
                "--label=a/b") != std::string::npos);
}
