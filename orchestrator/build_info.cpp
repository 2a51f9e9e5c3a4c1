#include "build_info.hpp"

#include <abharness/plugin.h>

#include "system/version.hpp"

namespace abh {

std::string version_text(const BuildInfo& b) {
  return "abharness " + b.version + "\nrevision: " + b.revision + "\ncompiler: " + b.compiler +
         "\nCUDA: " + b.cuda + "\nplugin ABI: " + std::to_string(ABH_PLUGIN_ABI_VERSION) +
         "\nschemas: plan " + std::to_string(kPlanSchemaVersion) + ", result " +
         std::to_string(kResultSchemaVersion) + ", report " + std::to_string(kReportSchemaVersion) +
         "\n";
}

}  // namespace abh
