// The orchestrator-worker protocol: the argument vectors and error lines of
// model/worker_protocol.hpp, and the real worker binary answering them as the orchestrator
// expects (exit codes, the error line, the parent-pid check).
#include <abharness/worker.h>
#include <dlfcn.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "model/environment.hpp"
#include "model/worker_protocol.hpp"
#include "system/json_io.hpp"
#include "system/process.hpp"
#include "test_support.hpp"

using namespace abh;
namespace wp = abh::worker_protocol;
namespace fs = std::filesystem;
using Args = std::vector<std::string>;

TEST_CASE("worker protocol: one argument vector per subcommand") {
  CHECK(wp::run_args("/runs/r1", "m128", "A2") ==
        Args{"run", "--run-dir", "/runs/r1", "--shape", "m128", "--arm", "A2"});
  CHECK(wp::run_args("/runs/r1", "m128", "A2", true, true) == Args{"run", "--run-dir", "/runs/r1",
                                                                   "--shape", "m128", "--arm", "A2",
                                                                   "--warmup", "--ahead"});
  CHECK(wp::probe_args() == Args{"probe"});
  CHECK(wp::probe_args("GPU-1234") == Args{"probe", "--gpu", "GPU-1234"});
  CHECK(wp::describe_args("/runs/r1/libp.so") == Args{"describe", "--plugin", "/runs/r1/libp.so"});
  CHECK(wp::telemetry_args("1") == Args{"telemetry", "--gpu", "1"});
}

TEST_CASE(
    "worker protocol: a Python arm is the interpreter on the front end, isolated, no bytecode") {
  CHECK(wp::python_run_command("/venv/bin/python3", "/abh/bin/python/abharness_front_end.py",
                               "/runs/r1", "m128", "B") ==
        Args{"/venv/bin/python3", "-I", "-B", "/abh/bin/python/abharness_front_end.py", "run",
             "--run-dir", "/runs/r1", "--shape", "m128", "--arm", "B"});
  CHECK(wp::python_run_command("python3", "/abh/l.py", "/r", "s", "A1", false, true).back() ==
        "--ahead");
  CHECK(wp::python_run_command("python3", "/abh/l.py", "/r", "s", "A1", true).back() == "--warmup");
  CHECK(wp::python_interpreter_command("python3", "/abh/l.py") ==
        Args{"python3", "-I", "-B", "/abh/l.py", "interpreter"});
}

TEST_CASE("worker protocol: the worker's digest covers each of its files, by role") {
  test::TempDir tmp("abh-worker-files");
  const wp::WorkerFiles f = wp::worker_files(tmp.path());
  CHECK(f.executable == tmp.path() / "abharness-worker");
  CHECK(f.engine == tmp.path() / "libabharness_worker.so");
  CHECK(f.front_end == tmp.path() / "python/abharness_front_end.py");
  CHECK(f.python_package == tmp.path() / "python/abharness");
  const std::string missing = test::error_of([&] { wp::worker_digest(f); });
  CHECK(
      test::contains(missing, "the worker's executable " + f.executable.string() + " is missing"));
  const fs::path init = f.python_package / "__init__.py";
  const fs::path module = f.python_package / "_front_end" / "plan.py";
  for (const auto* p : {&f.executable, &f.engine, &f.front_end})
    test::write(*p, "contents of " + p->filename().string());
  CHECK(test::contains(
      test::error_of([&] { wp::worker_digest(f); }),
      "the worker's Python package " + f.python_package.string() + " is missing its __init__.py"));
  for (const auto* p : {&init, &module}) test::write(*p, "contents of " + p->filename().string());
  const std::string d = wp::worker_digest(f);
  CHECK(d.size() == 64);
  for (const auto* p : {&f.executable, &f.engine, &f.front_end, &init, &module}) {
    test::write(*p, "changed");
    CHECK(wp::worker_digest(f) != d);
    test::write(*p, "contents of " + p->filename().string());
  }
  CHECK(wp::worker_digest(f) == d);
  // A module more in the package, or one moved within it, is another worker; bytecode is not.
  test::write(f.python_package / "_front_end" / "extra.py", "");
  CHECK(wp::worker_digest(f) != d);
  fs::remove(f.python_package / "_front_end" / "extra.py");
  fs::rename(module, f.python_package / "plan.py");
  CHECK(wp::worker_digest(f) != d);
  fs::rename(f.python_package / "plan.py", module);
  test::write(f.python_package / "__pycache__" / "plan.cpython-311.pyc", "bytecode");
  CHECK(wp::worker_digest(f) == d);
  // The same files in other roles are another worker.
  wp::WorkerFiles swapped = f;
  std::swap(swapped.executable, swapped.front_end);
  CHECK(wp::worker_digest(swapped) != d);
}

TEST_CASE("worker protocol: an error line carries the message after its prefix") {
  const std::string line = wp::error_line("wrong result: max relative error 0.5");
  CHECK(line == "abharness-worker: error: wrong result: max relative error 0.5");
  CHECK(wp::parse_error_line(line) ==
        std::optional<std::string>("wrong result: max relative error 0.5"));
  CHECK(wp::parse_error_line(wp::error_line("")) == std::optional<std::string>(""));
  CHECK_FALSE(wp::parse_error_line("[0.1 s] plugin loaded").has_value());
  CHECK_FALSE(wp::parse_error_line("note: abharness-worker: error: quoted").has_value());
  CHECK_FALSE(wp::parse_error_line("abharness-worker: error:").has_value());  // no space: not ours
}

namespace {
struct WorkerRun {
  ExitStatus status;
  std::string out, err;
};

WorkerRun run_worker(const Args& args, const std::map<std::string, std::string>& env = {}) {
  test::TempDir dir("abh-protocol");
  SpawnSpec spec;
  spec.argv = {std::string(ABH_BIN_DIR) + "/abharness-worker"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env;
  spec.stdout_path = dir.path() / "out";
  spec.stderr_path = dir.path() / "err";
  spec.timeout_s = 60;
  WorkerRun r{run_process(spec), "", ""};
  r.out = test::slurp(spec.stdout_path);
  r.err = test::slurp(spec.stderr_path);
  return r;
}

std::optional<std::string> last_error(const std::string& err) {
  std::optional<std::string> found;
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);)
    if (auto m = wp::parse_error_line(l)) found = m;
  return found;
}
}  // namespace

TEST_CASE("worker protocol: the worker probes the host and exits ok") {
  WorkerRun r = run_worker(wp::probe_args(), {{wp::kParentPidEnv, std::to_string(::getpid())}});
  REQUIRE(r.status.kind == ExitStatus::Kind::exited);
  CHECK(r.status.code == wp::kOk);
  const Environment env = environment_from_json(parse_json(r.out, "worker probe"), "worker probe");
  CHECK(env == probe_host());  // the host alone: no GPU, no driver
}

TEST_CASE("worker protocol: a failure ends in one error line and the exit code of its kind") {
  WorkerRun r = run_worker(wp::describe_args("/nonexistent/libnothing.so"));
  REQUIRE(r.status.kind == ExitStatus::Kind::exited);
  CHECK(r.status.code == wp::kRuntime);
  const auto message = last_error(r.err);
  REQUIRE(message.has_value());
  CHECK(message->find("cannot load plugin /nonexistent/libnothing.so") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("worker protocol: the engine exports the front-end entry and none of its own symbols") {
  // abharness-worker and the Python front end are front ends over libabharness_worker.so; in an
  // interpreter's process, none of the engine's symbols may stand in for another library's.
  const std::string engine = std::string(ABH_BIN_DIR) + "/" + wp::kWorkerEngine;
  void* h = ::dlopen(engine.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(h != nullptr, ::dlerror());
  CHECK(::dlsym(h, ABH_WORKER_MAIN_SYMBOL) != nullptr);
  CHECK(::dlsym(h, "_ZN3abh10sha256_hexB5cxx11ESt17basic_string_viewIcSt11char_traitsIcEE") ==
        nullptr);  // abh::sha256_hex, from the static core library linked into the engine
  ::dlclose(h);
  for (const char* f : {wp::kWorkerExecutable, wp::kPythonFrontEnd, wp::kPythonPackage})
    CHECK(std::filesystem::exists(std::string(ABH_BIN_DIR) + "/" + f));
  // The front end's protocol module is generated at build time, beside its other modules.
  CHECK(std::filesystem::is_regular_file(std::string(ABH_BIN_DIR) + "/" + wp::kPythonPackage +
                                         "/_front_end/protocol.py"));
}

TEST_CASE("worker protocol: a worker whose parent is not the one named exits at once") {
  // Its parent is this test, never pid 1: the worker takes itself for an orphan.
  WorkerRun r = run_worker(wp::probe_args(), {{wp::kParentPidEnv, "1"}});
  REQUIRE(r.status.kind == ExitStatus::Kind::exited);
  CHECK(r.status.code == wp::kRuntime);
  CHECK(r.out.empty());
}
