// The build recipe of a kernel repository's abharness.json: substitution, the JSON mapping, and an
// error naming the file, the field and the fix for each way a manifest can be wrong.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "model/manifest.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

namespace {
namespace fs = std::filesystem;
using abh::BuildRecipe;
using abh::json;
using abh::test::contains;
using abh::test::error_of;
using abh::test::write;

const abh::SubstitutionVars kVars{"/opt/abh/include", "/usr/local/cuda", {}};

void write_manifest(const fs::path& src, const json& plugins) {
  write(src / "abharness.json", json{{"schema_version", 1}, {"plugins", plugins}}.dump(2));
}

}  // namespace

TEST_CASE("manifest: a recipe is read, substituted and mapped to JSON") {
  abh::test::TempDir tmp("abh-manifest");
  write_manifest(tmp.path(),
                 {{"cpu",
                   {{"argv", {"c++", "-I${ABHARNESS_INCLUDE}", "-L${CUDA_HOME}/lib64", "k.cpp"}},
                    {"artifact", "out/./libk.so"},
                    {"env", {{"NVCC", "${CUDA_HOME}/bin/nvcc"}, {"LITERAL", "${HOME}"}}},
                    {"timeout_s", 120}}},
                  {"other", {{"argv", {"make"}}, {"artifact", "x.so"}}}});
  BuildRecipe r = abh::load_recipe(tmp.path(), "cpu", kVars);
  CHECK(r.target == "cpu");
  CHECK(r.argv ==
        std::vector<std::string>{"c++", "-I/opt/abh/include", "-L/usr/local/cuda/lib64", "k.cpp"});
  CHECK(r.artifact == "out/libk.so");
  CHECK(r.env.at("NVCC") == "/usr/local/cuda/bin/nvcc");
  CHECK(r.env.at("LITERAL") == "${HOME}");  // no other expansion happens
  CHECK_FALSE(r.shell);
  CHECK(r.timeout_s == 120);

  BuildRecipe d = abh::load_recipe(tmp.path(), "other", kVars);
  CHECK_FALSE(d.shell);
  CHECK(d.timeout_s == 1800);
  CHECK(d.env.empty());

  json j = abh::to_json(r);
  std::set<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.insert(it.key());
  CHECK(keys == std::set<std::string>{"target", "argv", "artifact", "env", "shell", "timeout_s"});
  CHECK(j["argv"][1] == "-I/opt/abh/include");
  CHECK(j["env"]["NVCC"] == "/usr/local/cuda/bin/nvcc");
  CHECK(j["timeout_s"] == 120.0);
}

TEST_CASE("manifest: errors name the file, the field and the fix") {
  // The file as the repository has it: the directory read is a copy in a run directory, which a
  // failed start removes, and the caller names the revision.
  abh::test::TempDir tmp("abh-manifest");
  const std::string file = "abharness.json: ";

  std::string missing = error_of([&] { abh::load_recipe(tmp.path(), "cpu", kVars); });
  CHECK(contains(missing, "no abharness.json at the root of the repository at this revision"));
  CHECK_FALSE(contains(missing, tmp.path().string()));

  auto with = [&](const json& recipe, const std::string& target = "cpu") {
    write_manifest(tmp.path(), {{"cpu", recipe}, {"cpu-debug", recipe}});
    return error_of([&] { abh::load_recipe(tmp.path(), target, kVars); });
  };
  const json good = {{"argv", {"make"}}, {"artifact", "libk.so"}};

  std::string target = with(good, "cuda");
  CHECK(contains(target, file));
  CHECK(contains(target, "has no target 'cuda'"));
  CHECK(contains(target, "cpu, cpu-debug"));

  json up = good;
  up["artifact"] = "../libk.so";
  std::string escape = with(up);
  CHECK(contains(escape, file));
  CHECK(contains(escape, "/plugins/cpu/artifact"));
  CHECK(contains(escape, "'..'"));

  json abs = good;
  abs["artifact"] = "/tmp/libk.so";
  std::string absolute = with(abs);
  CHECK(contains(absolute, "/plugins/cpu/artifact"));
  CHECK(contains(absolute, "absolute"));

  json cmdline = good;
  cmdline["argv"] = {"make && cp build/libk.so ."};
  std::string noshell = with(cmdline);
  CHECK(contains(noshell, "/plugins/cpu/argv/0"));
  CHECK(contains(noshell, "\"shell\": true"));

  json shell_many = good;
  shell_many["shell"] = true;
  shell_many["argv"] = {"make", "all"};
  std::string many = with(shell_many);
  CHECK(contains(many, "/plugins/cpu/argv"));
  CHECK(contains(many, "exactly one"));

  json shell_one = good;
  shell_one["shell"] = true;
  shell_one["argv"] = {"make && cp build/libk.so ."};
  write_manifest(tmp.path(), {{"cpu", shell_one}});
  BuildRecipe sh = abh::load_recipe(tmp.path(), "cpu", kVars);
  CHECK(sh.shell);
  CHECK(sh.argv == std::vector<std::string>{"make && cp build/libk.so ."});

  json typo = good;
  typo["artefact"] = "libk.so";
  CHECK(contains(with(typo), "/plugins/cpu/artefact: unknown field"));

  json no_argv = {{"artifact", "libk.so"}};
  CHECK(contains(with(no_argv), "/plugins/cpu/argv"));

  json bad_arg = good;
  bad_arg["argv"] = {"make", 3};
  CHECK(contains(with(bad_arg), "/plugins/cpu/argv/1"));

  json bad_env = good;
  bad_env["env"] = {{"CC", 5}};
  CHECK(contains(with(bad_env), "/plugins/cpu/env/CC"));

  json bad_timeout = good;
  bad_timeout["timeout_s"] = -1;
  CHECK(contains(with(bad_timeout), "/plugins/cpu/timeout_s"));

  json cuda = good;
  cuda["argv"] = {"${CUDA_HOME}/bin/nvcc"};
  write_manifest(tmp.path(), {{"cpu", cuda}});
  std::string no_cuda = error_of([&] {
    abh::load_recipe(tmp.path(), "cpu", {"/opt/abh/include", "", {}});
  });
  CHECK(contains(no_cuda, "/plugins/cpu/argv/0"));
  CHECK(contains(no_cuda, "${CUDA_HOME}"));

  write(tmp.path() / "abharness.json", R"({"schema_version": 2, "plugins": {}})");
  std::string version = error_of([&] { abh::load_recipe(tmp.path(), "cpu", kVars); });
  CHECK(contains(version, "/schema_version: found integer 2, expected 1"));

  write(tmp.path() / "abharness.json", R"({"schema_version": 1, "plugins": {)");
  CHECK(contains(error_of([&] { abh::load_recipe(tmp.path(), "cpu", kVars); }), file));
}

TEST_CASE("manifest: a Python plugin needs no build, and its fields are checked") {
  abh::test::TempDir tmp("abh-manifest");
  const std::string where = "abharness.json: /plugins/py/python";
  auto with = [&](const json& recipe) {
    write_manifest(tmp.path(), {{"py", recipe}});
    return abh::test::usage_error_of([&] { abh::load_recipe(tmp.path(), "py", kVars); });
  };
  write_manifest(tmp.path(), {{"py", {{"python", {{"module", "bench.matmul"}}}}}});
  BuildRecipe r = abh::load_recipe(tmp.path(), "py", kVars);
  REQUIRE(r.python);
  CHECK(r.python->module == "bench.matmul");
  CHECK(r.python->entry == "make_problem");  // the defaults
  CHECK(r.python->device == "cuda");
  CHECK(r.python->interpreter.empty());
  CHECK_FALSE(r.has_build());
  CHECK(r.artifact.empty());
  CHECK(abh::to_json(r)["python"] == json{{"module", "bench.matmul"},
                                          {"entry", "make_problem"},
                                          {"device", "cuda"},
                                          {"interpreter", ""}});
  CHECK(abh::python_plugin_from_json(abh::to_json(*r.python), "plan") == *r.python);

  CHECK(contains(with({{"python", {{"module", "bench/matmul.py"}}}}),
                 where + ": field 'module': \"bench/matmul.py\" is not a dotted module name"));
  CHECK(contains(with({{"python", {{"module", "bench."}}}}), "field 'module'"));
  CHECK(contains(with({{"python", {{"module", "m"}, {"entry", "make problem"}}}}),
                 where + ": field 'entry'"));
  // What the schema states (schemas/manifest.schema.json) it reports, naming the JSON pointer.
  CHECK(contains(with({{"python", {{"module", "m"}, {"device", "gpu"}}}}),
                 "/plugins/py/python/device"));
  CHECK(contains(with({{"python", {{"module", "m"}, {"modul", "x"}}}}), "modul"));
  CHECK(contains(with({{"python", {{"entry", "f"}}}}), "module"));
  // Build-only fields without a build step would be ignored: refused instead.
  CHECK(contains(with({{"python", {{"module", "m"}}}, {"artifact", "libx.so"}}),
                 "field 'artifact' belongs to a build step"));
  CHECK(contains(with({{"python", {{"module", "m"}}}, {"env", json::object()}}),
                 "field 'env' belongs to a build step"));
}

TEST_CASE("manifest: a Python plugin may compile something first") {
  abh::test::TempDir tmp("abh-manifest");
  write_manifest(tmp.path(), {{"py",
                               {{"python", {{"module", "ext.gemm"}, {"device", "cpu"}}},
                                {"argv", {"c++", "-shared", "-I${ABHARNESS_INCLUDE}", "k.cpp"}},
                                {"artifact", "ext/libk.so"}}}});
  BuildRecipe r = abh::load_recipe(tmp.path(), "py", kVars);
  REQUIRE(r.python);
  CHECK(r.has_build());
  CHECK(r.argv[2] == "-I/opt/abh/include");
  CHECK(r.artifact == "ext/libk.so");
  CHECK(r.python->device == "cpu");
  // A C++ recipe's JSON has no "python" key: its build cache key stays what it was.
  write_manifest(tmp.path(), {{"cpu", {{"argv", {"make"}}, {"artifact", "libk.so"}}}});
  CHECK_FALSE(abh::to_json(abh::load_recipe(tmp.path(), "cpu", kVars)).contains("python"));
}

TEST_CASE("manifest: build settings are substituted, set in the environment, and checked") {
  abh::test::TempDir tmp("abh-manifest");
  write_manifest(tmp.path(), {{"cpu",
                               {{"argv", {"c++", "${OPT}", "-DV=${VEC}", "k.cpp"}},
                                {"artifact", "libk.so"},
                                {"env", {{"CXXFLAGS", "${OPT} -g"}}},
                                {"build_settings", {{"OPT", "-O2"}, {"VEC", "1"}}}}},
                              {"plain", {{"argv", {"c++", "${OPT}"}}, {"artifact", "x.so"}}}});
  abh::SubstitutionVars vars = kVars;
  BuildRecipe defaults = abh::load_recipe(tmp.path(), "cpu", vars);
  CHECK(defaults.argv == std::vector<std::string>{"c++", "-O2", "-DV=1", "k.cpp"});
  CHECK(defaults.env.at("CXXFLAGS") == "-O2 -g");
  CHECK(defaults.env.at("OPT") == "-O2");
  vars.build_settings = {{"OPT", "-O3"}};
  BuildRecipe o3 = abh::load_recipe(tmp.path(), "cpu", vars);
  CHECK(o3.argv[1] == "-O3");
  CHECK(o3.env.at("OPT") == "-O3");
  CHECK(o3.env.at("VEC") == "1");
  // Another setting is another recipe, and so another build cache key.
  CHECK(abh::to_json(o3) != abh::to_json(defaults));

  SUBCASE("a setting the target does not declare names the variant's field and the fix") {
    vars.build_settings = {{"OPTT", "-O3"}};
    const std::string e = error_of([&] { abh::load_recipe(tmp.path(), "cpu", vars); });
    CHECK(contains(e, "/plugins/cpu"));
    CHECK(contains(e, "field build.OPTT"));
    CHECK(contains(e, "it declares: OPT, VEC"));
    CHECK(contains(e, "build_settings"));
  }
  SUBCASE("an unknown ${NAME} in the argv of a target with settings is named") {
    write_manifest(tmp.path(), {{"cpu",
                                 {{"argv", {"c++", "${OPTS}"}},
                                  {"artifact", "libk.so"},
                                  {"build_settings", {{"OPT", "-O2"}}}}}});
    const std::string e = error_of([&] { abh::load_recipe(tmp.path(), "cpu", kVars); });
    CHECK(contains(e, "/plugins/cpu/argv/1"));
    CHECK(contains(e, "${OPTS}"));
  }
  SUBCASE("without declared settings ${...} stays literal, as before") {
    CHECK(abh::load_recipe(tmp.path(), "plain", kVars).argv[1] == "${OPT}");
    vars.build_settings = {{"OPT", "-O3"}};
    CHECK(contains(error_of([&] { abh::load_recipe(tmp.path(), "plain", vars); }),
                   "it declares none"));
  }
}
