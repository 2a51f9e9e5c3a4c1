// "did you mean" after a refused command line, and `abharness help <verb>`.
#include <doctest/doctest.h>

#include "usage_hints.hpp"

using namespace abh;

namespace {

struct Cli {
  CLI::App app{"test"};
  std::string baseline;
  Cli() {
    app.require_subcommand(1);
    auto* run = app.add_subcommand("run", "run");
    run->add_option("--baseline", baseline)->required();
    app.add_subcommand("report", "report");
  }
  // The hint after parsing `args` (without the program name), which CLI11 must refuse.
  std::string refused(std::vector<std::string> args) {
    args.insert(args.begin(), "abharness");
    std::vector<const char*> c;
    for (const std::string& a : args) c.push_back(a.c_str());
    CHECK_THROWS_AS(app.parse(static_cast<int>(c.size()), c.data()), CLI::ParseError);
    return did_you_mean(app);
  }
};

}  // namespace

TEST_CASE("usage hints: a mistyped command is named with the command it likely meant") {
  Cli cli;
  CHECK(cli.refused({"rnu"}) == "abharness: unknown command 'rnu': did you mean 'run'?\n");
}

TEST_CASE("usage hints: a mistyped option is named with the option it likely meant") {
  Cli cli;
  CHECK(cli.refused({"run", "--base", "HEAD"}) ==
        "abharness run: unknown option '--base': did you mean --baseline?\n");
  Cli other;
  CHECK(other.refused({"run", "--baseline", "x", "--frobnicate=1"}) ==
        "abharness run: unknown option '--frobnicate'\n");
}

TEST_CASE("usage hints: help VERB is VERB --help and an unknown verb is left to be refused") {
  Cli cli;
  using V = std::vector<std::string>;
  CHECK(expand_help_verb(cli.app, {"abh", "help", "run"}) == V{"abh", "run", "--help"});
  CHECK(expand_help_verb(cli.app, {"abh", "help"}) == V{"abh", "--help"});
  CHECK(expand_help_verb(cli.app, {"abh", "help", "rnu"}) == V{"abh", "rnu"});
  CHECK(expand_help_verb(cli.app, {"abh", "run", "help"}) == V{"abh", "run", "help"});
}
