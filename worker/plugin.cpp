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

// A table must speak an ABI version this worker loads (1 or 2) and fill every required entry.
// `v2`: the table came as a version-2 table (abh_plugin_entry_v2, or a front end's that says 2).
const abh_plugin_v1* checked_table(const abh_plugin_v1* table, bool v2, const std::string& origin) {
  if (!table)
    throw PluginError(ABH_ERR_RUNTIME,
                      origin + ": no plugin table (" +
                          (v2 ? ABH_PLUGIN_ENTRY_V2_SYMBOL : ABH_PLUGIN_ENTRY_SYMBOL) +
                          " returned NULL)");
  if (table->abi_version < ABH_PLUGIN_ABI_VERSION_MIN ||
      table->abi_version > ABH_PLUGIN_ABI_VERSION)
    throw PluginError(ABH_ERR_UNSUPPORTED, origin + " implements plugin ABI version " +
                                               std::to_string(table->abi_version) +
                                               " but this worker speaks versions " +
                                               std::to_string(ABH_PLUGIN_ABI_VERSION_MIN) + " to " +
                                               std::to_string(ABH_PLUGIN_ABI_VERSION) +
                                               ": rebuild the plugin against this abharness's "
                                               "include/abharness/plugin.h");
  if (v2 && table->abi_version != 2)
    throw PluginError(ABH_ERR_RUNTIME, origin + ": its " + ABH_PLUGIN_ENTRY_V2_SYMBOL +
                                           " returned a table of ABI version " +
                                           std::to_string(table->abi_version) + ", not 2");
  if (v2 && !reinterpret_cast<const abh_plugin_v2*>(table)->capabilities)
    throw PluginError(ABH_ERR_RUNTIME,
                      origin + ": plugin table of ABI version 2 has a NULL capabilities entry");
  for (auto fn :
       {(void*)table->create, (void*)table->enqueue, (void*)table->verify, (void*)table->flops,
        (void*)table->min_bytes, (void*)table->destroy, (void*)table->tactic_count,
        (void*)table->tactic_key, (void*)table->select_tactic, (void*)table->library_versions})
    if (!fn) throw PluginError(ABH_ERR_RUNTIME, origin + ": plugin table has a NULL entry");
  return table;
}

// The whole version-2 table, when the table is one: it begins with its version-1 part.
const abh_plugin_v2* as_v2(const abh_plugin_v1* table, bool v2) {
  return v2 ? reinterpret_cast<const abh_plugin_v2*>(table) : nullptr;
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
  // Which entry the plugin exports says how large its table is (plugin.h).
  if (auto entry_v2 = reinterpret_cast<abh_plugin_entry_v2_fn>(
          ::dlsym(handle_.get(), ABH_PLUGIN_ENTRY_V2_SYMBOL))) {
    const abh_plugin_v2* t = entry_v2(ABH_PLUGIN_ABI_VERSION);
    table_ = checked_table(t ? &t->v1 : nullptr, true, path.string());
    v2_ = t;
    return;
  }
  auto entry =
      reinterpret_cast<abh_plugin_entry_fn>(::dlsym(handle_.get(), ABH_PLUGIN_ENTRY_SYMBOL));
  if (!entry)
    throw PluginError(ABH_ERR_RUNTIME, path.string() +
                                           " is not an abharness plugin: it does not export '" +
                                           ABH_PLUGIN_ENTRY_SYMBOL + "'");
  // A version-1 table whatever number it carries: a version-1 plugin rebuilt with this header
  // says 2 (ABH_PLUGIN_ABI_VERSION) in a table that ends where version 1 ends.
  table_ = checked_table(entry(ABH_PLUGIN_ABI_VERSION), false, path.string());
}

Plugin::Plugin(const abh_plugin_v1* table, const std::string& origin)
    : table_(checked_table(table, table && table->abi_version == 2, origin)),
      v2_(as_v2(table_, table_->abi_version == 2)) {}

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
  return std::make_unique<Problem>(table_, v2_, p, name());
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
  ++tactic_generation_;
}

std::uint32_t Problem::capabilities() const {
  if (!v2_) return 0;
  const std::uint32_t caps = v2_->capabilities(p_);
  if ((caps & ABH_CAP_BUFFER_SETS) &&
      (!v2_->buffer_set_bytes || !v2_->make_buffer_sets || !v2_->use_buffer_set))
    throw PluginError(ABH_ERR_RUNTIME, plugin_ +
                                           ": the problem offers buffer sets (ABH_CAP_BUFFER_SETS) "
                                           "but its table leaves buffer_set_bytes, "
                                           "make_buffer_sets or use_buffer_set NULL");
  if ((caps & ABH_CAP_OWN_GRAPHS) &&
      (!v2_->capture_graph || !v2_->replay_graph || !v2_->destroy_graph))
    throw PluginError(ABH_ERR_RUNTIME, plugin_ +
                                           ": the problem captures its own graphs "
                                           "(ABH_CAP_OWN_GRAPHS) but its table leaves "
                                           "capture_graph, replay_graph or destroy_graph NULL");
  return caps;
}

void Problem::require(std::uint32_t capability, const char* what) const {
  if (!has(capability))
    throw PluginError(ABH_ERR_UNSUPPORTED,
                      plugin_ + ": " + what + " asked of a problem that does not offer it");
}

double Problem::buffer_set_bytes() const {
  require(ABH_CAP_BUFFER_SETS, "buffer_set_bytes");
  return v2_->buffer_set_bytes(p_);
}

void Problem::make_buffer_sets(int count) {
  require(ABH_CAP_BUFFER_SETS, "make_buffer_sets");
  ErrBuf err{};
  check(v2_->make_buffer_sets(p_, count, err.data(), err.size()), err,
        "make_buffer_sets(" + std::to_string(count) + ")");
}

void Problem::use_buffer_set(int index) {
  // Called before every sample: the capability was checked once, when the sets were made.
  if (!v2_ || !v2_->use_buffer_set)
    throw PluginError(ABH_ERR_RUNTIME, plugin_ + ": use_buffer_set asked of a plugin without it");
  ErrBuf err{};
  check(v2_->use_buffer_set(p_, index, err.data(), err.size()), err,
        "use_buffer_set(" + std::to_string(index) + ")");
}

void* Problem::capture_graph(void* stream, int iterations, int sets) {
  require(ABH_CAP_OWN_GRAPHS, "capture_graph");
  ErrBuf err{};
  void* graph = nullptr;
  check(v2_->capture_graph(p_, stream, iterations, sets, &graph, err.data(), err.size()), err,
        "capture_graph(" + std::to_string(iterations) + " iterations)");
  if (!graph) throw PluginError(ABH_ERR_RUNTIME, plugin_ + ": capture_graph returned no graph");
  return graph;
}

void Problem::replay_graph(void* graph, void* stream) {
  ErrBuf err{};
  check(v2_->replay_graph(p_, graph, stream, err.data(), err.size()), err, "replay_graph");
}

void Problem::destroy_graph(void* graph) noexcept {
  if (graph && v2_ && v2_->destroy_graph) v2_->destroy_graph(p_, graph);
}

}  // namespace abh::worker
