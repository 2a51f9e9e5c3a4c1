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
 */
#ifndef ABHARNESS_PLUGIN_SUPPORT_HPP
#define ABHARNESS_PLUGIN_SUPPORT_HPP

#include <abharness/plugin.h>

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

/* Defines the plugin's one exported symbol, returning `table` (an abh_plugin_v1). */
#define ABH_PLUGIN_ENTRY(table)                                                  \
  extern "C" ABH_PLUGIN_EXPORT const abh_plugin_v1* abh_plugin_entry(uint32_t) { \
    return &(table);                                                             \
  }

/* The table of a plugin's functions, visible where the macro is used (tactic functions as given,
 * destroy_problem as destroy), and the exported entry that returns it. */
#define ABH_PLUGIN_TABLE_(name, device, count, key, select)                     \
  static const abh_plugin_v1 abh_plugin_table_ = {ABH_PLUGIN_ABI_VERSION,       \
                                                  (name),                       \
                                                  (device),                     \
                                                  create,                       \
                                                  enqueue,                      \
                                                  verify,                       \
                                                  flops,                        \
                                                  min_bytes,                    \
                                                  count,                        \
                                                  key,                          \
                                                  select,                       \
                                                  library_versions,             \
                                                  abh_plugin::destroy_problem}; \
  ABH_PLUGIN_ENTRY(abh_plugin_table_)

/* The table of a plugin whose functions are named after the ABI's fields. */
#define ABH_PLUGIN_DEFINE(name, device) \
  ABH_PLUGIN_TABLE_(name, device, tactic_count, tactic_key, select_tactic)

/* The table of a plugin with one tactic per problem, named by `tactic_of(problem)`: its
 * tactic_count, tactic_key and select_tactic are single_tactic_key and single_tactic_select. */
#define ABH_PLUGIN_DEFINE_ONE_TACTIC(name, device, tactic_of)                         \
  ABH_PLUGIN_TABLE_(                                                                  \
      name, device, [](abh_problem*) { return 1; },                                   \
      [](abh_problem* p, int index, char* buf, size_t len) {                          \
        return abh_plugin::single_tactic_key(tactic_of(p), index, buf, len);          \
      },                                                                              \
      [](abh_problem* p, const char* key, char* err, size_t len) {                    \
        return abh_plugin::single_tactic_select((name), tactic_of(p), key, err, len); \
      })

#endif
