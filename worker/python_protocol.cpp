// Writes the Python front end's protocol module (python/abharness/_front_end/protocol.py in the
// build tree and the install) from the headers the C++ side compiles: the worker protocol, the
// plan's file and schema, the plugin ABI and the front end's table. The values come from the
// compiler, not from parsing the headers, so the front end cannot say another exit code, flag or
// ABI version than the engine it loads. The C structs' sizes and field offsets go with them: the
// front end checks its ctypes structures against them before it hands a table to the engine.
//
// usage: abh_python_protocol OUTPUT.py
#include <abharness/plugin.h>
#include <abharness/worker.h>
#include <sched.h>

#include <cstddef>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/plan.hpp"
#include "model/worker_protocol.hpp"
#include "system/version.hpp"

namespace {

namespace wp = abh::worker_protocol;

// A Python string literal: the constants are ASCII, anything else is escaped.
std::string py(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '"') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

struct Layout {
  const char* name;
  std::size_t size;
  std::vector<std::pair<const char*, std::size_t>> fields;
};

#define ABH_FIELD(type, field) \
  { #field, offsetof(type, field) }

std::vector<Layout> layouts() {
  return {
      {"abh_verify_result",
       sizeof(abh_verify_result),
       {ABH_FIELD(abh_verify_result, max_rel_error), ABH_FIELD(abh_verify_result, tolerance),
        ABH_FIELD(abh_verify_result, checked), ABH_FIELD(abh_verify_result, method)}},
      {"abh_plugin_v1",
       sizeof(abh_plugin_v1),
       {ABH_FIELD(abh_plugin_v1, abi_version), ABH_FIELD(abh_plugin_v1, name),
        ABH_FIELD(abh_plugin_v1, device), ABH_FIELD(abh_plugin_v1, create),
        ABH_FIELD(abh_plugin_v1, enqueue), ABH_FIELD(abh_plugin_v1, verify),
        ABH_FIELD(abh_plugin_v1, flops), ABH_FIELD(abh_plugin_v1, min_bytes),
        ABH_FIELD(abh_plugin_v1, tactic_count), ABH_FIELD(abh_plugin_v1, tactic_key),
        ABH_FIELD(abh_plugin_v1, select_tactic), ABH_FIELD(abh_plugin_v1, library_versions),
        ABH_FIELD(abh_plugin_v1, destroy)}},
      {"abh_plugin_v2",
       sizeof(abh_plugin_v2),
       {ABH_FIELD(abh_plugin_v2, v1), ABH_FIELD(abh_plugin_v2, capabilities),
        ABH_FIELD(abh_plugin_v2, buffer_set_bytes), ABH_FIELD(abh_plugin_v2, make_buffer_sets),
        ABH_FIELD(abh_plugin_v2, use_buffer_set), ABH_FIELD(abh_plugin_v2, capture_graph),
        ABH_FIELD(abh_plugin_v2, replay_graph), ABH_FIELD(abh_plugin_v2, destroy_graph)}},
      {"abh_worker_front_end",
       sizeof(abh_worker_front_end),
       {ABH_FIELD(abh_worker_front_end, version), ABH_FIELD(abh_worker_front_end, kind),
        ABH_FIELD(abh_worker_front_end, plugin), ABH_FIELD(abh_worker_front_end, script_path),
        ABH_FIELD(abh_worker_front_end, identity_json),
        ABH_FIELD(abh_worker_front_end, session_opened)}},
  };
}

#undef ABH_FIELD

void write_worker_protocol(std::ostream& o) {
  o << "# The worker protocol (core/model/worker_protocol.hpp).\n"
    << "EXIT_OK = " << wp::kOk << "\nEXIT_USAGE = " << wp::kUsage
    << "\nEXIT_RUNTIME = " << wp::kRuntime << "\nEXIT_WRONG_RESULT = " << wp::kWrongResult
    << "\nEXIT_UNSUPPORTED = " << wp::kUnsupported << "\nERROR_PREFIX = " << py(wp::kErrorPrefix)
    << "\nRUN = " << py(wp::kRun) << "\nINTERPRETER = " << py(wp::kInterpreter)
    << "\nRUN_DIR_FLAG = " << py(wp::kRunDirFlag) << "\nSHAPE_FLAG = " << py(wp::kShapeFlag)
    << "\nARM_FLAG = " << py(wp::kArmFlag) << "\nAHEAD_FLAG = " << py(wp::kAheadFlag)
    << "\nWARMUP_FLAG = " << py(wp::kWarmupFlag) << "\nPARENT_PID_ENV = " << py(wp::kParentPidEnv)
    << "\nARM_CPUS_ENV = " << py(wp::kArmCpusEnv) << "\nPYTHON_FLAGS = (";
  for (const char* flag : wp::kPythonFlags) o << py(flag) << ", ";
  o << ")\nWORKER_EXECUTABLE = " << py(wp::kWorkerExecutable)
    << "\nWORKER_ENGINE = " << py(wp::kWorkerEngine)
    << "\nWORKER_MAIN_SYMBOL = " << py(ABH_WORKER_MAIN_SYMBOL)
    << "\nFRONT_END_VERSION = " << ABH_WORKER_FRONT_END_VERSION << "\n"
    << "# The most CPUs a CPU list may name (CPU_SETSIZE of core/system/cpu_set.cpp's build).\n"
    << "CPU_SETSIZE = " << CPU_SETSIZE << "\n\n";
}

void write_plan(std::ostream& o) {
  o << "# The plan (core/model/plan.hpp, core/system/version.hpp).\n"
    << "PLAN_FILE = " << py(abh::kPlanFile) << "\nPLAN_SCHEMA_VERSION = " << abh::kPlanSchemaVersion
    << "\nPLAN_SCHEMA_OLDEST = " << abh::kOldestPlanSchemaVersion
    << "\nPLAN_SCHEMA_FIX = " << py(abh::kPlanSchemaFix) << "\n\n";
}

void write_plugin_abi(std::ostream& o) {
  o << "# The plugin ABI (include/abharness/plugin.h).\n"
    << "PLUGIN_ABI_VERSION = " << ABH_PLUGIN_ABI_VERSION << "\nABH_OK = " << ABH_OK
    << "\nABH_ERR_INVALID_PARAMS = " << ABH_ERR_INVALID_PARAMS
    << "\nABH_ERR_UNSUPPORTED = " << ABH_ERR_UNSUPPORTED
    << "\nABH_ERR_RUNTIME = " << ABH_ERR_RUNTIME
    << "\nABH_ERR_WRONG_RESULT = " << ABH_ERR_WRONG_RESULT << "\n"
    << "# What a problem can do besides one enqueue (enum abh_capability).\n"
    << "ABH_CAP_CAPTURABLE = " << ABH_CAP_CAPTURABLE
    << "\nABH_CAP_BUFFER_SETS = " << ABH_CAP_BUFFER_SETS
    << "\nABH_CAP_OWN_GRAPHS = " << ABH_CAP_OWN_GRAPHS << "\n"
    << "# The plan's device names and the ABI's device kinds.\n"
    << "DEVICE_KINDS = {\"cpu\": " << ABH_DEVICE_CPU << ", \"cuda\": " << ABH_DEVICE_CUDA << "}\n\n"
    << "# Each C struct's size and its fields' offsets on this build's platform, in order:\n"
    << "# {struct: (size, ((field, offset), ...))}.\nLAYOUTS = {\n";
  for (const Layout& l : layouts()) {
    o << "    " << py(l.name) << ": (" << l.size << ", (";
    for (const auto& [field, offset] : l.fields) o << "(" << py(field) << ", " << offset << "), ";
    o << ")),\n";
  }
  o << "}\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: abh_python_protocol OUTPUT.py\n";
    return 2;
  }
  std::ostringstream o;
  o << "\"\"\"The worker protocol and the plugin ABI, as the C++ side compiles them.\n\n"
    << "Generated at build time by worker/python_protocol.cpp from the headers named below:\n"
    << "edit those, never this file.\n\"\"\"\n\n";
  write_worker_protocol(o);
  write_plan(o);
  write_plugin_abi(o);
  std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
  out << o.str();
  out.close();
  if (!out) {
    std::cerr << "abh_python_protocol: cannot write " << argv[1] << "\n";
    return 1;
  }
  return 0;
}
