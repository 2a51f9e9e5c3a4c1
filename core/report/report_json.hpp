// report.json: the report's one JSON mapping (schemas/report.schema.json). Every other format can
// be re-rendered from the file through report_from_json.
#pragma once

#include <optional>
#include <string>

#include "report/report.hpp"
#include "system/json_io.hpp"

namespace abh {

json to_json(const Report& r);
// to_json(r).dump(2), written a row at a time (system/json_large.hpp): report.json's text.
std::string report_json_text(const Report& r);
// `where` names the document in error messages. Fields added after the first report schema
// (speed of light, clocks) read as absent when missing, so older report.json files still load.
// The notes are not in the file: they are derived again (report_notes.hpp).
Report report_from_json(const json& j, const std::string& where);

// Pieces of the mapping that other documents built from reports reuse (report/comparison.hpp).
// An absent value is JSON null; reading, the key must be present and null reads as absent.
json opt_json(const std::optional<double>& v);
json opt_json(const std::optional<Interval>& v);
std::optional<double> opt_number(const json& j, const char* key, const std::string& where);
std::optional<Interval> opt_interval(const json& j, const char* key, const std::string& where);
// A shape's verdict, failure, times, speedup and interval: keys of its object in report.json and
// of each run's cell in compare.json.
json to_json(const ShapeEstimate& e);
ShapeEstimate shape_estimate_from_json(const json& j, const std::string& where);

}  // namespace abh
