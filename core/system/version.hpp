#pragma once

namespace abh {
// Bumped on every release; recorded in plans and results and compared by provenance checks.
inline constexpr const char* kHarnessVersion = "0.1.0";
inline constexpr int kPlanSchemaVersion = 2;
inline constexpr int kResultSchemaVersion = 2;
inline constexpr int kReportSchemaVersion = 1;
}  // namespace abh
