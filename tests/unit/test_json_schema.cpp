// Validation against the compiled-in JSON Schemas: every example and test input is valid; a broken
// grid and a broken manifest give messages that name the file, the JSON pointer and the fix; the
// schemas' patterns cannot overflow std::regex's stack; the compiled-in text is schemas/'s.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "system/error.hpp"
#include "system/json_schema.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

namespace {

const fs::path kSource = ABH_SOURCE_DIR;

std::string message(const json& doc, const char* schema) {
  return test::error_of([&] { check_schema(doc, schema, "f.json"); });
}

json grid_with(const json& shape) {
  return json{{"schema_version", 1}, {"shapes", json::array({shape})}};
}

json manifest_with(const json& recipe) {
  return json{{"schema_version", 1}, {"plugins", {{"cpu", recipe}}}};
}

// Whether a regular expression repeats without a bound ('*', '+' or '{n,}' outside a character
// class): std::regex then recurses once per character of the input.
bool unbounded(const std::string& re) {
  bool in_class = false;
  for (std::size_t i = 0; i < re.size(); ++i) {
    const char c = re[i];
    if (c == '\\') {
      ++i;
    } else if (in_class) {
      in_class = c != ']';
    } else if (c == '[') {
      in_class = true;
    } else if (c == '*' || c == '+') {
      return true;
    } else if (c == '{') {
      const auto close = re.find('}', i);
      if (close != std::string::npos && re[close - 1] == ',') return true;
    }
  }
  return false;
}

void collect_patterns(const json& node, std::vector<std::string>& out) {
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == "pattern" && it->is_string()) out.push_back(*it);
      collect_patterns(*it, out);
    }
  } else if (node.is_array()) {
    for (const auto& item : node) collect_patterns(item, out);
  }
}

}  // namespace

TEST_CASE("json_schema: the compiled-in schemas are the files of schemas/") {
  const auto names = embedded_schema_names();
  for (const char* n : {"compare", "grid", "manifest", "plan", "report", "result"})
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  for (const auto& n : names)
    CHECK(std::string(embedded_schema(n)) ==
          test::slurp(kSource / "schemas" / (n + ".schema.json")));
  CHECK(test::error_of([] { embedded_schema("nope"); }).find("no compiled-in schema 'nope'") == 0);
}

TEST_CASE("json_schema: every example and test input validates") {
  int grids = 0, manifests = 0;
  for (const auto& e : fs::recursive_directory_iterator(kSource / "examples")) {
    if (e.path().filename() == "shapes.json") {
      CHECK_MESSAGE(schema_violations(read_json_file(e.path()), "grid").empty(), e.path());
      ++grids;
    }
    if (e.path().filename() == "abharness.json") {
      CHECK_MESSAGE(schema_violations(read_json_file(e.path()), "manifest").empty(), e.path());
      ++manifests;
    }
  }
  CHECK(schema_violations(read_json_file(kSource / "abharness.json"), "manifest").empty());
  CHECK(grids >= 2);
  CHECK(manifests >= 2);
  // The grid the integration tests write (tests/lib.sh small_grid) and a grid as `abharness grid`
  // writes it, with what it records about itself.
  const json small = json::parse(R"({ "schema_version": 1, "shapes": [
    { "id": "m32_n32_k32", "params": { "m": 32, "n": 32, "k": 32 } },
    { "id": "m96_n64_k80", "label": "tiny", "params": { "m": 96, "n": 64, "k": 80 } },
    { "params": { "m": 1, "n": 2, "k": 3 } } ],
    "generated_by": { "model": "llama-3.1-8b" }, "description": "free text" })");
  CHECK(schema_violations(small, "grid").empty());
  const json kinded = manifest_with({{"kind", "build"},
                                     {"argv", {"make"}},
                                     {"artifact", "a.so"},
                                     {"env", {{"CC", "gcc"}}},
                                     {"shell", false},
                                     {"timeout_s", 5}});
  CHECK(schema_violations(kinded, "manifest").empty());
}

TEST_CASE("json_schema: a broken grid names the file, the pointer and the fix") {
  const json ok_params = {{"m", 1}, {"n", 1}, {"k", 1}};
  CHECK(message(grid_with({{"id", "../evil"}, {"params", ok_params}}), "grid") ==
        "f.json: /shapes/0/id: string \"../evil\" is not allowed; fix: give the shape id 1-100 "
        "characters of [A-Za-z0-9._-], not starting with '.' (it names the shape's result "
        "directory); without \"id\" one is made from m, n, k and dtype/precision");
  CHECK(message(grid_with({{"id", "a"}, {"params", 5}}), "grid") ==
        "f.json: /shapes/0/params: expected an object, found integer 5; fix: give \"params\" as an "
        "object: the plugin's problem parameters, e.g. {\"m\": 128, \"n\": 4096, \"k\": 4096}");
  CHECK(message(grid_with({{"id", "a"}, {"lable", "x"}, {"params", ok_params}}), "grid") ==
        "f.json: /shapes/0/lable: unknown field; fix: remove it or fix its name: the fields here "
        "are id, label, params");
  CHECK(
      message(grid_with({{"id", "a"}}), "grid") ==
      "f.json: /shapes/0/params: missing; fix: give \"params\" as an object: the plugin's problem "
      "parameters, e.g. {\"m\": 128, \"n\": 4096, \"k\": 4096}");
  CHECK(message(json{{"schema_version", 2}, {"shapes", json::array()}}, "grid") ==
        "f.json: /schema_version: found integer 2, expected 1; fix: set \"schema_version\": 1 (the "
        "grid format this abharness reads)\n"
        "f.json: /shapes: has 0 item(s), expected at least 1; fix: give \"shapes\" as a non-empty "
        "array of {\"id\", \"params\"} objects");
  CHECK(message(json::array(), "grid") ==
        "f.json: top level: expected an object, found array []; fix: the file must be an object "
        "with the fields schema_version, shapes (abharness grid)");
  CHECK(
      message(json{{"schema_version", 1}, {"shapes", {{{"id", nullptr}, {"params", {}}}}}}, "grid")
          .rfind("f.json: /shapes/0/id: expected a string, found null; fix:", 0) == 0);
}

TEST_CASE("json_schema: a broken manifest names the file, the pointer and the fix") {
  const json good = {{"argv", {"make"}}, {"artifact", "libk.so"}};
  json shell = good;
  shell["shell"] = true;
  shell["argv"] = {"make", "all"};
  CHECK(message(manifest_with(shell), "manifest") ==
        "f.json: /plugins/cpu/argv: has 2 items, expected at most 1; fix: with \"shell\": true, "
        "give argv exactly one string, the command line for /bin/sh -c: join the items into one "
        "string");
  json timeout = good;
  timeout["timeout_s"] = -1;
  CHECK(message(manifest_with(timeout), "manifest") ==
        "f.json: /plugins/cpu/timeout_s: found integer -1, expected more than 0; fix: give "
        "\"timeout_s\" as a positive number of seconds the build may take (default 1800)");
  json env = good;
  env["env"] = {{"A=B", "x"}};
  CHECK(message(manifest_with(env), "manifest") ==
        "f.json: /plugins/cpu/env: a name in it is not allowed; fix: give \"env\" as an object of "
        "variable name to string value; a name is 1-255 characters without '='");
  json kind = good;
  kind["kind"] = "python";
  CHECK(message(manifest_with(kind), "manifest") ==
        "f.json: /plugins/cpu/kind: found string \"python\", expected one of [\"build\"]; fix: set "
        "\"kind\" to one of the plugin kinds (\"build\": run a command that builds a shared "
        "library; the default)");
  json typo = good;
  typo["artefact"] = "x";
  CHECK(message(manifest_with(typo), "manifest") ==
        "f.json: /plugins/cpu/artefact: unknown field; fix: remove it or fix its name: the fields "
        "here are argv, artifact, build_settings, env, kind, python, shell, timeout_s");
  json arg = good;
  arg["argv"] = {"make", 3};
  CHECK(message(manifest_with(arg), "manifest") ==
        "f.json: /plugins/cpu/argv/1: expected a string, found integer 3; fix: give each argument "
        "as a string (${ABHARNESS_INCLUDE} and ${CUDA_HOME} are substituted)");
  json empty = good;
  empty["argv"] = {""};
  CHECK(message(manifest_with(empty), "manifest") ==
        "f.json: /plugins/cpu/argv/0: is empty; fix: give the program to run as argv's first item "
        "(a name on PATH or a path; ${CUDA_HOME} is substituted)");
}

TEST_CASE("json_schema: patterns are bounded, so hostile strings are refused without a crash") {
  // The schemas of the files users write, validated at run time (plan, result and report are
  // written by abharness and validated by tests and tools, not by std::regex).
  for (const std::string n : {"grid", "manifest", "variants"}) {
    std::vector<std::string> patterns;
    collect_patterns(json::parse(embedded_schema(n)), patterns);
    for (const auto& p : patterns) {
      CAPTURE(n);
      CAPTURE(p);
      CHECK_FALSE(unbounded(p));
    }
  }
  CHECK(unbounded("^[^=]+$"));  // the checker itself sees an unbounded repetition
  CHECK_FALSE(unbounded("^[a+*]{1,5}$"));
  const std::string huge(300000, 'a');
  CHECK(schema_violations(grid_with({{"id", huge}, {"params", json::object()}}), "grid").size() ==
        1);
  json env = manifest_with({{"argv", {"make"}}, {"artifact", huge}, {"env", {{huge, "x"}}}});
  CHECK(schema_violations(env, "manifest").size() == 2);
}
