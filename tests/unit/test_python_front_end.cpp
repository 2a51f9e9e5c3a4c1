// The Python front end of this build (bin/python/abharness/_front_end/, run by the system's
// python3) against the C++ it must agree with: its generated protocol module holds the values the
// compiler gives the headers, its ctypes structures lay out as the C structs, and where it reads
// what the engine reads (a plan's schema version, a CPU list) it accepts and refuses the same
// inputs in the same words.
#include <abharness/plugin.h>
#include <abharness/worker.h>
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/plan.hpp"
#include "model/worker_protocol.hpp"
#include "system/cpu_set.hpp"
#include "system/error.hpp"
#include "system/process.hpp"
#include "system/version.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;
namespace wp = abh::worker_protocol;
using nlohmann::json;

namespace {

// Runs `script` under python3 -I -B with the front end's package importable and `arg` as
// sys.argv[1]; its stdout, one JSON value a line, parsed.
std::vector<json> run_python(const std::string& script, const std::string& arg = "") {
  test::TempDir dir("abh-front-end");
  SpawnSpec spec;
  const std::string prelude = "import sys\nsys.path.insert(0, " +
                              json(std::string(ABH_BIN_DIR) + "/python").dump() +
                              ")\nfrom abharness._front_end.errors import FrontEndError\n";
  spec.argv = {"/usr/bin/python3", "-I", "-B", "-c", prelude + script, arg};
  spec.stdout_path = dir.path() / "out";
  spec.stderr_path = dir.path() / "err";
  spec.timeout_s = 60;
  const ExitStatus st = run_process(spec);
  REQUIRE_MESSAGE(st.ok(), test::slurp(spec.stderr_path));
  std::vector<json> out;
  std::istringstream lines(test::slurp(spec.stdout_path));
  for (std::string l; std::getline(lines, l);) out.push_back(json::parse(l));
  return out;
}

// How the front end's plan reader answers the plan.json in `dir`: "read", or "<exit code>:
// <error>".
json front_end_reads_plan(const fs::path& dir) {
  const std::vector<json> got = run_python(
      "import json\nfrom abharness._front_end.plan import read_plan\n"
      "try:\n"
      "    read_plan(sys.argv[1])\n"
      "    print(json.dumps('read'))\n"
      "except FrontEndError as e:\n"
      "    print(json.dumps('%d: %s' % (e.code, e)))\n",
      dir.string());
  REQUIRE(got.size() == 1);
  return got[0];
}

}  // namespace

TEST_CASE("python front end: its generated protocol module holds the C++ side's values") {
  const std::vector<json> got = run_python(
      "import json\nfrom abharness._front_end import protocol as p\n"
      "print(json.dumps([p.EXIT_USAGE, p.EXIT_RUNTIME, p.EXIT_WRONG_RESULT, p.EXIT_UNSUPPORTED,\n"
      "  p.ERROR_PREFIX, p.PLAN_SCHEMA_VERSION, p.PLAN_SCHEMA_FIX, p.PLUGIN_ABI_VERSION,\n"
      "  p.PLAN_SCHEMA_OLDEST,\n"
      "  p.FRONT_END_VERSION, p.ARM_CPUS_ENV, p.AHEAD_FLAG, list(p.PYTHON_FLAGS)]))\n");
  REQUIRE(got.size() == 1);
  CHECK(got[0] ==
        json::array({wp::kUsage, wp::kRuntime, wp::kWrongResult, wp::kUnsupported,
                     std::string(wp::kErrorPrefix), kPlanSchemaVersion, kPlanSchemaFix,
                     ABH_PLUGIN_ABI_VERSION, kOldestPlanSchemaVersion, ABH_WORKER_FRONT_END_VERSION,
                     wp::kArmCpusEnv, wp::kAheadFlag, json::array({"-I", "-B"})}));
}

TEST_CASE("python front end: its ctypes tables lay out as the C structs, and it checks that") {
  const std::vector<json> got = run_python(
      "import json\nfrom abharness._front_end import plugin_table, protocol\n"
      "plugin_table.check_layouts()\n"
      "print(json.dumps('laid out as the headers'))\n"
      "size, fields = protocol.LAYOUTS['abh_plugin_v1']\n"
      "protocol.LAYOUTS['abh_plugin_v1'] = (size, fields[:3] + ((fields[3][0], 0),) + fields[4:])\n"
      "try:\n"
      "    plugin_table.check_layouts()\n"
      "    print(json.dumps('not refused'))\n"
      "except FrontEndError as e:\n"
      "    print(json.dumps(str(e)))\n");
  REQUIRE(got.size() == 2);
  CHECK(got[0] == "laid out as the headers");
  CHECK(test::contains(got[1].get<std::string>(), "the front end's abh_plugin_v1 is laid out as"));
  CHECK(test::contains(got[1].get<std::string>(), "come from different builds"));
}

TEST_CASE("python front end: a CPU list is read as the engine reads it, refusals word for word") {
  const std::vector<std::string> lists = {
      "0-3,8", "3,1,1,2", "7",    "0-0",  "2-5,3-4", "0-3\n",   "1,",
      "",      "  ",      "1,,2", ",1",   "5-3",     "a",       "-",
      "1-",    "1-2-3",   "1 ,2", "1024", "1023",    "9999999", "\xd9\xa1"};
  const std::vector<json> got = run_python(
      "import json\nfrom abharness._front_end.plan import parse_cpu_list\n"
      "for text in json.loads(sys.argv[1]):\n"
      "    try:\n"
      "        print(json.dumps(parse_cpu_list(text, 'ABH_ARM_CPUS')))\n"
      "    except FrontEndError as e:\n"
      "        print(json.dumps('%d: %s' % (e.code, e)))\n",
      json(lists).dump());
  REQUIRE(got.size() == lists.size());
  for (size_t i = 0; i < lists.size(); ++i) {
    json want;
    try {
      want = parse_cpu_list(lists[i], wp::kArmCpusEnv);
    } catch (const UsageError& e) {
      want = std::to_string(wp::kUsage) + ": " + e.what();
    }
    CHECK_MESSAGE(got[i] == want, "list " << json(lists[i]).dump());
  }
}

TEST_CASE("python front end: a plan of another schema version is refused in the loader's words") {
  test::TempDir dir("abh-front-end-plan");
  const std::string usage = std::to_string(wp::kUsage) + ": ";
  for (const json& version : {json(1), json(4), json("2"), json(2.0), json(true), json(nullptr)}) {
    test::write(dir.path() / kPlanFile, json{{"schema_version", version}}.dump());
    const std::string engine = test::usage_error_of([&] { load_plan(dir.path()); });
    CHECK_MESSAGE(front_end_reads_plan(dir.path()) == usage + engine,
                  "schema_version " << version.dump());
  }
  test::write(dir.path() / kPlanFile, "{}");
  const std::string engine = test::usage_error_of([&] { load_plan(dir.path()); });
  CHECK(test::contains(engine, "missing field 'schema_version'"));
  CHECK(front_end_reads_plan(dir.path()) == usage + engine);
}
