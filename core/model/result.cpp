#include "model/result.hpp"

#include <algorithm>

#include "system/error.hpp"
#include "system/run_dir_fs.hpp"
#include "system/sha256.hpp"
#include "system/text.hpp"

namespace abh {

json to_json(const Invocation& i) {
  return json{{"run_id", i.run_id},
              {"run_nonce", i.run_nonce},
              {"shape", i.shape},
              {"params", i.params},
              {"arm", i.arm},
              {"variant", i.variant},
              {"round", i.round},
              {"plugin_target", i.plugin_target},
              {"settings", to_json(i.settings)}};
}

Invocation invocation_from_json(const json& j, const std::string& where) {
  Invocation i;
  i.run_id = field<std::string>(j, "run_id", where);
  i.run_nonce = field<std::string>(j, "run_nonce", where);
  i.shape = field<std::string>(j, "shape", where);
  i.params = object_field(j, "params", where);
  i.arm = field<std::string>(j, "arm", where);
  i.variant = field<std::string>(j, "variant", where);
  i.round = field<int>(j, "round", where);
  i.plugin_target = field<std::string>(j, "plugin_target", where);
  i.settings = measure_settings_from_json(object_field(j, "settings", where), where + ".settings");
  return i;
}

json to_json(const TelemetrySnapshot& t) {
  json j{{"available", t.available},
         {"unavailable_reason", t.unavailable_reason},
         {"sm_clock_mhz", t.sm_clock_mhz},
         {"mem_clock_mhz", t.mem_clock_mhz},
         {"temperature_c", t.temperature_c},
         {"power_w", t.power_w},
         {"throttle_reasons", t.throttle_reasons},
         {"throttle_names", t.throttle_names}};
  if (t.compute_processes >= 0) j["compute_processes"] = t.compute_processes;
  return j;
}

namespace {

TelemetrySnapshot snapshot_from_json(const json& j, const std::string& where) {
  TelemetrySnapshot t;
  t.available = field<bool>(j, "available", where);
  t.unavailable_reason = field<std::string>(j, "unavailable_reason", where);
  t.sm_clock_mhz = field<int>(j, "sm_clock_mhz", where);
  t.mem_clock_mhz = field<int>(j, "mem_clock_mhz", where);
  t.temperature_c = field<int>(j, "temperature_c", where);
  t.power_w = field<double>(j, "power_w", where);
  t.throttle_reasons = field<std::uint64_t>(j, "throttle_reasons", where);
  t.throttle_names = string_array(j, "throttle_names", where);
  if (j.contains("compute_processes"))
    t.compute_processes = field<int>(j, "compute_processes", where);
  return t;
}

// Samples and clock readings: an array of positive numbers (a time or a clock of 0 is a bug).
std::vector<double> positive_numbers(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array())
    throw Error(where + ": field '" + key + "': expected an array of numbers");
  std::vector<double> out;
  out.reserve(it->size());
  for (const auto& x : *it) {
    if (!x.is_number() || !(x.get<double>() > 0))
      throw Error(where + ": field '" + key + "': every value must be a positive number");
    out.push_back(x.get<double>());
  }
  return out;
}

// A list of CPU numbers (integers >= 0).
std::vector<int> cpu_numbers(const json& j, const char* key, const std::string& where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array())
    throw Error(where + ": field '" + key + "': expected an array of CPU numbers");
  std::vector<int> out;
  for (const auto& x : *it) {
    if (!x.is_number_integer() || x.get<long long>() < 0 || x.get<long long>() > 1 << 20)
      throw Error(where + ": field '" + key + "': every value must be a CPU number");
    out.push_back(x.get<int>());
  }
  return out;
}

// The phases of an arm: [{"name": ..., "seconds": >= 0}, ...].
std::vector<ArmPhase> phases_from_json(const json& j, const std::string& where) {
  if (!j.is_array()) throw Error(where + ": expected an array of {name, seconds}");
  std::vector<ArmPhase> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    require_object(j[i], w);
    ArmPhase p{field<std::string>(j[i], "name", w), field<double>(j[i], "seconds", w)};
    if (p.name.empty() || !(p.seconds >= 0))
      throw Error(w + ": a phase needs a name and seconds >= 0");
    out.push_back(std::move(p));
  }
  return out;
}

json to_json(const std::vector<ArmPhase>& phases) {
  json out = json::array();
  for (const auto& p : phases) out.push_back({{"name", p.name}, {"seconds", p.seconds}});
  return out;
}

const std::vector<std::pair<StopCause, std::string>>& stop_causes() {
  static const std::vector<std::pair<StopCause, std::string>> names = {
      {StopCause::precision, "precision"},       {StopCause::noise, "noise"},
      {StopCause::converged, "converged"},       {StopCause::fixed, "fixed"},
      {StopCause::sample_limit, "sample_limit"}, {StopCause::time_limit, "time_limit"},
      {StopCause::clock_floor, "clock_floor"}};
  return names;
}

json to_json(const MedianPrecision& p) {
  return json{{"lo_ns", p.lo_ns},
              {"hi_ns", p.hi_ns},
              {"half_width", p.half_width},
              {"inflation", p.inflation}};
}

MedianPrecision median_precision_from_json(const json& j, const std::string& where) {
  MedianPrecision p;
  p.lo_ns = field<double>(j, "lo_ns", where);
  p.hi_ns = field<double>(j, "hi_ns", where);
  p.half_width = field<double>(j, "half_width", where);
  p.inflation = field<double>(j, "inflation", where);
  return p;
}

}  // namespace

std::string to_string(StopCause c) {
  for (const auto& [cause, name] : stop_causes())
    if (cause == c) return name;
  throw Error("stop cause " + std::to_string(static_cast<int>(c)) + " has no name");
}

std::vector<std::string> stop_cause_names() {
  std::vector<std::string> out;
  for (const auto& [cause, name] : stop_causes()) out.push_back(name);
  return out;
}

json to_json(const StopEvidence& e) {
  return json{{"rule", e.rule},
              {"cause", to_string(e.cause)},
              {"samples", e.samples},
              {"median_ns", e.median_ns},
              {"confidence", e.confidence},
              {"interval", e.interval ? to_json(*e.interval) : json(nullptr)},
              {"target", e.target ? json(*e.target) : json(nullptr)}};
}

StopEvidence stop_evidence_from_json(const json& j, const std::string& where) {
  StopEvidence e;
  e.rule = field<std::string>(j, "rule", where);
  const std::string cause = field<std::string>(j, "cause", where);
  auto it = std::find_if(stop_causes().begin(), stop_causes().end(),
                         [&](const auto& c) { return c.second == cause; });
  if (it == stop_causes().end())
    throw Error(where + ": field 'cause': '" + cause + "' is not one of " +
                join(stop_cause_names(), ", "));
  e.cause = it->first;
  e.samples = field<int>(j, "samples", where);
  e.median_ns = field<double>(j, "median_ns", where);
  e.confidence = field<double>(j, "confidence", where);
  if (!j.contains("interval") || !j.at("interval").is_null())
    e.interval =
        median_precision_from_json(object_field(j, "interval", where), where + ".interval");
  if (!j.contains("target") || !j.at("target").is_null())
    e.target = field<double>(j, "target", where);
  return e;
}

json payload_json(const ArmResult& r) {
  const auto& m = r.measurement;
  const auto& c = r.correctness;
  json j{{"schema_version", r.schema_version},
         {"harness_version", r.harness_version},
         {"invocation", to_json(r.invocation)},
         {"plan_sha256", r.plan_sha256},
         {"worker_sha256", r.worker_sha256},
         {"plugin_sha256", r.plugin_sha256},
         {"source", to_json(r.source)},
         {"environment", to_json(r.environment)},
         {"telemetry",
          {{"before", to_json(r.telemetry.before)},
           {"after", to_json(r.telemetry.after)},
           {"throttled", r.telemetry.throttled},
           {"note", r.telemetry.note}}},
         {"placement",
          {{"cpus", r.placement.cpus},
           {"affinity", r.placement.affinity},
           {"seen", r.placement.seen}}},
         {"measurement",
          {{"timer", m.timer},
           {"samples_ns", m.samples_ns},
           {"warmup_iterations", m.warmup_iterations},
           {"measured_time_s", m.measured_time_s},
           {"stop_reason", m.stop_reason},
           {"noise", m.noise},
           {"kernel_names", m.kernel_names},
           {"l2_flushed", m.l2_flushed},
           {"l2_flush_bytes", m.l2_flush_bytes},
           {"cache_preparation", m.cache_preparation},
           {"tactic", m.tactic},
           {"tactic_choice", m.tactic_choice},
           {"flops", m.flops},
           {"min_bytes", m.min_bytes},
           {"ready_s", m.ready_s},
           {"waited_s", m.waited_s},
           {"phases", to_json(m.phases)},
           {"clock",
            {{"peak_mhz", m.clock.peak_mhz},
             {"floor_mhz", m.clock.floor_mhz},
             {"timer_resolution_ns", m.clock.timer_resolution_ns},
             {"sample_mhz", m.clock.sample_mhz},
             {"rejected", m.clock.rejected},
             {"above_peak", m.clock.above_peak},
             {"recovery_s", m.clock.recovery_s}}}}},
         {"correctness",
          {{"passed", c.passed},
           {"max_rel_error", c.max_rel_error},
           {"tolerance", c.tolerance},
           {"checked", c.checked},
           {"method", c.method}}},
         {"started_at", r.started_at},
         {"finished_at", r.finished_at},
         {"pid", r.pid}};
  if (m.stop) j["measurement"]["stop"] = to_json(*m.stop);
  // Only for Python arms: the payload of a C++ arm, and so its digest, stays what it was.
  if (r.python) j["python"] = to_json(*r.python);
  return j;
}

json to_json(const ArmResult& r) {
  json j = payload_json(r);
  j["payload_sha256"] = r.payload_sha256;
  return j;
}

std::string payload_digest(const json& result_json) {
  json copy = result_json;
  copy.erase("payload_sha256");
  return sha256_hex(canonical(copy));
}

ArmResult result_from_json(const json& j, const std::string& where) {
  ArmResult r;
  r.schema_version = field<int>(j, "schema_version", where);
  r.harness_version = field<std::string>(j, "harness_version", where);
  r.invocation = invocation_from_json(object_field(j, "invocation", where), where + ".invocation");
  r.plan_sha256 = field<std::string>(j, "plan_sha256", where);
  r.worker_sha256 = field<std::string>(j, "worker_sha256", where);
  r.plugin_sha256 = field<std::string>(j, "plugin_sha256", where);
  r.source = source_identity_from_json(object_field(j, "source", where), where + ".source");
  r.environment =
      environment_from_json(object_field(j, "environment", where), where + ".environment");
  const json& t = object_field(j, "telemetry", where);
  r.telemetry.before = snapshot_from_json(object_field(t, "before", where), where + ".before");
  r.telemetry.after = snapshot_from_json(object_field(t, "after", where), where + ".after");
  r.telemetry.throttled = field<bool>(t, "throttled", where + ".telemetry");
  r.telemetry.note = field<std::string>(t, "note", where + ".telemetry");
  const std::string pw = where + ".placement";
  const json& p = object_field(j, "placement", where);
  r.placement.cpus = cpu_numbers(p, "cpus", pw);
  r.placement.affinity = cpu_numbers(p, "affinity", pw);
  r.placement.seen = cpu_numbers(p, "seen", pw);
  const std::string mw = where + ".measurement";
  const json& m = object_field(j, "measurement", where);
  r.measurement.timer = field<std::string>(m, "timer", mw);
  r.measurement.samples_ns = positive_numbers(m, "samples_ns", mw);
  r.measurement.warmup_iterations = field<int>(m, "warmup_iterations", mw);
  r.measurement.measured_time_s = field<double>(m, "measured_time_s", mw);
  r.measurement.stop_reason = field<std::string>(m, "stop_reason", mw);
  r.measurement.noise = field<double>(m, "noise", mw);
  // Absent in results written before the stopping rule's evidence was recorded.
  if (m.contains("stop"))
    r.measurement.stop = stop_evidence_from_json(object_field(m, "stop", mw), mw + ".stop");
  r.measurement.kernel_names = string_array(m, "kernel_names", mw);
  r.measurement.l2_flushed = field<bool>(m, "l2_flushed", mw);
  r.measurement.l2_flush_bytes = field<std::int64_t>(m, "l2_flush_bytes", mw);
  // Absent in results written before it was recorded: l2_flushed says what was done then.
  r.measurement.cache_preparation = field_or<std::string>(m, "cache_preparation", mw, "");
  r.measurement.tactic = field<std::string>(m, "tactic", mw);
  // Absent in results written before it was recorded (run directories stay re-verifiable).
  r.measurement.tactic_choice = field_or<std::string>(m, "tactic_choice", mw, "");
  r.measurement.flops = field<double>(m, "flops", mw);
  r.measurement.min_bytes = field<double>(m, "min_bytes", mw);
  r.measurement.ready_s = field<double>(m, "ready_s", mw);
  // Absent in results written before workers were started ahead: they did not wait.
  r.measurement.waited_s = field_or<double>(m, "waited_s", mw, 0.0);
  // Absent in results written before the phases were recorded.
  if (m.contains("phases")) r.measurement.phases = phases_from_json(m["phases"], mw + ".phases");
  // Absent in results written before samples were clocked.
  if (m.contains("clock")) {
    const std::string kw = mw + ".clock";
    const json& k = object_field(m, "clock", mw);
    ClockCheck& c = r.measurement.clock;
    c.peak_mhz = field<int>(k, "peak_mhz", kw);
    c.floor_mhz = field<int>(k, "floor_mhz", kw);
    c.timer_resolution_ns = field<double>(k, "timer_resolution_ns", kw);
    c.sample_mhz = positive_numbers(k, "sample_mhz", kw);
    c.rejected = field<int>(k, "rejected", kw);
    c.above_peak = field_or<int>(k, "above_peak", kw, 0);
    c.recovery_s = field<double>(k, "recovery_s", kw);
  }
  const std::string cw = where + ".correctness";
  const json& c = object_field(j, "correctness", where);
  r.correctness.passed = field<bool>(c, "passed", cw);
  r.correctness.max_rel_error = field<double>(c, "max_rel_error", cw);
  r.correctness.tolerance = field<double>(c, "tolerance", cw);
  r.correctness.checked = field<std::uint64_t>(c, "checked", cw);
  r.correctness.method = field<std::string>(c, "method", cw);
  if (j.contains("python"))
    r.python = interpreter_from_json(object_field(j, "python", where), where + ".python");
  r.started_at = field<std::string>(j, "started_at", where);
  r.finished_at = field<std::string>(j, "finished_at", where);
  r.pid = field<int>(j, "pid", where);
  r.payload_sha256 = field<std::string>(j, "payload_sha256", where);
  return r;
}

void write_result(const std::filesystem::path& run_dir, const std::filesystem::path& rel,
                  ArmResult r) {
  json j = payload_json(r);
  r.payload_sha256 = sha256_hex(canonical(j));
  j["payload_sha256"] = r.payload_sha256;
  RunDirFs(run_dir).write_json_atomic(rel, j);
}

ArmResult read_result(const std::filesystem::path& run_dir, const std::filesystem::path& rel) {
  return result_from_json(RunDirFs(run_dir).read_json(rel), (run_dir / rel).string());
}

}  // namespace abh
