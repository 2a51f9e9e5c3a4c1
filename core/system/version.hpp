#pragma once

namespace abh {
// Bumped on every release; recorded in plans and results and compared by provenance checks.
// Schema 2 of plans and results: a run nonce and the plan's own digest in the plan, the nonce and
// the SHA-256 of the plan file read in every result (docs/provenance.md).
inline constexpr const char* kHarnessVersion = "0.1.0";
inline constexpr int kPlanSchemaVersion = 2;
inline constexpr int kResultSchemaVersion = 2;
inline constexpr int kReportSchemaVersion = 1;
}  // namespace abh
