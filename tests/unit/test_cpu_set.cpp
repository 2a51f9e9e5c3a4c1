// CPU lists, pinning and the CPUs local to a PCI device (system/cpu_set.hpp).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "system/cpu_set.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

TEST_CASE("cpu set: lists parse and format in the kernel's syntax") {
  CHECK(parse_cpu_list("0-3,8", "--cpus") == std::vector<int>{0, 1, 2, 3, 8});
  CHECK(parse_cpu_list("5,1,1\n", "x") == std::vector<int>{1, 5});
  CHECK(format_cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  CHECK(format_cpu_list({3}) == "3");
  CHECK(format_cpu_list({}) == "");
  CHECK_THROWS_WITH_AS(parse_cpu_list("a-3", "--cpus"), doctest::Contains("--cpus 'a-3'"),
                       UsageError);
  CHECK_THROWS_WITH_AS(parse_cpu_list("4-2", "--cpus"), doctest::Contains("runs backwards"),
                       UsageError);
  CHECK_THROWS_AS(parse_cpu_list("", "--cpus"), UsageError);
  CHECK_THROWS_AS(parse_cpu_list("99999999", "--cpus"), UsageError);
}

TEST_CASE("cpu set: pinning this thread narrows its affinity and it runs there") {
  const std::vector<int> all = thread_affinity();
  REQUIRE(!all.empty());
  pin_this_thread({all.back()});
  CHECK(thread_affinity() == std::vector<int>{all.back()});
  CHECK(current_cpu() == all.back());
  pin_this_thread(all);  // restore for the other tests of this process
  CHECK(thread_affinity() == all);
  CHECK_THROWS_WITH(pin_this_thread({-1}), doctest::Contains("CPU -1"));
}

TEST_CASE("cpu set: a PCI device's local CPUs come from sysfs, by either bus id spelling") {
  abh::test::TempDir dir;
  const fs::path root = dir.path();
  fs::create_directories(root / "bus/pci/devices/0000:1b:00.0");
  std::ofstream(root / "bus/pci/devices/0000:1b:00.0/local_cpulist") << "0-3,64-67\n";
  const std::vector<int> want = {0, 1, 2, 3, 64, 65, 66, 67};
  CHECK(pci_local_cpus("00000000:1B:00.0", root.string()) == want);
  CHECK(pci_local_cpus("0000:1b:00.0", root.string()) == want);
  CHECK(!pci_local_cpus("0000:2c:00.0", root.string()));
  CHECK(!pci_local_cpus("nonsense", root.string()));
}
