// Text helpers shared by error messages and renderers.
#include <doctest/doctest.h>

#include "system/text.hpp"

using namespace abh;

TEST_CASE("text: join puts the separator between every two items") {
  CHECK(join({}, ", ") == "");
  CHECK(join({"a"}, ", ") == "a");
  CHECK(join({"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(join({"x", "y"}, "<br>") == "x<br>y");
  // Empty items keep their place: a CSV row with an empty first field still has all its commas.
  CHECK(join({"", "b", ""}, ",") == ",b,");
}

TEST_CASE("text: edit distance counts inserts, deletes, substitutions and swaps") {
  CHECK(edit_distance("run", "run") == 0);
  CHECK(edit_distance("rnu", "run") == 1);  // two neighbours swapped: one edit
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("report", "resume") == 4);
  CHECK(edit_distance("--nois-band", "--noise-band") == 1);
}

TEST_CASE("text: closest match suggests what a typo most likely meant") {
  const std::vector<std::string> verbs{"help", "run", "resume", "report", "verify", "compare"};
  CHECK(closest_match("rnu", verbs) == "run");
  CHECK(closest_match("reprot", verbs) == "report");
  CHECK(closest_match("comapre", verbs) == "compare");
  CHECK(closest_match("zzzzzz", verbs) == "");
  const std::vector<std::string> opts{"--baseline", "--candidate", "--grid", "--quiet", "-q"};
  // A prefix of exactly one option is that option, however many letters it leaves out.
  CHECK(closest_match("--base", opts) == "--baseline");
  CHECK(closest_match("--gird", opts) == "--grid");
  // "--" alone begins every long option and picks none of them by prefix.
  CHECK(closest_match("--", opts) != "--baseline");
  CHECK(closest_match("--frobnicate", opts) == "");
}

TEST_CASE("text: a command reads back as the argv it was") {
  CHECK(shell_command({"abharness", "run", "--repo", "/tmp/p/re po ü", "--grid", "my grid's.json",
                       "--candidate", "x|y<script>`z`", "--max-time", "0.5", "--shapes", ""}) ==
        "abharness run --repo '/tmp/p/re po ü' --grid 'my grid'\\''s.json' --candidate "
        "'x|y<script>`z`' --max-time 0.5 --shapes ''");
  CHECK(shell_command({"a\nb"}) == "'a\\nb'");
}
