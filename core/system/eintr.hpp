// System calls and signals. A signal delivered while a call blocks makes it fail with EINTR
// before it did anything (SA_RESTART is not set for every handler, and ppoll, waitid and reads of
// sockets are never restarted): that is not a failure of the call, and every call that can block
// goes through one of these two helpers instead of a loop of its own.
#pragma once

#include <cerrno>

namespace abh {

// Calls `call` (a system call returning < 0 with errno set on failure) again for as long as it
// fails with EINTR, and returns its first other result; errno is that call's. Only for calls
// that can be repeated as they are: one with a deadline recomputes its timeout, see below.
template <typename Call>
auto retry_on_eintr(const Call& call) {
  for (;;) {
    auto r = call();
    if (!(r < 0 && errno == EINTR)) return r;
  }
}

// For a call inside a loop that recomputes its deadline on every turn (ppoll, waitid): an EINTR
// failure reads as "nothing happened yet" (0), so the loop goes round with the time that is left
// instead of restarting the whole wait. Any other result, and errno, are the call's.
template <typename R>
R nothing_if_interrupted(R r) {
  return r < 0 && errno == EINTR ? R{0} : r;
}

}  // namespace abh
