// The machine a result was measured on. The orchestrator records it in the plan (by asking a
// worker to probe, so both see the same libraries) and every result records it again; provenance
// validation compares the two.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "system/json_io.hpp"

namespace abh {

struct GpuInfo {
  int index = 0;
  std::string name;  // exact device name, e.g. "NVIDIA H200"
  std::string uuid;  // "GPU-..."
  std::string pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  long long l2_bytes = 0;
  long long memory_bytes = 0;
  bool operator==(const GpuInfo&) const = default;
};

struct Environment {
  std::string hostname;
  std::string os;         // uname sysname + release
  std::string cpu_model;  // /proc/cpuinfo "model name"
  std::optional<GpuInfo> gpu;
  std::string driver_version;                    // empty on CPU-only machines
  std::string cuda_runtime_version;              // e.g. "13000"
  std::string cupti_version;                     // CUPTI API version, when CUPTI was used
  std::map<std::string, std::string> libraries;  // from the plugin (e.g. cublasLt)
  bool operator==(const Environment&) const = default;
};

json to_json(const GpuInfo& g);
GpuInfo gpu_info_from_json(const json& j, const std::string& where);
json to_json(const Environment& e);
Environment environment_from_json(const json& j, const std::string& where);

// Host facts that need no GPU: hostname, OS, CPU model.
Environment probe_host();

}  // namespace abh
