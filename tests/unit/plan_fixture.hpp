// A valid plan and the result a worker writes for each of its arms, built in memory: the fixture
// of the tests of the run directory's documents (test_plan, test_result, test_provenance).
#pragma once

#include <string>

#include "model/plan.hpp"
#include "model/result.hpp"
#include "system/sha256.hpp"
#include "system/version.hpp"

namespace abh::test {

// Two shapes (m32, m64) under ABA. With gpus == 0 a CPU plugin measured on the host; otherwise a
// CUDA plugin, shapes sharded over `gpus` GPUs.
inline Plan fixture_plan(int gpus = 0) {
  Plan p;
  p.schema_version = kPlanSchemaVersion;
  p.harness_version = kHarnessVersion;
  p.run_id = "run-1";
  p.run_nonce = "0123456789abcdef0123456789abcdef";
  p.created_at = "2026-11-29T12:00:00Z";
  p.repo = "/src/kernels";
  p.plugin_target = gpus ? "cuda" : "cpu";
  p.command = {"abharness", "run", "--baseline", "HEAD~1", "--candidate", "HEAD"};
  p.worker_sha256 = sha256_hex("worker");
  for (const std::string name : {"baseline", "candidate"}) {
    Variant v;
    v.name = name;
    v.source.requested = name == "baseline" ? "HEAD~1" : "HEAD";
    v.source.kind = "commit";
    v.source.commit = std::string(40, name[0]);
    v.source.digest = identity_digest(v.source);
    v.recipe = {
        p.plugin_target, {"make", "plugin"}, "libkernel.so", {{"OPT", "-O2"}}, false, 600, {}};
    v.plugin = "variants/" + name + "/libkernel.so";
    v.plugin_sha256 = sha256_hex("plugin of " + name);
    v.build_cache_key = sha256_hex("key of " + name);
    v.toolchain_id = "c++ 12";
    v.device = gpus ? "cuda" : "cpu";
    v.libraries = {{"kernel", name + "-1.0"}};
    p.variants.push_back(v);
  }
  p.shapes = {Shape{"m32", "fc1", json{{"m", 32}}, "kernel"},
              Shape{"m64", "", json{{"m", 64}}, "kernel"}};
  p.schedule.gpus = gpus ? gpus : 1;
  p.tasks = make_schedule(p.shapes, p.schedule);
  // Each lane pinned to one CPU of its own, its other CPU beside it (placement.hpp).
  for (auto& t : p.tasks) t.cpus = {2 * t.gpu + 1, 2 * t.gpu};
  Environment host;
  host.hostname = "bench-host";
  host.os = "Linux 6.1 x86_64";
  host.cpu_model = "Test CPU";
  for (int g = 0; g < (gpus ? gpus : 1); ++g) {
    Environment e = host;
    if (gpus) {
      e.gpu = GpuInfo{g,
                      "NVIDIA H200",
                      "GPU-" + std::to_string(g),
                      "0000:0" + std::to_string(g) + ":00.0",
                      9,
                      0,
                      132,
                      60 << 20,
                      1LL << 37};
      e.driver_version = "580.65";
      e.cuda_runtime_version = "13000";
    }
    p.machine.push_back(e);
  }
  return p;
}

// The interpreter a fixture plan with Python plugins records.
inline Interpreter fixture_interpreter() {
  Interpreter py;
  py.requested = "python3";
  py.executable = "/usr/bin/python3";
  py.real_path = "/usr/bin/python3.11";
  py.version = "3.11.2";
  py.sha256 = std::string(64, 'a');
  py.distributions = {"numpy==1.24.2"};
  py.distributions_sha256 = std::string(64, 'd');
  py.site_sha256 = std::string(64, 's');
  return py;
}

// The result a worker writes for `t` (a task of `p`): everything the plan says, as the worker
// copies it, and three samples that differ from arm to arm so that no two payloads are equal.
inline ArmResult fixture_result(const Plan& p, const Task& t) {
  const Variant& v = p.variant(t.variant);
  const Shape& s = p.shape(t.shape);
  ArmResult r;
  r.schema_version = kResultSchemaVersion;
  r.harness_version = p.harness_version;
  r.invocation = {p.run_id, p.run_nonce,     s.id,      s.params, t.arm, t.variant,
                  t.round,  p.plugin_target, p.settings};
  // The digest of the plan file the worker read: set by whoever wrote the plan (file_sha256).
  r.plan_sha256 = p.file_sha256;
  r.worker_sha256 = p.worker_sha256;
  r.plugin_sha256 = v.plugin_sha256;
  r.source = v.source;
  r.environment = p.machine.at(static_cast<size_t>(t.gpu));
  r.environment.libraries = v.libraries;
  if (!t.cpus.empty()) r.placement = {t.cpus, {t.cpus.front()}, {t.cpus.front()}};
  r.telemetry.before.unavailable_reason = "no GPU";
  r.telemetry.after = r.telemetry.before;
  r.measurement.timer = "steady";
  r.measurement.cache_preparation = "warm";
  double base = 1000;
  for (const auto& other : p.tasks) {
    if (other == t) break;
    base += 1000;
  }
  r.measurement.samples_ns = {base, base + 1.5, base + 2.25};
  r.measurement.stop_reason = "fixed: 3 samples";
  r.measurement.kernel_names = {"gemm_kernel"};
  r.correctness = {true, 1e-7, 1e-5, 1024, "fp64 reference"};
  r.started_at = "2026-11-29T12:00:01Z";
  r.finished_at = "2026-11-29T12:00:02Z";
  r.pid = 4242;
  return r;
}

// The same, measured on `cpus` (a plan that leaves the CPUs to its lanes names none).
inline ArmResult fixture_result_at(const Plan& p, const Task& t, const std::vector<int>& cpus) {
  ArmResult r = fixture_result(p, t);
  r.placement = {cpus, {cpus.front()}, {cpus.front()}};
  return r;
}

}  // namespace abh::test
