// report.json: the report's one JSON mapping (schemas/report.schema.json). Every other format can
// be re-rendered from the file through report_from_json.
#pragma once

#include <string>

#include "report/report.hpp"
#include "system/json_io.hpp"

namespace abh {

json to_json(const Report& r);
// `where` names the document in error messages. Fields added after the first report schema
// (speed of light, clocks) read as absent when missing, so older report.json files still load.
Report report_from_json(const json& j, const std::string& where);

}  // namespace abh
