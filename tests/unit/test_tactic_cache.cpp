// Tactic choice and its cache (worker/tactic_cache.hpp), with a fake plugin problem of three
// tactics whose times the test sets and a timer that reports them: the fastest is kept and cached;
// a cache hit is re-checked by the plugin and skips the tuning; an entry for another key (another
// GPU, library or source), one the plugin rejects, a cache of another schema version and a
// damaged cache are all re-tuned, never used.
#include <doctest/doctest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "plugin.hpp"
#include "system/json_io.hpp"
#include "system/run_dir_fs.hpp"
#include "tactic_cache.hpp"
#include "test_support.hpp"
#include "timer.hpp"

using namespace abh;
using namespace abh::worker;
namespace fs = std::filesystem;

namespace {

// The fake problem behind the C table: its tactics' times, and every tactic selected.
struct Tactics {
  std::vector<std::string> keys = {"t0", "t1", "t2"};
  std::map<std::string, double> ns = {{"t0", 300}, {"t1", 100}, {"t2", 200}};
  std::string failing;  // a tactic whose launch fails
  std::string selected;
  std::vector<std::string> selects;
};

Tactics& of(abh_problem* p) {
  return *reinterpret_cast<Tactics*>(p);
}

int fake_enqueue(abh_problem* p, void*, char* err, size_t len) {
  if (of(p).selected != of(p).failing) return ABH_OK;
  std::snprintf(err, len, "launch failed");
  return ABH_ERR_RUNTIME;
}
int fake_count(abh_problem* p) {
  return static_cast<int>(of(p).keys.size());
}
int fake_key(abh_problem* p, int i, char* buf, size_t len) {
  std::snprintf(buf, len, "%s", of(p).keys.at(static_cast<size_t>(i)).c_str());
  return ABH_OK;
}
int fake_select(abh_problem* p, const char* key, char* err, size_t len) {
  if (!of(p).ns.count(key)) {
    std::snprintf(err, len, "no tactic '%s'", key);
    return ABH_ERR_INVALID_PARAMS;
  }
  of(p).selected = key;
  of(p).selects.push_back(key);
  return ABH_OK;
}
void fake_destroy(abh_problem*) {}

// Only what choosing a tactic calls; the rest is never reached.
const abh_plugin_v1 kTable = {.abi_version = ABH_PLUGIN_ABI_VERSION,
                              .name = "fake-tactics",
                              .device = ABH_DEVICE_CPU,
                              .create = nullptr,
                              .enqueue = fake_enqueue,
                              .verify = nullptr,
                              .flops = nullptr,
                              .min_bytes = nullptr,
                              .tactic_count = fake_count,
                              .tactic_key = fake_key,
                              .select_tactic = fake_select,
                              .library_versions = nullptr,
                              .destroy = fake_destroy};

// Reports the selected tactic's time for every sample, and counts the samples it was asked for.
class TacticTimer : public Timer {
 public:
  explicit TacticTimer(const Tactics& t) : t_(t) {}
  std::string name() const override { return "fake"; }
  std::vector<double> measure(int count, const SampleHooks&,
                              const std::function<void()>& iteration) override {
    for (int i = 0; i < count; ++i) iteration();
    samples += count;
    return std::vector<double>(static_cast<size_t>(count), t_.ns.at(t_.selected));
  }
  int samples = 0;

 private:
  const Tactics& t_;
};

struct Fixture {
  test::TempDir tmp;
  RunDirFs run{tmp.path()};
  Tactics tactics;
  Problem problem{&kTable, reinterpret_cast<abh_problem*>(&tactics)};
  TacticTimer timer{tactics};
  TacticContext ctx{&run, "tactics.json", "key-of-this-gpu-and-source"};

  TacticChoice choose(const std::string& requested = "auto") {
    tactics.selects.clear();
    timer.samples = 0;
    return choose_tactic(problem, timer, SampleHooks{}, nullptr, requested, ctx);
  }
  json cache() const { return read_json_file(tmp.path() / "tactics.json"); }
  void write_cache(const std::string& text) const {
    test::write(tmp.path() / "tactics.json", text);
  }
};

}  // namespace

TEST_CASE("tactic cache: the fastest tactic is tuned, kept and cached under its key") {
  Fixture f;
  const TacticChoice c = f.choose();
  CHECK(c.key == "t1");
  CHECK(c.how == "tuned over 3 candidates");
  CHECK(f.tactics.selected == "t1");
  CHECK(f.timer.samples == 3 * 5);
  CHECK(f.cache() == json{{"schema_version", 1}, {"entries", {{f.ctx.cache_key, "t1"}}}});
}

TEST_CASE("tactic cache: a hit is re-checked by the plugin and skips the tuning") {
  Fixture f;
  f.choose();
  f.tactics.ns["t2"] = 1;  // faster now, but the cache decides
  const TacticChoice c = f.choose();
  CHECK(c.key == "t1");
  CHECK(c.how == "cache hit (tactics.json)");
  CHECK(f.timer.samples == 0);
  CHECK(f.tactics.selects == std::vector<std::string>{"t1"});
}

TEST_CASE("tactic cache: an entry of another key is foreign: re-tuned, and both are kept") {
  Fixture f;
  f.write_cache(R"({"schema_version": 1, "entries": {"key-of-another-gpu": "t2"}})");
  const TacticChoice c = f.choose();
  CHECK(c.key == "t1");
  CHECK(c.how == "tuned over 3 candidates");
  CHECK(f.cache()["entries"] == json{{"key-of-another-gpu", "t2"}, {f.ctx.cache_key, "t1"}});
}

TEST_CASE("tactic cache: a stale entry the plugin rejects is re-tuned and replaced") {
  Fixture f;
  f.write_cache(R"({"schema_version": 1, "entries": {"key-of-this-gpu-and-source": "t9"}})");
  const TacticChoice c = f.choose();
  CHECK(c.key == "t1");
  CHECK(c.how ==
        "tuned over 3 candidates (cached tactic rejected by the plugin, re-tuned: select tactic "
        "'t9': no tactic 't9')");
  CHECK(f.cache()["entries"][f.ctx.cache_key] == "t1");
}

TEST_CASE("tactic cache: a cache of another schema version is foreign: re-tuned and replaced") {
  for (const char* version : {"2", "\"1\"", "null"}) {
    CAPTURE(version);
    Fixture f;
    f.write_cache(std::string(R"({"schema_version": )") + version +
                  R"(, "entries": {"key-of-this-gpu-and-source": "t2", "other": "t0"}})");
    const TacticChoice c = f.choose();
    CHECK(c.key == "t1");
    CHECK(c.how ==
          "tuned over 3 candidates (tactic cache tactics.json has another schema "
          "version: re-tuned)");
    CHECK(f.cache() == json{{"schema_version", 1}, {"entries", {{f.ctx.cache_key, "t1"}}}});
  }
}

TEST_CASE("tactic cache: a damaged cache is re-tuned and rewritten, never an error") {
  for (const char* text :
       {"not json", "[1, 2]", R"({"schema_version": 1, "entries": []})",
        R"({"schema_version": 1, "entries": {"key-of-this-gpu-and-source": 7}})"}) {
    CAPTURE(text);
    Fixture f;
    f.write_cache(text);
    const TacticChoice c = f.choose();
    CHECK(c.key == "t1");
    CHECK(test::contains(c.how, "tuned over 3 candidates"));
    CHECK(f.cache()["entries"][f.ctx.cache_key] == "t1");
  }
  Fixture f;
  f.write_cache("not json");
  CHECK(test::contains(f.choose().how, "(tactic cache unreadable, re-tuned: "));
}

TEST_CASE("tactic cache: a requested or only tactic is not tuned, and a failing one is skipped") {
  Fixture f;
  CHECK(f.choose("t2").how == "requested");
  CHECK(f.tactics.selected == "t2");
  try {
    f.choose("t7");
    FAIL("an unknown requested tactic was accepted");
  } catch (const PluginError& e) {
    CHECK(std::string(e.what()) == "select tactic 't7': no tactic 't7'");
  }
  f.tactics.failing = "t1";
  CHECK(f.choose().key == "t2");
  f.tactics.keys = {"t0"};
  const TacticChoice only = f.choose();
  CHECK(only.key == "t0");
  CHECK(only.how == "only tactic");
  CHECK(f.timer.samples == 0);
}

TEST_CASE("tactic cache: without a cache file every arm tunes, and nothing is written") {
  Fixture f;
  f.ctx.cache_file.clear();
  CHECK(f.choose().how == "tuned over 3 candidates");
  CHECK(f.choose().how == "tuned over 3 candidates");
  CHECK_FALSE(fs::exists(f.tmp.path() / "tactics.json"));
}

TEST_CASE(
    "tactic cache: default measures the first tactic, untuned and uncached, even when slower") {
  Fixture f;
  const TacticChoice c = f.choose("default");
  CHECK(c.key == "t0");  // 300 ns, the slowest: the untuned path is what is asked for
  CHECK(c.how == "default: the plugin's first tactic, not tuned");
  CHECK(f.timer.samples == 0);
  CHECK(f.tactics.selects == std::vector<std::string>{"t0"});
  CHECK_FALSE(fs::exists(f.tmp.path() / "tactics.json"));
}
