// abharness-worker: the front end of the worker engine for C++ plugins
// (include/abharness/worker.h). Everything an arm does is in libabharness_worker.so, which the
// Python front end calls too.
#include <abharness/worker.h>

int main(int argc, char** argv) {
  return abh_worker_main(argc, argv, nullptr);
}
