// Which interpreter a run's Python plugins use, and what the Python front end says it is, with the
// real front end of this build and the system's python3: the choice between --python and the
// manifests, the description a plan records, the refusals, and the changes resume looks for.
#ifdef ABH_HAVE_ORCHESTRATOR

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>

#include "interpreter_probe.hpp"
#include "model/worker_protocol.hpp"
#include "system/error.hpp"
#include "system/sha256.hpp"
#include "test_support.hpp"

using namespace abh;
using abh::test::contains;
using abh::test::usage_error_of;
namespace fs = std::filesystem;

namespace {

const fs::path kFrontEnd = fs::path(ABH_BIN_DIR) / worker_protocol::kPythonFrontEnd;

Variant python_variant(const std::string& interpreter) {
  Variant v;
  v.recipe.python = PythonPlugin{"bench.matmul", "make_problem", "cuda", interpreter};
  return v;
}

}  // namespace

TEST_CASE("interpreter probe: --python, else the manifests' interpreter, else python3") {
  const std::vector<Variant> none{python_variant(""), python_variant("")};
  CHECK(requested_interpreter("", none) == "python3");
  CHECK(requested_interpreter("/venv/bin/python3", none) == "/venv/bin/python3");
  const std::vector<Variant> one{python_variant(""), python_variant("/opt/py/bin/python3")};
  CHECK(requested_interpreter("", one) == "/opt/py/bin/python3");
  const std::vector<Variant> both{python_variant("python3.11"), python_variant("python3.12")};
  const std::string msg = usage_error_of([&] { requested_interpreter("", both); });
  CHECK(contains(msg, "name different interpreters ('python3.11', 'python3.12')"));
  CHECK(contains(msg, "give --python"));
  CHECK(requested_interpreter("python3.12", both) == "python3.12");  // the flag settles it
  Variant cpp;                                                       // a C++ variant has no say
  CHECK(requested_interpreter("", {cpp, python_variant("python3.11")}) == "python3.11");
}

TEST_CASE("interpreter probe: the front end describes the interpreter a plan records") {
  test::TempDir tmp("abh-interp");
  // Debian's, as CI has it (scripts/install-deps.sh); a wrapper such as pyenv's shim would record
  // the interpreter it starts, not itself.
  const fs::path python = "/usr/bin/python3";
  const Interpreter p = describe_interpreter(python.string(), kFrontEnd, tmp.path());
  CHECK(p.requested == python.string());
  CHECK(p.executable == python.string());  // the path that is run, links kept
  CHECK(p.real_path == fs::canonical(python).string());
  CHECK(p.sha256 == sha256_file(p.real_path));
  CHECK(p.version.rfind("3.", 0) == 0);
  REQUIRE_FALSE(p.distributions.empty());
  std::string joined;
  for (const auto& d : p.distributions) joined += (joined.empty() ? "" : "\n") + d;
  CHECK(p.distributions_sha256 == sha256_hex(joined));
  CHECK(p.site_sha256.size() == 64);
  // Described again, nothing changed.
  CHECK(interpreter_changes(p, kFrontEnd, tmp.path()).empty());
  Interpreter older = p;
  older.version = "3.8.0";
  CHECK(interpreter_changes(older, kFrontEnd, tmp.path()) == "version 3.8.0 -> " + p.version);
}

TEST_CASE("interpreter probe: an interpreter that cannot be run is a usage error naming it") {
  test::TempDir tmp("abh-interp");
  CHECK(contains(usage_error_of([&] {
                   describe_interpreter("no-such-python-anywhere", kFrontEnd, tmp.path());
                 }),
                 "Python interpreter 'no-such-python-anywhere'"));
  test::write(tmp.path() / "notexec", "#!/bin/sh\n");
  CHECK(contains(usage_error_of([&] {
                   describe_interpreter((tmp.path() / "notexec").string(), kFrontEnd, tmp.path());
                 }),
                 "is not an executable file"));
  // Runs, but is no Python: the front end's description fails, and the message says what is needed.
  const fs::path fake = tmp.path() / "fakepython";
  test::write(fake, "#!/bin/sh\necho 'not python' >&2\nexit 1\n");
  ::chmod(fake.c_str(), 0755);
  const std::string msg =
      usage_error_of([&] { describe_interpreter(fake.string(), kFrontEnd, tmp.path()); });
  CHECK(contains(msg, "cannot describe itself"));
  CHECK(contains(msg, "not python"));
  CHECK(contains(msg, "CPython >= 3.9"));
}

#endif  // ABH_HAVE_ORCHESTRATOR
