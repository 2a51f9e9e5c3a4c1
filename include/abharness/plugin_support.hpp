/* Optional C++ helpers for writing a plugin against plugin.h (header-only, C++17): the pieces
 * every plugin would otherwise repeat. A plugin is still a plain table of C functions; use as
 * much or as little of this as suits it.
 *
 *   // functions named after the ABI's fields: create, enqueue, verify, flops, min_bytes,
 *   // tactic_count, tactic_key, select_tactic, library_versions (destroy: destroy_problem)
 *   ABH_PLUGIN_DEFINE("my-gemm", ABH_DEVICE_CUDA)
 *
 *   // or, for a problem with exactly one tactic, named by const char* tactic_of(const
 * abh_problem*):
 *   // create, enqueue, verify, flops, min_bytes, library_versions and
 *   ABH_PLUGIN_DEFINE_ONE_TACTIC("my-gemm", ABH_DEVICE_CUDA, tactic_of)
 *
 *   // ABI version 2 (capturable problems, buffer sets: plugin.h), with functions also named
 *   // capabilities, buffer_set_bytes, make_buffer_sets and use_buffer_set:
 *   ABH_PLUGIN_DEFINE_V2("my-gemm", ABH_DEVICE_CUDA)
 *   ABH_PLUGIN_DEFINE_ONE_TACTIC_V2("my-gemm", ABH_DEVICE_CUDA, tactic_of)
 *
 * and a typed reader of the parameters create() receives (no JSON library needed, so nvcc builds
 * it anywhere):
 *
 *   abh_plugin::Params p(params_json);               // ParamError unless a JSON object
 *   p.only({"m", "n", "k", "seed"});                  // refuses a key the plugin does not read
 *   long long m = p.required_int("m", 1, 65536);      // refuses a missing or out-of-range value
 *   long long seed = p.optional_int("seed", 1, 0, INT_MAX);
 *   std::string dtype = p.optional_string("dtype", "fp32");
 *
 * Every ParamError names the shape (by its parameters: all a plugin sees of it) and the field.
 * docs/plugins.md walks through a plugin from zero to a verified run.
 */
#ifndef ABHARNESS_PLUGIN_SUPPORT_HPP
#define ABHARNESS_PLUGIN_SUPPORT_HPP

#include <abharness/plugin.h>

#include <abharness/plugin_params.hpp>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace abh_plugin {

/* Copies `msg` into an error or output buffer of the ABI (truncated, always NUL-terminated);
 * a null or empty buffer is left alone. */
inline void say(char* buf, size_t len, const std::string& msg) {
  if (buf && len) std::snprintf(buf, len, "%s", msg.c_str());
}

/* tactic_key for a problem with exactly one tactic, named `name`. */
inline int single_tactic_key(const char* name, int index, char* buf, size_t len) {
  if (index != 0) return ABH_ERR_INVALID_PARAMS;
  say(buf, len, name);
  return ABH_OK;
}

/* select_tactic for a problem with exactly one tactic: accepts its name, refuses anything else
 * with a message that names the one there is. */
inline int single_tactic_select(const char* plugin, const char* name, const char* key, char* err,
                                size_t len) {
  if (std::strcmp(key, name) == 0) return ABH_OK;
  say(err, len, std::string(plugin) + " has one tactic, '" + name + "': use it, or --tactic auto");
  return ABH_ERR_INVALID_PARAMS;
}

/* destroy for problems that create() handed out as std::unique_ptr<abh_problem>::release()
 * (a template, so that abh_problem, opaque here, is complete where it is used). */
template <typename Problem = abh_problem>
void destroy_problem(Problem* p) {
  std::unique_ptr<Problem> owned(p);
}

}  // namespace abh_plugin

/* Defines the exported symbol of a version-1 plugin, returning `table` (an abh_plugin_v1). */
#define ABH_PLUGIN_ENTRY(table)                                                  \
  extern "C" ABH_PLUGIN_EXPORT const abh_plugin_v1* abh_plugin_entry(uint32_t) { \
    return &(table);                                                             \
  }

/* Defines the exported symbols of a version-2 plugin, returning `table` (an abh_plugin_v2) and its
 * version-1 part (plugin.h says why both). */
#define ABH_PLUGIN_ENTRY_V2(table)                                                  \
  extern "C" ABH_PLUGIN_EXPORT const abh_plugin_v1* abh_plugin_entry(uint32_t) {    \
    return &(table).v1;                                                             \
  }                                                                                 \
  extern "C" ABH_PLUGIN_EXPORT const abh_plugin_v2* abh_plugin_entry_v2(uint32_t) { \
    return &(table);                                                                \
  }

/* The version-1 part of a table of the plugin's functions (tactic functions as given,
 * destroy_problem as destroy), saying ABI version `abi`. */
#define ABH_PLUGIN_V1_FIELDS_(abi, name, device, count, key, select)                        \
  {                                                                                         \
    (abi), (name), (device), create, enqueue, verify, flops, min_bytes, count, key, select, \
        library_versions, abh_plugin::destroy_problem                                       \
  }

/* The table of a plugin's functions, visible where the macro is used, and the exported entry
 * that returns it: version 1, or version 2 with the buffer-set functions named after the ABI's
 * fields (graphs captured by the worker: no capture hooks). */
#define ABH_PLUGIN_TABLE_(name, device, count, key, select)                       \
  static const abh_plugin_v1 abh_plugin_table_ =                                  \
      ABH_PLUGIN_V1_FIELDS_(ABH_PLUGIN_ABI_V1, name, device, count, key, select); \
  ABH_PLUGIN_ENTRY(abh_plugin_table_)
#define ABH_PLUGIN_TABLE_V2_(name, device, count, key, select)     \
  static const abh_plugin_v2 abh_plugin_table_ = {                 \
      ABH_PLUGIN_V1_FIELDS_(2u, name, device, count, key, select), \
      capabilities,                                                \
      buffer_set_bytes,                                            \
      make_buffer_sets,                                            \
      use_buffer_set,                                              \
      nullptr,                                                     \
      nullptr,                                                     \
      nullptr};                                                    \
  ABH_PLUGIN_ENTRY_V2(abh_plugin_table_)

/* The table of a plugin whose functions are named after the ABI's fields. */
#define ABH_PLUGIN_DEFINE(name, device) \
  ABH_PLUGIN_TABLE_(name, device, tactic_count, tactic_key, select_tactic)
#define ABH_PLUGIN_DEFINE_V2(name, device) \
  ABH_PLUGIN_TABLE_V2_(name, device, tactic_count, tactic_key, select_tactic)

/* The tactic functions of a problem with one tactic, named by `tactic_of(problem)`. */
#define ABH_PLUGIN_ONE_TACTIC_(name, tactic_of)                                       \
  [](abh_problem*) { return 1; },                                                     \
      [](abh_problem* p, int index, char* buf, size_t len) {                          \
        return abh_plugin::single_tactic_key(tactic_of(p), index, buf, len);          \
      },                                                                              \
      [](abh_problem* p, const char* key, char* err, size_t len) {                    \
        return abh_plugin::single_tactic_select((name), tactic_of(p), key, err, len); \
      }

/* The table of a plugin with one tactic per problem: its tactic_count, tactic_key and
 * select_tactic are single_tactic_key and single_tactic_select. */
#define ABH_PLUGIN_CALL_(macro, ...) macro(__VA_ARGS__)
#define ABH_PLUGIN_DEFINE_ONE_TACTIC(name, device, tactic_of) \
  ABH_PLUGIN_CALL_(ABH_PLUGIN_TABLE_, name, device, ABH_PLUGIN_ONE_TACTIC_(name, tactic_of))
#define ABH_PLUGIN_DEFINE_ONE_TACTIC_V2(name, device, tactic_of) \
  ABH_PLUGIN_CALL_(ABH_PLUGIN_TABLE_V2_, name, device, ABH_PLUGIN_ONE_TACTIC_(name, tactic_of))

#endif
