/* abharness worker engine — the entry of libabharness_worker.so, for worker front ends.
 *
 * The engine is everything an arm's process does: read the plan, open the device, create the
 * problem, tune the tactic, warm up, sample under the stopping rule with cold L2 and clock stamps,
 * verify, write the result. The abharness-worker executable is one front end: it calls
 * abh_worker_main with no front end, and the engine dlopens the variant's C++ plugin. The Python
 * front end (python/abharness_front_end.py) is another: started by the user's interpreter, it
 * builds a plugin table (plugin.h) from the user's module with ctypes callbacks and passes it here,
 * so a Python kernel is measured by literally the same code as a C++ one (docs/python.md).
 *
 * Bump ABH_WORKER_FRONT_END_VERSION on any change to the layout or meaning of abh_worker_front_end.
 */
#ifndef ABHARNESS_WORKER_H
#define ABHARNESS_WORKER_H

#include <abharness/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ABH_WORKER_FRONT_END_VERSION 1u

typedef struct abh_worker_front_end {
  uint32_t version;            /* must equal ABH_WORKER_FRONT_END_VERSION */
  const char* kind;            /* the plugin kind it runs, e.g. "python" */
  const abh_plugin_v1* plugin; /* the plugin table, used instead of dlopen-ing the plan's plugin */
  /* The script the process was started on (the Python front end's): part of the worker's digest,
   * in place of the installed copy, with the package beside it. */
  const char* script_path;
  /* The runtime's identity as JSON (model/interpreter.hpp for Python), recorded in the result. */
  const char* identity_json;
  /* Called once the device session is open, before the problem is created, with the stream every
   * iteration is enqueued on (a cudaStream_t; NULL on the CPU) and the CUDA device ordinal (-1 on
   * the CPU): a front end makes it its runtime's current stream there. May be NULL. */
  void (*session_opened)(void* stream, int device);
} abh_worker_front_end;

/* Runs the worker: argv as the abharness-worker executable takes it (argv[0] is the program name;
 * then a subcommand of model/worker_protocol.hpp). Returns the worker's exit code. The process
 * start (for the start-up time each result records) is taken from the kernel's record of it. */
ABH_PLUGIN_EXPORT int abh_worker_main(int argc, char** argv, const abh_worker_front_end* front_end);
#define ABH_WORKER_MAIN_SYMBOL "abh_worker_main"

#ifdef __cplusplus
}
#endif

#endif /* ABHARNESS_WORKER_H */
