// report.json: the report's own JSON mapping (report_json.hpp), validated by
// schemas/report.schema.json. Every other format can be re-rendered from it with report_from_json.
#include "report/report_json.hpp"
#include "report/report_render.hpp"

namespace abh {

std::string render_json(const Report& r, const RenderOptions&) {
  // nlohmann keeps object keys sorted, so the bytes depend on the report alone.
  return report_json_text(r) + "\n";
}

}  // namespace abh
