#include "interrupt_hint.hpp"

#include <unistd.h>

#include <cstring>
#include <string>

#include "system/error.hpp"
#include "system/text.hpp"

namespace abh {
namespace {

constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

// Written whole by the handler, which may only make async-signal-safe calls: the text is made
// before any signal can come.
char g_hint[8192];
size_t g_hint_size = 0;

void on_signal(int sig) {
  ssize_t ignored = ::write(STDERR_FILENO, g_hint, g_hint_size);
  (void)ignored;
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

InterruptHint::InterruptHint(const std::filesystem::path& run_dir, Stage stage) {
  const std::string hint =
      stage == Stage::measuring
          ? "\nabharness: interrupted; the results written so far are kept: `" +
                shell_command({"abharness", "resume", run_dir.string()}) + "` measures the rest\n"
          : "\nabharness: interrupted before the run's plan was written: nothing was measured; `" +
                shell_command({"rm", "-r", run_dir.string()}) + "`, then run again\n";
  if (hint.size() > sizeof g_hint)
    throw Error("the run directory's path is too long for the interrupt hint: " + run_dir.string());
  std::memcpy(g_hint, hint.data(), hint.size());
  g_hint_size = hint.size();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i)
    if (::sigaction(kSignals[i], &sa, &before_[i]) != 0)
      throw Error(std::string("cannot install the interrupt hint: ") + std::strerror(errno));
}

InterruptHint::~InterruptHint() {
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &before_[i], nullptr);
  g_hint_size = 0;
}

}  // namespace abh
