#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "build/build.hpp"
#include "model/manifest.hpp"
#include "system/error.hpp"
#include "system/process.hpp"
#include "system/sha256.hpp"
#include "test_support.hpp"

namespace {
namespace fs = std::filesystem;
using abh::BuildRecipe;
using abh::json;
using abh::test::contains;
using abh::test::error_of;
using abh::test::slurp;
using abh::test::write;

// Each test case gets a directory of its own under /tmp.
struct BuildTempDir : abh::test::TempDir {
  BuildTempDir() : abh::test::TempDir("abh-build") {}
};

abh::SourceIdentity identity(const std::string& seed) {
  abh::SourceIdentity id;
  id.requested = seed;
  id.kind = "commit";
  id.commit = abh::sha256_hex("commit " + seed).substr(0, 40);
  id.digest = abh::sha256_hex("identity " + seed);
  return id;
}

size_t line_count(const fs::path& p) {
  std::string s = slurp(p);
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

std::vector<std::string> cache_entries(const fs::path& cache) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(cache)) names.push_back(e.path().filename());
  return names;
}

// A shell recipe that records every run in a counter file outside the sources.
BuildRecipe counting_recipe(const fs::path& counter) {
  BuildRecipe r;
  r.target = "cpu";
  r.argv = {"echo built >> '" + counter.string() + "'; cp data.txt libk.so"};
  r.shell = true;
  r.artifact = "libk.so";
  r.timeout_s = 30;
  return r;
}

}  // namespace

TEST_CASE("build: a compiled plugin is cached and reused") {
  BuildTempDir tmp;
  const fs::path src = tmp.path() / "src", cache = tmp.path() / "cache";
  write(src / "k.cpp", "extern \"C\" int abh_test_answer() { return 42; }\n");
  BuildRecipe r;
  r.target = "cpu";
  r.argv = {"c++", "-shared", "-fPIC", "-O0", "k.cpp", "-o", "libk.so"};
  r.artifact = "libk.so";
  r.timeout_s = 120;
  const auto id = identity("a");

  abh::BuildOutcome first = abh::build_variant(r, src, id, cache, tmp.path() / "v1");
  CHECK_FALSE(first.cache_hit);
  CHECK(first.plugin == tmp.path() / "v1" / "libk.so");
  REQUIRE(fs::is_regular_file(first.plugin));
  CHECK(first.plugin_sha256 == abh::sha256_file(first.plugin));
  const fs::path cxx = fs::canonical(abh::find_program("c++"));
  CHECK(first.toolchain_id.rfind(cxx.string() + ":" + abh::sha256_file(cxx) + "; ", 0) == 0);
  CHECK(first.recipe_sha256 == abh::sha256_hex(abh::canonical(abh::to_json(r))));
  CHECK(first.log == tmp.path() / "v1" / "build.log");
  CHECK(contains(slurp(first.log), "--- end of output: exit code 0"));
  CHECK(fs::is_directory(cache / first.cache_key));

  // Proof that the second run compiles nothing: the built file is gone from the sources and does
  // not come back.
  fs::remove(src / "libk.so");
  abh::BuildOutcome second = abh::build_variant(r, src, id, cache, tmp.path() / "v2");
  CHECK(second.cache_hit);
  CHECK_FALSE(fs::exists(src / "libk.so"));
  CHECK(second.cache_key == first.cache_key);
  CHECK(second.plugin_sha256 == first.plugin_sha256);
  CHECK(slurp(second.log) == "cached build " + first.cache_key + " reused (source " + id.digest +
                                 ", recipe " + first.recipe_sha256 + ", toolchain " +
                                 first.toolchain_id + "); nothing was built\n");
}

TEST_CASE("build: the cache key follows source, recipe and damage") {
  BuildTempDir tmp;
  const fs::path src = tmp.path() / "src", cache = tmp.path() / "cache",
                 counter = tmp.path() / "counter.txt";
  write(src / "data.txt", "plugin bytes\n");
  BuildRecipe r = counting_recipe(counter);

  auto a = abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v1");
  CHECK_FALSE(a.cache_hit);
  CHECK(line_count(counter) == 1);
  CHECK(a.toolchain_id.rfind(fs::canonical("/bin/sh").string() + ":", 0) == 0);
  CHECK(slurp(a.plugin) == "plugin bytes\n");

  auto hit = abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v2");
  CHECK(hit.cache_hit);
  CHECK(line_count(counter) == 1);

  // Debris of a builder that crashed a day ago is removed by the next miss; a fresh one is not.
  fs::create_directories(cache / ".tmp-crashed" / "x");
  fs::create_directories(cache / ".tmp-in-progress");
  fs::last_write_time(cache / ".tmp-crashed",
                      fs::file_time_type::clock::now() - std::chrono::hours(48));
  auto other_source = abh::build_variant(r, src, identity("b"), cache, tmp.path() / "v3");
  CHECK_FALSE(fs::exists(cache / ".tmp-crashed"));
  CHECK(fs::exists(cache / ".tmp-in-progress"));
  fs::remove(cache / ".tmp-in-progress");
  CHECK_FALSE(other_source.cache_hit);
  CHECK(other_source.cache_key != a.cache_key);
  CHECK(line_count(counter) == 2);

  BuildRecipe r2 = r;
  r2.env["EXTRA"] = "1";
  auto other_recipe = abh::build_variant(r2, src, identity("a"), cache, tmp.path() / "v4");
  CHECK_FALSE(other_recipe.cache_hit);
  CHECK(other_recipe.recipe_sha256 != a.recipe_sha256);
  CHECK(line_count(counter) == 3);

  // A damaged entry is not trusted: the build runs again, says why, and repairs the entry.
  write(cache / a.cache_key / "libk.so", "tampered\n");
  auto repaired = abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v5");
  CHECK_FALSE(repaired.cache_hit);
  CHECK(line_count(counter) == 4);
  CHECK(slurp(repaired.plugin) == "plugin bytes\n");
  CHECK(contains(slurp(repaired.log), "the existing entry was discarded"));
  auto again = abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v6");
  CHECK(again.cache_hit);
  CHECK(line_count(counter) == 4);

  for (const auto& name : cache_entries(cache)) CHECK(name[0] != '.');  // no temp leftovers
}

TEST_CASE("build: concurrent builders of one key leave one valid entry") {
  BuildTempDir tmp;
  // Two runs materialize the same revision into sources of their own and race to publish one
  // cache entry (sharing one source directory would race in the recipe, not in the cache).
  const fs::path src = tmp.path() / "src", src2 = tmp.path() / "src2", cache = tmp.path() / "cache",
                 counter = tmp.path() / "counter.txt";
  write(src / "data.txt", "plugin bytes\n");
  write(src2 / "data.txt", "plugin bytes\n");
  BuildRecipe r = counting_recipe(counter);
  r.argv[0] = "sleep 0.2; " + r.argv[0];
  abh::BuildOutcome o1, o2;
  std::string e1, e2;
  std::thread t1([&] {
    e1 =
        error_of([&] { o1 = abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v1"); });
  });
  std::thread t2([&] {
    e2 = error_of(
        [&] { o2 = abh::build_variant(r, src2, identity("a"), cache, tmp.path() / "v2"); });
  });
  t1.join();
  t2.join();
  CHECK(e1 == "(no abh::Error thrown)");
  CHECK(e2 == "(no abh::Error thrown)");
  CHECK(o1.cache_key == o2.cache_key);
  CHECK(slurp(o1.plugin) == "plugin bytes\n");
  CHECK(slurp(o2.plugin) == "plugin bytes\n");
  CHECK(cache_entries(cache) == std::vector<std::string>{o1.cache_key});
  auto third = abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v3");
  CHECK(third.cache_hit);
}

TEST_CASE("build: a failing recipe reports its exit and the log's tail") {
  BuildTempDir tmp;
  const fs::path src = tmp.path() / "src", cache = tmp.path() / "cache";
  fs::create_directories(src);
  BuildRecipe r;
  r.target = "cpu";
  r.shell = true;
  r.argv = {
      "echo first-line; i=0; while [ $i -lt 30 ]; do echo noise$i; i=$((i+1)); done; "
      "echo 'k.cpp:3: error: fatal-compiler-error' >&2; exit 4"};
  r.artifact = "libk.so";
  r.timeout_s = 30;
  std::string msg =
      error_of([&] { abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v1"); });
  CHECK(contains(msg, "exit code 4"));
  CHECK(contains(msg, "fatal-compiler-error"));
  CHECK(contains(msg, "noise29"));
  CHECK_FALSE(contains(msg, "first-line"));  // only the tail
  CHECK(contains(msg, (tmp.path() / "v1" / "build.log").string()));
  CHECK(contains(slurp(tmp.path() / "v1" / "build.log"), "first-line"));  // the log has it all
  CHECK(cache_entries(cache).empty());

  BuildRecipe quiet = r;
  quiet.argv = {"true"};
  std::string no_artifact =
      error_of([&] { abh::build_variant(quiet, src, identity("a"), cache, tmp.path() / "v2"); });
  CHECK(contains(no_artifact, "did not produce its artifact"));
  CHECK(contains(no_artifact, "field 'artifact'"));

  BuildRecipe hang = r;
  hang.argv = {"sleep 30"};
  hang.timeout_s = 0.3;
  std::string timeout =
      error_of([&] { abh::build_variant(hang, src, identity("a"), cache, tmp.path() / "v3"); });
  // The message gives the wall time the build ran: 0.3 s, or more on a loaded machine.
  CHECK(contains(timeout, "timed out after "));
  CHECK(contains(timeout, " s (process group killed)"));

  BuildRecipe missing = r;
  missing.shell = false;
  missing.argv = {"abh-no-such-compiler"};
  CHECK(contains(
      error_of([&] { abh::build_variant(missing, src, identity("a"), cache, tmp.path() / "v4"); }),
      "abh-no-such-compiler"));
  CHECK(cache_entries(cache).empty());
}

TEST_CASE(
    "build: the toolchain names the compiler a shell recipe reaches and the variables it reads") {
  BuildTempDir tmp;
  const fs::path src = tmp.path() / "src", cache = tmp.path() / "cache",
                 counter = tmp.path() / "counter.txt";
  write(src / "data.txt", "plugin bytes\n");
  BuildRecipe r = counting_recipe(counter);
  r.env["CXX"] = "c++";
  const auto a = abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v1");
  const fs::path cxx = fs::canonical(abh::find_program("c++"));
  CHECK(a.toolchain_id.find("; CXX=c++ -> " + cxx.string() + ":" + abh::sha256_file(cxx)) !=
        std::string::npos);
  CHECK(a.toolchain_id.find("CXXFLAGS") == std::string::npos);

  // Another compiler, or flags the build reads from its environment: another toolchain, a build.
  r.env["CXX"] = "/bin/true";
  const auto b = abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v2");
  CHECK_FALSE(b.cache_hit);
  CHECK(b.toolchain_id.find("; CXX=/bin/true -> " + fs::canonical("/bin/true").string()) !=
        std::string::npos);
  r.env["CXXFLAGS"] = "-O3 -march=native";
  const auto c = abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v3");
  CHECK_FALSE(c.cache_hit);
  CHECK(c.toolchain_id.find("; CXXFLAGS=-O3 -march=native") != std::string::npos);
  CHECK(line_count(counter) == 3);

  // A compiler that is not there is named as such, not an error of the build.
  r.env["CUDACXX"] = "no-such-nvcc-here";
  const auto d = abh::build_variant(r, src, identity("a"), cache, tmp.path() / "v4");
  CHECK(d.toolchain_id.find("; CUDACXX=no-such-nvcc-here -> not found") != std::string::npos);
}
