// The plugin ABI as the worker reads it (worker/plugin.cpp): version-1 tables keep working,
// version-2 tables bring capabilities and buffer sets, other versions and half-filled tables are
// refused by name. The tables are tiny CPU plugins built here.
#include <doctest/doctest.h>

#include <abharness/plugin_support.hpp>

#include "plugin.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;
using namespace abh::worker;

struct abh_problem {
  int set = 0;
  int sets = 1;
};

namespace {

std::uint32_t g_caps = 0;  // what the version-2 table's problems declare

int create(const char*, abh_problem** out, char*, size_t) {
  *out = new abh_problem{};
  return ABH_OK;
}
int enqueue(abh_problem*, void*, char*, size_t) {
  return ABH_OK;
}
int verify(abh_problem*, abh_verify_result*, char*, size_t) {
  return ABH_OK;
}
double flops(const abh_problem*) {
  return 0;
}
double min_bytes(const abh_problem*) {
  return 0;
}
int tactic_count(abh_problem*) {
  return 1;
}
int tactic_key(abh_problem*, int, char* buf, size_t len) {
  abh_plugin::say(buf, len, "t");
  return ABH_OK;
}
int select_tactic(abh_problem*, const char*, char*, size_t) {
  return ABH_OK;
}
int library_versions(char* buf, size_t len) {
  abh_plugin::say(buf, len, "{}");
  return ABH_OK;
}
uint32_t capabilities(const abh_problem*) {
  return g_caps;
}
double buffer_set_bytes(const abh_problem*) {
  return 4096;
}
int make_buffer_sets(abh_problem* p, int count, char* err, size_t len) {
  if (count > 8) {
    abh_plugin::say(err, len, "only 8 sets fit");
    return ABH_ERR_RUNTIME;
  }
  p->sets = count;
  return ABH_OK;
}
int use_buffer_set(abh_problem* p, int index, char* err, size_t len) {
  if (index >= p->sets) {
    abh_plugin::say(err, len, "no such set");
    return ABH_ERR_INVALID_PARAMS;
  }
  p->set = index;
  return ABH_OK;
}

#define TABLE_V1(abi)                                                                       \
  abh_plugin_v1 {                                                                           \
    (abi), "tiny", ABH_DEVICE_CPU, create, enqueue, verify, flops, min_bytes, tactic_count, \
        tactic_key, select_tactic, library_versions, abh_plugin::destroy_problem            \
  }

abh_plugin_v2 table_v2() {
  return abh_plugin_v2{TABLE_V1(2u),   capabilities, buffer_set_bytes, make_buffer_sets,
                       use_buffer_set, nullptr,      nullptr,          nullptr};
}

}  // namespace

TEST_CASE("plugin ABI: a version-1 table is measured as before, with no capability") {
  const abh_plugin_v1 t = TABLE_V1(ABH_PLUGIN_ABI_V1);
  Plugin plugin(&t, "tiny v1");
  CHECK(plugin.v2() == nullptr);
  auto problem = plugin.create(json::object());
  CHECK(problem->capabilities() == 0u);
  CHECK_FALSE(problem->has(ABH_CAP_CAPTURABLE));
  CHECK_THROWS_WITH_AS(problem->make_buffer_sets(2),
                       doctest::Contains("make_buffer_sets asked of a problem that does not"),
                       PluginError);
  CHECK_THROWS_AS(problem->use_buffer_set(0), PluginError);
  problem->enqueue(nullptr);
}

TEST_CASE("plugin ABI: a version-2 table's capabilities and buffer sets reach the problem") {
  g_caps = ABH_CAP_CAPTURABLE | ABH_CAP_BUFFER_SETS;
  const abh_plugin_v2 t = table_v2();
  Plugin plugin(&t.v1, "tiny v2");
  REQUIRE(plugin.v2() == &t);
  auto problem = plugin.create(json::object());
  CHECK(problem->capabilities() == (ABH_CAP_CAPTURABLE | ABH_CAP_BUFFER_SETS));
  CHECK(problem->has(ABH_CAP_BUFFER_SETS));
  CHECK_FALSE(problem->has(ABH_CAP_OWN_GRAPHS));
  CHECK(problem->buffer_set_bytes() == 4096);
  problem->make_buffer_sets(4);
  problem->use_buffer_set(3);
  CHECK_THROWS_WITH_AS(problem->use_buffer_set(4), "use_buffer_set(4): no such set", PluginError);
  CHECK_THROWS_WITH_AS(problem->make_buffer_sets(9), "make_buffer_sets(9): only 8 sets fit",
                       PluginError);
  CHECK_THROWS_WITH_AS(problem->capture_graph(nullptr, 4, 1),
                       doctest::Contains("capture_graph asked of a problem that does not"),
                       PluginError);
  const std::uint64_t before = problem->tactic_generation();
  problem->select_tactic("t");
  CHECK(problem->tactic_generation() == before + 1);
}

TEST_CASE("plugin ABI: a capability whose functions are NULL is refused, naming them") {
  abh_plugin_v2 t = table_v2();
  t.make_buffer_sets = nullptr;
  g_caps = ABH_CAP_BUFFER_SETS;
  Plugin sets(&t.v1, "half v2");
  auto p = sets.create(json::object());
  CHECK_THROWS_WITH_AS(p->capabilities(),
                       doctest::Contains("offers buffer sets (ABH_CAP_BUFFER_SETS) but its table "
                                         "leaves buffer_set_bytes, make_buffer_sets or "
                                         "use_buffer_set NULL"),
                       PluginError);
  g_caps = ABH_CAP_CAPTURABLE | ABH_CAP_OWN_GRAPHS;
  CHECK_THROWS_WITH_AS(p->capabilities(), doctest::Contains("capture_graph, replay_graph"),
                       PluginError);
  g_caps = ABH_CAP_CAPTURABLE;
  CHECK(p->capabilities() == ABH_CAP_CAPTURABLE);
}

TEST_CASE("plugin ABI: other versions and a version-2 table without capabilities are refused") {
  for (std::uint32_t abi : {0u, 3u}) {
    const abh_plugin_v1 t = TABLE_V1(abi);
    CAPTURE(abi);
    const std::string want = "implements plugin ABI version " + std::to_string(abi) +
                             " but this worker speaks versions 1 to 2";
    CHECK_THROWS_WITH_AS(Plugin(&t, "odd"), doctest::Contains(want.c_str()), PluginError);
  }
  abh_plugin_v2 t = table_v2();
  t.capabilities = nullptr;
  CHECK_THROWS_WITH_AS(Plugin(&t.v1, "no caps"),
                       "no caps: plugin table of ABI version 2 has a NULL capabilities entry",
                       PluginError);
  abh_plugin_v1 hole = TABLE_V1(ABH_PLUGIN_ABI_V1);
  hole.verify = nullptr;
  CHECK_THROWS_WITH_AS(Plugin(&hole, "hole"), "hole: plugin table has a NULL entry", PluginError);
}

TEST_CASE("plugin ABI: the support macros make a version-1 table say 1 and a version-2 one 2") {
  // A table of the version-1 macros is a version-1 table whatever ABH_PLUGIN_ABI_VERSION is.
  CHECK(ABH_PLUGIN_ABI_V1 == 1u);
  CHECK(ABH_PLUGIN_ABI_VERSION == 2u);
  CHECK(ABH_PLUGIN_ABI_VERSION_MIN == 1u);
  // The version-1 part is the start of the version-2 table: the entry returns &table.v1.
  CHECK(offsetof(abh_plugin_v2, v1) == 0);
}
