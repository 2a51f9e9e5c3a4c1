// A fake WorkerStarter (orchestrator/worker_starter.hpp) for the tests of the sweep's order: its
// workers run nothing, log every call the sweep makes, and end as the test says.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/plan.hpp"
#include "worker_starter.hpp"

namespace abh::test {

inline std::string step_name(const Step& s) {
  return (s.warmup ? "warmup " : "") + s.task->shape + "/" + s.task->arm;
}

// How a fake worker ends: exit 0 with its result, unless told otherwise.
struct Ending {
  ExitStatus status;
  bool writes_result = true;
  std::string stderr_text;  // what it leaves in its err log
  bool loads = true;        // started ahead: whether it says it loaded (ArmProcess::loaded)
  bool releases = false;    // whether it says it released its GPU (ArmProcess::released)
};

inline ExitStatus exited(int code) {
  ExitStatus st;
  st.code = code;
  return st;
}

// A starter whose workers run nothing. Each lane's calls are logged in order ("start <step>",
// "loaded <step>", "go <step>", "released <step>" when it says it released its GPU,
// "finish <step>"; a step is "m32/B" or "warmup m32/B"), with how
// many of the lane's workers had been started when each finish() was called.
class FakeWorkers : public WorkerStarter {
 public:
  std::map<std::string, Ending> endings;  // by step name; absent: exit 0 with a result
  // What a worker that ends with a result writes there.
  std::function<void(const RunDirFs&, const Task&)> write_result =
      [](const RunDirFs& run, const Task& t) { run.write_atomic(result_rel(t), "{}"); };

  std::unique_ptr<ArmProcess> start(const RunDirFs& run, const Lane& lane,
                                    const Step& step) const override;

  void record(int lane, const std::string& event) const {
    std::lock_guard<std::mutex> g(m_);
    log_[lane].push_back(event);
    if (event.rfind("start ", 0) == 0) ++started_[lane];
    if (event.rfind("finish ", 0) == 0) started_at_finish_[lane].push_back(started_[lane]);
  }
  std::vector<std::string> log(int lane = 0) const {
    std::lock_guard<std::mutex> g(m_);
    return log_[lane];
  }
  // The steps of a lane in the order their workers were started.
  std::vector<std::string> started(int lane = 0) const {
    std::vector<std::string> out;
    for (const auto& e : log(lane))
      if (e.rfind("start ", 0) == 0) out.push_back(e.substr(6));
    return out;
  }
  std::vector<int> started_at_finish(int lane = 0) const {
    std::lock_guard<std::mutex> g(m_);
    return started_at_finish_[lane];
  }
  std::string uuid_seen(int lane) const {
    std::lock_guard<std::mutex> g(m_);
    return uuid_[lane];
  }
  void saw_uuid(int lane, const std::string& uuid) const {
    std::lock_guard<std::mutex> g(m_);
    uuid_[lane] = uuid;
  }

 private:
  mutable std::mutex m_;
  mutable std::map<int, std::vector<std::string>> log_;
  mutable std::map<int, int> started_;
  mutable std::map<int, std::vector<int>> started_at_finish_;
  mutable std::map<int, std::string> uuid_;
};

class FakeArm : public ArmProcess {
 public:
  FakeArm(const FakeWorkers& w, const RunDirFs& run, int lane, const Step& s, Ending e)
      : w_(w), run_(run), lane_(lane), step_(s), ending_(std::move(e)) {}
  bool loaded() override {
    w_.record(lane_, "loaded " + step_name(step_));
    return ending_.loads;
  }
  void go() override { w_.record(lane_, "go " + step_name(step_)); }
  bool released() override {
    if (ending_.releases) w_.record(lane_, "released " + step_name(step_));
    return ending_.releases;
  }
  // What a worker leaves behind when it ends: its logs and, unless told otherwise, its result.
  ExitStatus finish() override {
    w_.record(lane_, "finish " + step_name(step_));
    const Task& t = *step_.task;
    run_.write_atomic(log_rel(t, step_.warmup ? "warmup.err" : "err"), ending_.stderr_text);
    if (!step_.warmup && ending_.writes_result) w_.write_result(run_, t);
    return ending_.status;
  }

 private:
  const FakeWorkers& w_;
  const RunDirFs& run_;
  int lane_;
  Step step_;
  Ending ending_;
};

inline std::unique_ptr<ArmProcess> FakeWorkers::start(const RunDirFs& run, const Lane& lane,
                                                      const Step& step) const {
  record(lane.index, "start " + step_name(step));
  saw_uuid(lane.index, lane.gpu_uuid);
  auto it = endings.find(step_name(step));
  return std::make_unique<FakeArm>(*this, run, lane.index, step,
                                   it == endings.end() ? Ending{} : it->second);
}

}  // namespace abh::test
