/* Optional C++ helpers for writing a plugin against plugin.h (header-only, C++17): the pieces
 * every plugin would otherwise repeat. A plugin is still a plain table of C functions; use as
 * much or as little of this as suits it.
 *
 *   // functions named after the ABI's fields: create, enqueue, verify, flops, min_bytes,
 *   // tactic_count, tactic_key, select_tactic, library_versions (destroy: destroy_problem)
 *   ABH_PLUGIN_DEFINE("my-gemm", ABH_DEVICE_CUDA)
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

/* The table of a plugin whose functions are named after the ABI's fields, visible where the
 * macro is used, with destroy_problem as destroy; and the exported entry that returns it. */
#define ABH_PLUGIN_DEFINE(name, device)                                         \
  static const abh_plugin_v1 abh_plugin_table_ = {ABH_PLUGIN_ABI_VERSION,       \
                                                  (name),                       \
                                                  (device),                     \
                                                  create,                       \
                                                  enqueue,                      \
                                                  verify,                       \
                                                  flops,                        \
                                                  min_bytes,                    \
                                                  tactic_count,                 \
                                                  tactic_key,                   \
                                                  select_tactic,                \
                                                  library_versions,             \
                                                  abh_plugin::destroy_problem}; \
  ABH_PLUGIN_ENTRY(abh_plugin_table_)

#endif
