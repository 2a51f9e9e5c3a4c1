// The exit codes of `abharness`, documented in docs/exit-codes.md and `abharness --help`. CI jobs
// branch on them, so each meaning has its own number.
#pragma once

namespace abh::exit_code {
inline constexpr int kSuccess = 0;     // the sweep is complete and valid; report written
inline constexpr int kError = 1;       // something broke that is not one of the below (a build)
inline constexpr int kUsage = 2;       // bad flag, file or revision: the message names the fix
inline constexpr int kProvenance = 3;  // a result failed validation: no report was produced
inline constexpr int kIncomplete = 4;  // some arms failed or were not run: report is partial
inline constexpr int kRegression = 5;  // --fail-on-regression and a shape is slower
inline constexpr int kUndecided = 6;   // --fail-on-regression and a shape's direction is unknown
}  // namespace abh::exit_code
