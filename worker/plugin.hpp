// A loaded kernel plugin (the C ABI of include/abharness/plugin.h): a shared object the worker
// dlopens, or a table a front end built (the Python front end, include/abharness/worker.h). Owns
// the dlopen handle and the problems it creates; turns the C status codes into exceptions that
// carry the plugin's own message.
#pragma once

#include <abharness/plugin.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "system/json_io.hpp"

namespace abh::worker {

class PluginError : public std::runtime_error {
 public:
  PluginError(int status, const std::string& what) : std::runtime_error(what), status(status) {}
  int status;
};

class Problem;

class Plugin {
 public:
  // Throws when the file cannot be loaded, lacks the entry symbol or speaks another ABI version.
  explicit Plugin(const std::filesystem::path& path);
  // A table built by a front end, checked like a loaded one; `origin` names it in errors.
  Plugin(const abh_plugin_v1* table, const std::string& origin);
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;
  ~Plugin();

  const abh_plugin_v1& table() const { return *table_; }
  // The version-2 table, or null for a plugin of version 1 (which has no capabilities).
  const abh_plugin_v2* v2() const { return v2_; }
  std::string name() const { return table_->name ? table_->name : "?"; }
  bool is_cuda() const { return table_->device == ABH_DEVICE_CUDA; }
  std::map<std::string, std::string> library_versions() const;
  std::unique_ptr<Problem> create(const json& params) const;

 private:
  struct Close {
    void operator()(void* h) const;
  };
  std::unique_ptr<void, Close> handle_;
  const abh_plugin_v1* table_ = nullptr;
  const abh_plugin_v2* v2_ = nullptr;
};

class Problem {
 public:
  // `v2`: the plugin's version-2 table, or null for a version-1 plugin. `plugin` names it in
  // errors.
  Problem(const abh_plugin_v1* t, const abh_plugin_v2* v2, abh_problem* p, std::string plugin)
      : t_(t), v2_(v2), p_(p), plugin_(std::move(plugin)) {}
  // A problem of a version-1 table.
  Problem(const abh_plugin_v1* t, abh_problem* p)
      : Problem(t, nullptr, p, t->name ? t->name : "?") {}
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
  ~Problem() { t_->destroy(p_); }

  void enqueue(void* stream);
  // Returns the plugin's verdict; throws PluginError only when verification itself failed.
  abh_verify_result verify(bool* passed);
  double flops() const { return t_->flops(p_); }
  double min_bytes() const { return t_->min_bytes(p_); }
  std::vector<std::string> tactic_keys();
  void select_tactic(const std::string& key);
  // Changes whenever select_tactic succeeds: what a captured graph holds is then stale.
  std::uint64_t tactic_generation() const { return tactic_generation_; }

  // ABH_CAP_* bits (0 for a version-1 plugin). Throws PluginError when a bit is set whose
  // functions the table leaves NULL.
  std::uint32_t capabilities() const;
  bool has(std::uint32_t capability) const { return (capabilities() & capability) != 0; }
  // Buffer sets (ABH_CAP_BUFFER_SETS), each throwing PluginError with the plugin's message.
  double buffer_set_bytes() const;
  void make_buffer_sets(int count);
  void use_buffer_set(int index);
  // Graphs the plugin captures itself (ABH_CAP_OWN_GRAPHS).
  void* capture_graph(void* stream, int iterations, int sets);
  void replay_graph(void* graph, void* stream);
  void destroy_graph(void* graph) noexcept;
  const std::string& plugin() const { return plugin_; }

 private:
  void require(std::uint32_t capability, const char* what) const;

  const abh_plugin_v1* t_;
  const abh_plugin_v2* v2_;
  abh_problem* p_;
  std::string plugin_;
  std::uint64_t tactic_generation_ = 0;
};

}  // namespace abh::worker
