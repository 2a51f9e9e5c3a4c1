#include "system/cpu_set.hpp"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "system/error.hpp"

namespace abh {
namespace {

// A CPU number: digits only, and below the kernel's CPU_SETSIZE limit of this build.
int cpu_number(const std::string& s, const std::string& text, const std::string& what) {
  if (s.empty() || s.size() > 6 ||
      !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw UsageError(what + " '" + text + "': '" + s +
                     "' is not a CPU number; write CPUs as a list such as 0-3,8");
  int n = std::stoi(s);
  if (n >= CPU_SETSIZE)
    throw UsageError(what + " '" + text + "': CPU " + s + " is beyond the " +
                     std::to_string(CPU_SETSIZE) + " CPUs this build can address");
  return n;
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text, const std::string& what) {
  std::string t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  std::set<int> cpus;
  std::stringstream ss(t);
  for (std::string item; std::getline(ss, item, ',');) {
    auto dash = item.find('-');
    if (dash == std::string::npos) {
      cpus.insert(cpu_number(item, text, what));
      continue;
    }
    int lo = cpu_number(item.substr(0, dash), text, what);
    int hi = cpu_number(item.substr(dash + 1), text, what);
    if (hi < lo) throw UsageError(what + " '" + text + "': range " + item + " runs backwards");
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
  if (cpus.empty()) throw UsageError(what + " '" + text + "' names no CPU: write e.g. 0-3,8");
  return {cpus.begin(), cpus.end()};
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::vector<int> v = cpus;
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(v[i]);
    if (j > i) out += "-" + std::to_string(v[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> thread_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    throw Error(std::string("sched_getaffinity: ") + std::strerror(errno));
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

void pin_this_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) throw Error("pin_this_thread: no CPUs given");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) throw Error("pin_this_thread: CPU " + std::to_string(c));
    CPU_SET(c, &set);
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    throw Error("cannot pin to CPU(s) " + format_cpu_list(cpus) + ": " + std::strerror(errno) +
                "; this machine allows " + format_cpu_list(thread_affinity()) +
                " (a plan made on another machine or in another cgroup: start a new run here)");
}

int current_cpu() {
  int c = sched_getcpu();
  if (c < 0) throw Error(std::string("sched_getcpu: ") + std::strerror(errno));
  return c;
}

std::optional<std::vector<int>> pci_local_cpus(const std::string& pci_bus_id,
                                               const std::string& sysfs) {
  // sysfs names a device by a 4-digit domain in lower case; NVML and CUDA print 8 digits.
  std::string id = pci_bus_id;
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto colon = id.find(':');
  if (colon == std::string::npos) return std::nullopt;
  if (colon > 4) id = id.substr(colon - 4);
  std::ifstream in(sysfs + "/bus/pci/devices/" + id + "/local_cpulist");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  try {
    return parse_cpu_list(line, "local_cpulist of PCI device " + id);
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

}  // namespace abh
