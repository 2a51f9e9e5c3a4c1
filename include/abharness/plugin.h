/* abharness plugin ABI — the contract between a kernel library and the abharness worker.
 *
 * A plugin is a shared object that exports the C symbol `abh_plugin_entry` (and, from version 2,
 * `abh_plugin_entry_v2`: see below). The worker dlopens it, asks for the ABI version it was built
 * against and refuses to go on when it cannot speak it: a mismatch is a clean error, never
 * undefined behaviour.
 *
 * The worker owns all timing. A plugin never times itself: it creates a problem from JSON
 * parameters, enqueues exactly one iteration when asked, and verifies its own last output against
 * a higher-precision reference. Every function that can fail returns ABH_OK or an error code and
 * writes a human-readable message (naming the parameter and the fix) into `err`.
 *
 * Version 2 appends to version 1's table (abh_plugin_v2 begins with an abh_plugin_v1): what a
 * problem can do besides one enqueue — be captured into a CUDA graph, and offer several buffer
 * sets so that iterations cycle through inputs that are not in the L2 (docs/method.md, "Three
 * timings"). The worker loads plugins of version 1 and 2; a version-1 plugin is measured as before
 * and is refused the graph timing, with a message naming what to add.
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

#define ABH_PLUGIN_ABI_VERSION 2u
/* The oldest version this worker still loads: version 1 tables have no capabilities. */
#define ABH_PLUGIN_ABI_VERSION_MIN 1u
/* The abi_version of a version-1 table (abh_plugin_v1 alone). */
#define ABH_PLUGIN_ABI_V1 1u

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
  uint32_t abi_version; /* ABH_PLUGIN_ABI_V1, or 2 (ABH_PLUGIN_ABI_VERSION) in an abh_plugin_v2 */
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
   * the tactic, so that a cache may store it and select_tactic may re-validate it later. Tactic 0
   * is the plugin's default: what a caller gets without tuning (for cuBLASLt, the heuristic's
   * first candidate); `--tactic default` measures it. */
  int (*tactic_count)(abh_problem* p);
  int (*tactic_key)(abh_problem* p, int index, char* buf, size_t buf_len);
  int (*select_tactic)(abh_problem* p, const char* key, char* err, size_t err_len);

  /* Writes a JSON object of library versions this plugin depends on (e.g. {"cublasLt":"130100"}).
   */
  int (*library_versions)(char* buf, size_t buf_len);

  void (*destroy)(abh_problem* p);
} abh_plugin_v1;

/* What a problem can do besides enqueue one iteration (abh_plugin_v2.capabilities). */
enum abh_capability {
  /* enqueue() may be captured into a CUDA graph on the stream it is given: it launches on that
   * stream (or streams joined to it), never synchronizes, allocates or frees device memory, reads
   * device data on the host or depends on host state that changes between calls, and launches the
   * same kernels every call. The graph timing is refused for a problem without it. */
  ABH_CAP_CAPTURABLE = 1u << 0,
  /* buffer_set_bytes, make_buffer_sets and use_buffer_set are implemented: the problem can hold
   * several copies of its inputs and outputs, which the worker cycles through so that an
   * iteration finds its data outside the L2 without a flush before it (cold L2 in the graph
   * timing, and in the kernel timing in place of the flush). */
  ABH_CAP_BUFFER_SETS = 1u << 1,
  /* capture_graph, replay_graph and destroy_graph are implemented and the worker must use them:
   * the plugin's runtime captures and replays the iterations itself (PyTorch's caching allocator
   * must know of a capture to keep the graph's memory apart). The worker still owns the timing:
   * it times the kernels CUPTI records inside replay_graph. */
  ABH_CAP_OWN_GRAPHS = 1u << 2
};

/* Version 2: the version-1 table unchanged (abi_version = 2 there), then what was appended. */
typedef struct abh_plugin_v2 {
  abh_plugin_v1 v1;

  /* ABH_CAP_* bits of this problem. Required. */
  uint32_t (*capabilities)(const abh_problem* p);

  /* With ABH_CAP_BUFFER_SETS (may be NULL without it). The device bytes one set of inputs and
   * outputs occupies: what an iteration reads and writes. */
  double (*buffer_set_bytes)(const abh_problem* p);
  /* Makes the problem hold `count` sets (count >= 1; called once, after create): set 0 is the one
   * create() made, sets 1..count-1 independent copies holding equally valid inputs, so that any set
   * verifies against the same reference. Fails cleanly (ABH_ERR_RUNTIME with a message) when the
   * device cannot hold them. */
  int (*make_buffer_sets)(abh_problem* p, int count, char* err, size_t err_len);
  /* Later enqueues, and verify, use set `index` (0 <= index < count). Host work only: it may be
   * called between the enqueues of a graph capture. */
  int (*use_buffer_set)(abh_problem* p, int index, char* err, size_t err_len);

  /* With ABH_CAP_OWN_GRAPHS (may be NULL without it). capture_graph captures `iterations`
   * iterations into a graph on `stream`, iteration i using buffer set i % `sets` when the problem
   * has buffer sets, and returns the plugin's handle of it in `graph`; nothing runs on the device.
   * replay_graph launches it once on `stream` without waiting; destroy_graph releases it. */
  int (*capture_graph)(abh_problem* p, void* stream, int iterations, int sets, void** graph,
                       char* err, size_t err_len);
  int (*replay_graph)(abh_problem* p, void* graph, void* stream, char* err, size_t err_len);
  void (*destroy_graph)(abh_problem* p, void* graph);
} abh_plugin_v2;

/* The exported symbols. `worker_abi` is the version the worker speaks; a plugin built against
 * another version returns its own table anyway so the worker can report both numbers.
 *
 * Every plugin exports abh_plugin_entry, returning a version-1 table (abi_version 1). A plugin of
 * version 2 also exports abh_plugin_entry_v2, returning its whole table (abi_version 2), and its
 * abh_plugin_entry returns that table's v1 member (so that a worker of version 1 refuses it by
 * number). The worker asks for abh_plugin_entry_v2 first: which symbol a plugin exports, not the
 * number a table carries, says how large its table is, so a version-1 table that says 2 (a
 * version-1 plugin rebuilt with this header's ABH_PLUGIN_ABI_VERSION) is read as the version-1
 * table it is, never past its end. */
typedef const abh_plugin_v1* (*abh_plugin_entry_fn)(uint32_t worker_abi);
typedef const abh_plugin_v2* (*abh_plugin_entry_v2_fn)(uint32_t worker_abi);
#define ABH_PLUGIN_ENTRY_SYMBOL "abh_plugin_entry"
#define ABH_PLUGIN_ENTRY_V2_SYMBOL "abh_plugin_entry_v2"

#if defined(__GNUC__)
#define ABH_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define ABH_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif /* ABHARNESS_PLUGIN_H */
