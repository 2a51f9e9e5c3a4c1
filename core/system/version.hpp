#pragma once

namespace abh {
// Bumped on every release; recorded in plans and results and compared by provenance checks.
// Schema 2 of plans and results: a run nonce and the plan's own digest in the plan, the nonce and
// the SHA-256 of the plan file read in every result (docs/provenance.md).
inline constexpr const char* kHarnessVersion = "0.1.0";
// Plan schema 3: variants files (a baseline and several candidates with build and run settings,
// docs/variants.md) and the decisive factor of the statistics options. An abharness of schema 2
// would read a variants plan as a two-variant one without a candidate arm and report every shape
// failed; it refuses schema 3 instead. Plans of schema 2 are read as before.
inline constexpr int kPlanSchemaVersion = 3;
inline constexpr int kOldestPlanSchemaVersion = 2;
inline constexpr int kResultSchemaVersion = 2;
inline constexpr int kReportSchemaVersion = 1;
}  // namespace abh
