// A loaded kernel plugin (the C ABI of include/abharness/plugin.h): a shared object the worker
// dlopens, or a table a front end built (the Python front end, include/abharness/worker.h). Owns
// the dlopen handle and the problems it creates; turns the C status codes into exceptions that
// carry the plugin's own message.
#pragma once

#include <abharness/plugin.h>

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
};

class Problem {
 public:
  Problem(const abh_plugin_v1* t, abh_problem* p) : t_(t), p_(p) {}
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

 private:
  const abh_plugin_v1* t_;
  abh_problem* p_;
};

}  // namespace abh::worker
