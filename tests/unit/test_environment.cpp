// The machine a result was measured on: its JSON mapping (a CPU host has "gpu": null) and the
// host facts read without a GPU.
#include <doctest/doctest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "model/environment.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;

namespace {

Environment gpu_host() {
  Environment e;
  e.hostname = "node7";
  e.os = "Linux 6.1.0 x86_64";
  e.cpu_model = "Xeon";
  GpuInfo g;
  g.index = 1;
  g.name = "NVIDIA H200";
  g.uuid = "GPU-0f1e";
  g.pci_bus_id = "00000000:19:00.0";
  g.cc_major = 9;
  g.sm_count = 132;
  g.l2_bytes = 52428800;
  g.memory_bytes = 150000000000;
  e.gpu = g;
  e.driver_version = "580.65";
  e.cuda_runtime_version = "13000";
  e.libraries = {{"cublasLt", "13.0.0"}};
  return e;
}

}  // namespace

TEST_CASE("environment: JSON round-trips with and without a GPU") {
  Environment e = gpu_host();
  CHECK(environment_from_json(to_json(e), "plan.json") == e);
  CHECK(to_json(e)["gpu"]["memory_bytes"] == 150000000000);
  e.gpu.reset();
  CHECK(to_json(e)["gpu"].is_null());
  CHECK(environment_from_json(to_json(e), "plan.json") == e);
}

TEST_CASE("environment: ill-typed fields name where they are") {
  json j = to_json(gpu_host());
  j["libraries"]["cublasLt"] = 13;
  CHECK(test::error_of([&] { environment_from_json(j, "m[0]"); }) ==
        "m[0].libraries: field 'cublasLt': expected a string");
  j = to_json(gpu_host());
  j["gpu"]["uuid"] = 5;
  CHECK(test::error_of([&] { environment_from_json(j, "m[0]"); }) ==
        "m[0].gpu: field 'uuid': expected a string, found integer 5");
}

TEST_CASE("environment: the host probe reads hostname and OS like the system does") {
  Environment e = probe_host();
  char host[256] = {};
  REQUIRE(::gethostname(host, sizeof host - 1) == 0);
  CHECK(e.hostname == host);
  utsname u{};
  REQUIRE(::uname(&u) == 0);
  CHECK(e.os == std::string(u.sysname) + " " + u.release + " " + u.machine);
  CHECK_FALSE(e.gpu.has_value());
}
