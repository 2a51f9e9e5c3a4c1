#include "arm_worker.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "model/worker_protocol.hpp"
#include "paths.hpp"
#include "system/cpu_set.hpp"
#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace fs = std::filesystem;

namespace {

// The command line of the arm's worker: abharness-worker, or for a Python plugin the user's
// interpreter on the Python front end, which calls the same engine (docs/python.md).
std::vector<std::string> worker_argv(const RunDirFs& run, const Plan& plan, const fs::path& worker,
                                     const Task& t, bool warmup, bool ahead) {
  if (plan.variant(t.variant).is_python())
    return worker_protocol::python_run_command(plan.python->executable, python_front_end(worker),
                                               run.root(), t.shape, t.arm, warmup, ahead);
  std::vector<std::string> argv =
      worker_protocol::run_args(run.root(), t.shape, t.arm, warmup, ahead);
  argv.insert(argv.begin(), worker.string());
  return argv;
}

}  // namespace

ArmWorker::ArmWorker(const RunDirFs& run, const Plan& plan, const fs::path& worker, const Task& t,
                     const Lane& lane, bool warmup)
    : timeout_s_(plan.settings.arm_timeout_s) {
  const bool ahead = plan.schedule.start_ahead > 0;
  run.make_dirs(log_rel(t, "out").parent_path());
  SpawnSpec spec;
  spec.argv = worker_argv(run, plan, worker, t, warmup, ahead);
  // Its logs are created afresh without following links (system/run_dir_fs.hpp).
  out_ = run.create(log_rel(t, warmup ? "warmup.out" : "out"));
  err_ = run.create(log_rel(t, warmup ? "warmup.err" : "err"));
  spec.stdout_fd = out_.get();
  spec.stderr_fd = err_.get();
  // The worker asks the kernel to kill it when we die, so a killed orchestrator never leaves an
  // orphan that writes a result behind a later resume's back.
  spec.env[worker_protocol::kParentPidEnv] = std::to_string(::getpid());
  // The plan this process read and checked whole: the worker reads only its arm's entries of it.
  if (!plan.file_sha256.empty()) spec.env[worker_protocol::kPlanDigestEnv] = plan.file_sha256;
  // A worker sees only the GPU of its arm: the driver then initialises one GPU, not all of them
  // (start-up on a 2-GPU H200 machine: 0.54 s -> 0.34 s), and a plugin cannot stray onto a GPU
  // that another arm is measuring on.
  if (!lane.gpu_uuid.empty()) spec.env[worker_protocol::kVisibleDevicesEnv] = lane.gpu_uuid;
  // CPUs the lane chose on its node (a launcher that places lanes): the plan names none.
  if (!lane.cpus.empty()) spec.env[worker_protocol::kArmCpusEnv] = format_cpu_list(lane.cpus);
  UniqueFd theirs;
  if (ahead) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      throw Error("cannot create the turn socket of " + t.shape + "/" + t.arm + ": " +
                  std::strerror(errno));
    theirs = UniqueFd(sv[0]);
    turn_ = UniqueFd(sv[1]);
    spec.stdin_fd = theirs.get();
  }
  child_ = std::make_unique<ChildProcess>(spec);
  since_ = Clock::now();
}

bool ArmWorker::loaded() {
  if (!turn_.valid()) return true;
  const std::string_view want = worker_protocol::kLoaded;
  const auto limit = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(kLoadLimitS));
  std::string said;
  while (said.size() < want.size()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(limit - Clock::now()).count();
    if (left <= 0) {
      deadline_ = Clock::now();  // finish() kills it at once
      return false;
    }
    pollfd p{turn_.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 60000)));
    if (ready < 0 && errno != EINTR)
      throw Error(std::string("waiting for a worker to load its plugin: ") + std::strerror(errno));
    if (ready <= 0) continue;
    char buf[16];
    const ssize_t n = ::recv(turn_.get(), buf, want.size() - said.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // it ended (closed its end) before it had loaded
    said.append(buf, static_cast<size_t>(n));
  }
  if (said != want)
    throw Error("a worker said " + quote(said) + " where abharness waited for " +
                quote(std::string(want)) +
                ": abharness and abharness-worker disagree on the protocol (different builds?)");
  return true;
}

void ArmWorker::go() {
  since_ = Clock::now();
  if (timeout_s_ > 0)
    deadline_ = since_ + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(timeout_s_));
  if (!turn_.valid()) return;
  // A worker that already ended (it failed before its turn) has closed its end: MSG_NOSIGNAL
  // makes that an EPIPE to ignore rather than a SIGPIPE that would kill the orchestrator, and its
  // exit status says what happened. The socket is closed after the word: nothing more is said.
  // The socket stays open: the worker says on it when it has released the GPU (released()), and
  // one that has not yet said it loaded can still say so without meeting a closed socket.
  const std::string_view m = worker_protocol::kTurn;
  (void)::send(turn_.get(), m.data(), m.size(), MSG_NOSIGNAL);
}

bool ArmWorker::released() {
  if (!turn_.valid()) return false;
  // Lines it may say after its turn: kLoaded, if nobody waited for it, then kReleased.
  const std::string_view want = worker_protocol::kReleased;
  const std::string_view loaded = worker_protocol::kLoaded;
  std::string said;
  for (;;) {
    if (said.rfind(loaded, 0) == 0) said.erase(0, loaded.size());
    if (said.size() >= want.size()) break;
    int wait_ms = -1;
    if (deadline_) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline_ - Clock::now()).count();
      if (left <= 0) return false;  // finish() kills it
      wait_ms = static_cast<int>(std::min<long long>(left, 60000));
    }
    pollfd p{turn_.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno != EINTR)
      throw Error(std::string("waiting for a worker to release its GPU: ") + std::strerror(errno));
    if (ready <= 0) continue;
    char buf[32];
    const ssize_t n = ::recv(turn_.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // it ended (or closed its end) without saying it
    said.append(buf, static_cast<size_t>(n));
  }
  if (said.compare(0, want.size(), want) != 0)
    throw Error("a worker said " + quote(said) + " after its turn where abharness waited for " +
                quote(std::string(want)) +
                ": abharness and abharness-worker disagree on the protocol (different builds?)");
  return true;
}

ExitStatus ArmWorker::finish() {
  turn_.reset();
  ExitStatus st = child_->wait(deadline_, since_);
  out_.reset();
  err_.reset();
  return st;
}

std::unique_ptr<ArmProcess> WorkerProcesses::start(const RunDirFs& run, const Lane& lane,
                                                   const Step& step) const {
  return std::make_unique<ArmWorker>(run, plan_, worker_, *step.task, lane, step.warmup);
}

}  // namespace abh
