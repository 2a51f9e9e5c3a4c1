/* abharness plugin ABI — the contract between a kernel library and the abharness worker.
 *
 * A plugin is a shared object that exports one C symbol, `abh_plugin_entry`. The worker dlopens
 * it, asks for the ABI version it was built against and refuses to go on when the versions differ:
 * a mismatch is a clean error, never undefined behaviour.
 *
 * The worker owns all timing. A plugin never times itself: it creates a problem from JSON
 * parameters, enqueues exactly one iteration when asked, and verifies its own last output against
 * a higher-precision reference. Every function that can fail returns ABH_OK or an error code and
 * writes a human-readable message (naming the parameter and the fix) into `err`.
 *
 * Bump ABH_PLUGIN_ABI_VERSION on any change to this file's structs or function signatures.
 */
#ifndef ABHARNESS_PLUGIN_H
#define ABHARNESS_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ABH_PLUGIN_ABI_VERSION 1u

enum abh_status {
  ABH_OK = 0,
  ABH_ERR_INVALID_PARAMS = 1, /* the problem JSON is wrong: the message names the field */
  ABH_ERR_UNSUPPORTED = 2,    /* valid request this build or this device cannot run */
  ABH_ERR_RUNTIME = 3,        /* a library call failed at run time */
  ABH_ERR_WRONG_RESULT = 4    /* verify: the output is outside the tolerance */
};

enum abh_device_kind {
  ABH_DEVICE_CPU = 0, /* host code: the worker times it with the steady clock */
  ABH_DEVICE_CUDA = 1 /* CUDA kernels: the worker times them with CUPTI (default) or events */
};

typedef struct abh_problem abh_problem; /* opaque, owned by the plugin */

typedef struct abh_verify_result {
  double max_rel_error; /* max |out - ref| / max(|ref|, floor) over the checked elements */
  double tolerance;     /* the tolerance the plugin applied for this precision */
  uint64_t checked;     /* how many output elements were compared */
  char method[128];     /* e.g. "fp64 host reference, full output" */
} abh_verify_result;

typedef struct abh_plugin_v1 {
  uint32_t abi_version; /* must equal ABH_PLUGIN_ABI_VERSION */
  const char* name;     /* e.g. "cpu-gemm" */
  enum abh_device_kind device;

  /* Creates a problem from a JSON object of parameters (e.g. {"m":128,"n":256,"k":64}). For CUDA
   * plugins the current device is already selected by the worker. */
  int (*create)(const char* params_json, abh_problem** out, char* err, size_t err_len);

  /* Enqueues exactly one iteration. `stream` is a cudaStream_t for CUDA plugins, NULL for CPU
   * plugins (which run synchronously). */
  int (*enqueue)(abh_problem* p, void* stream, char* err, size_t err_len);

  /* Checks the output of the most recent iteration. Returns ABH_ERR_WRONG_RESULT (with `out`
   * filled) when the output is outside the tolerance. The worker synchronizes before calling. */
  int (*verify)(abh_problem* p, abh_verify_result* out, char* err, size_t err_len);

  double (*flops)(const abh_problem* p);     /* useful floating-point operations per iteration */
  double (*min_bytes)(const abh_problem* p); /* compulsory memory traffic per iteration */

  /* Tactics (e.g. cuBLASLt algorithms). A tactic key is a printable string that fully identifies
   * the tactic, so that a cache may store it and select_tactic may re-validate it later. */
  int (*tactic_count)(abh_problem* p);
  int (*tactic_key)(abh_problem* p, int index, char* buf, size_t buf_len);
  int (*select_tactic)(abh_problem* p, const char* key, char* err, size_t err_len);

  /* Writes a JSON object of library versions this plugin depends on (e.g. {"cublasLt":"130100"}).
   */
  int (*library_versions)(char* buf, size_t buf_len);

  void (*destroy)(abh_problem* p);
} abh_plugin_v1;

/* The one exported symbol. `worker_abi` is the version the worker speaks; a plugin built against
 * another version returns its own table anyway so the worker can report both numbers. */
typedef const abh_plugin_v1* (*abh_plugin_entry_fn)(uint32_t worker_abi);
#define ABH_PLUGIN_ENTRY_SYMBOL "abh_plugin_entry"

#if defined(__GNUC__)
#define ABH_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define ABH_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif /* ABHARNESS_PLUGIN_H */
