#include "model/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

#include "system/error.hpp"

namespace abh {

json to_json(const GpuInfo& g) {
  return json{
      {"index", g.index},           {"name", g.name},         {"uuid", g.uuid},
      {"pci_bus_id", g.pci_bus_id}, {"cc_major", g.cc_major}, {"cc_minor", g.cc_minor},
      {"sm_count", g.sm_count},     {"l2_bytes", g.l2_bytes}, {"memory_bytes", g.memory_bytes}};
}

GpuInfo gpu_info_from_json(const json& j, const std::string& where) {
  GpuInfo g;
  g.index = field<int>(j, "index", where);
  g.name = field<std::string>(j, "name", where);
  g.uuid = field<std::string>(j, "uuid", where);
  g.pci_bus_id = field<std::string>(j, "pci_bus_id", where);
  g.cc_major = field<int>(j, "cc_major", where);
  g.cc_minor = field<int>(j, "cc_minor", where);
  g.sm_count = field<int>(j, "sm_count", where);
  g.l2_bytes = field<std::int64_t>(j, "l2_bytes", where);
  g.memory_bytes = field<std::int64_t>(j, "memory_bytes", where);
  return g;
}

json to_json(const Environment& e) {
  return json{{"hostname", e.hostname},
              {"os", e.os},
              {"cpu_model", e.cpu_model},
              {"gpu", e.gpu ? to_json(*e.gpu) : json(nullptr)},
              {"driver_version", e.driver_version},
              {"cuda_runtime_version", e.cuda_runtime_version},
              {"cupti_version", e.cupti_version},
              {"libraries", e.libraries}};
}

Environment environment_from_json(const json& j, const std::string& where) {
  Environment e;
  e.hostname = field<std::string>(j, "hostname", where);
  e.os = field<std::string>(j, "os", where);
  e.cpu_model = field<std::string>(j, "cpu_model", where);
  if (j.contains("gpu") && !j["gpu"].is_null())
    e.gpu = gpu_info_from_json(j["gpu"], where + ".gpu");
  e.driver_version = field<std::string>(j, "driver_version", where);
  e.cuda_runtime_version = field<std::string>(j, "cuda_runtime_version", where);
  e.cupti_version = field<std::string>(j, "cupti_version", where);
  const json& libs = object_field(j, "libraries", where);
  for (auto it = libs.begin(); it != libs.end(); ++it) {
    if (!it->is_string())
      throw Error(where + ".libraries: field '" + it.key() + "': expected a string");
    e.libraries[it.key()] = it->get<std::string>();
  }
  return e;
}

Environment probe_host() {
  Environment e;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) e.hostname = host;
  utsname u{};
  if (::uname(&u) == 0) e.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) e.cpu_model = line.substr(colon + 2);
      break;
    }
  }
  return e;
}

}  // namespace abh
