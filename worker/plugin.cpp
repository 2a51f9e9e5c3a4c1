#include "plugin.hpp"

#include <dlfcn.h>

#include <array>

namespace abh::worker {
namespace {

using ErrBuf = std::array<char, 2048>;

void check(int status, const ErrBuf& err, const std::string& what) {
  if (status != ABH_OK) {
    std::string msg = err[0] ? std::string(err.data()) : "no message";
    throw PluginError(status, what + ": " + msg);
  }
}

// A table must speak this worker's ABI and fill every entry.
const abh_plugin_v1* checked_table(const abh_plugin_v1* table, const std::string& origin) {
  if (!table)
    throw PluginError(ABH_ERR_RUNTIME,
                      origin + ": no plugin table (abh_plugin_entry returned NULL)");
  if (table->abi_version != ABH_PLUGIN_ABI_VERSION)
    throw PluginError(
        ABH_ERR_UNSUPPORTED,
        origin + " implements plugin ABI version " + std::to_string(table->abi_version) +
            " but this worker speaks version " + std::to_string(ABH_PLUGIN_ABI_VERSION) +
            ": rebuild the plugin against this abharness's include/abharness/plugin.h");
  for (auto fn :
       {(void*)table->create, (void*)table->enqueue, (void*)table->verify, (void*)table->flops,
        (void*)table->min_bytes, (void*)table->destroy, (void*)table->tactic_count,
        (void*)table->tactic_key, (void*)table->select_tactic, (void*)table->library_versions})
    if (!fn) throw PluginError(ABH_ERR_RUNTIME, origin + ": plugin table has a NULL entry");
  return table;
}

}  // namespace

void Plugin::Close::operator()(void* h) const {
  if (h) ::dlclose(h);
}

Plugin::Plugin(const std::filesystem::path& path) {
  // RTLD_LOCAL keeps two plugins' symbols apart; RTLD_NOW surfaces missing symbols here, with the
  // file's name, instead of in the middle of a timed loop.
  // dlopen searches the library path for a name without a slash: always give it a real path.
  handle_.reset(::dlopen(std::filesystem::absolute(path).c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle_)
    throw PluginError(ABH_ERR_RUNTIME, "cannot load plugin " + path.string() + ": " + ::dlerror());
  auto entry =
      reinterpret_cast<abh_plugin_entry_fn>(::dlsym(handle_.get(), ABH_PLUGIN_ENTRY_SYMBOL));
  if (!entry)
    throw PluginError(ABH_ERR_RUNTIME, path.string() +
                                           " is not an abharness plugin: it does not export '" +
                                           ABH_PLUGIN_ENTRY_SYMBOL + "'");
  table_ = checked_table(entry(ABH_PLUGIN_ABI_VERSION), path.string());
}

Plugin::Plugin(const abh_plugin_v1* table, const std::string& origin)
    : table_(checked_table(table, origin)) {}

Plugin::~Plugin() = default;

std::map<std::string, std::string> Plugin::library_versions() const {
  std::array<char, 4096> buf{};
  if (table_->library_versions(buf.data(), buf.size()) != ABH_OK)
    throw PluginError(ABH_ERR_RUNTIME, name() + ": library_versions failed");
  json j = parse_json(buf.data(), name() + " library_versions");
  std::map<std::string, std::string> out;
  if (!j.is_object())
    throw PluginError(ABH_ERR_RUNTIME, name() + ": library_versions is not an object");
  for (auto it = j.begin(); it != j.end(); ++it)
    out[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
  return out;
}

std::unique_ptr<Problem> Plugin::create(const json& params) const {
  ErrBuf err{};
  abh_problem* p = nullptr;
  check(table_->create(params.dump().c_str(), &p, err.data(), err.size()), err,
        name() + ": cannot create problem " + params.dump());
  if (!p) throw PluginError(ABH_ERR_RUNTIME, name() + ": create returned no problem");
  return std::make_unique<Problem>(table_, p);
}

void Problem::enqueue(void* stream) {
  ErrBuf err{};
  check(t_->enqueue(p_, stream, err.data(), err.size()), err, "enqueue");
}

abh_verify_result Problem::verify(bool* passed) {
  ErrBuf err{};
  abh_verify_result r{};
  int st = t_->verify(p_, &r, err.data(), err.size());
  if (st == ABH_ERR_WRONG_RESULT) {
    *passed = false;
    return r;
  }
  check(st, err, "verify");
  *passed = true;
  return r;
}

std::vector<std::string> Problem::tactic_keys() {
  std::vector<std::string> out;
  int n = t_->tactic_count(p_);
  for (int i = 0; i < n; ++i) {
    std::array<char, 1024> buf{};
    if (t_->tactic_key(p_, i, buf.data(), buf.size()) != ABH_OK)
      throw PluginError(ABH_ERR_RUNTIME, "tactic_key(" + std::to_string(i) + ") failed");
    out.emplace_back(buf.data());
  }
  return out;
}

void Problem::select_tactic(const std::string& key) {
  ErrBuf err{};
  check(t_->select_tactic(p_, key.c_str(), err.data(), err.size()), err,
        "select tactic '" + key + "'");
}

}  // namespace abh::worker
