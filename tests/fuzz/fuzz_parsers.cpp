// Mutation fuzzer for every document abharness reads back: plans, results (parsing and provenance
// validation, alone and over a run directory), grids, variants files, build manifests, reports,
// source identities and the worker's tactic cache. Inputs are mutations of real documents
// (tests/fuzz/seeds, the example manifest, grid and variants file, a tactic cache written by the
// worker code itself): byte flips, truncations, NUL bytes, 10k-level nesting, huge numbers, wrong
// types per field, deleted and duplicate keys, very long strings, grafted subtrees. Built with
// ASan and UBSan (no recovery), so a memory error or undefined behaviour ends the run; besides not
// crashing, each target must either accept the input or throw a std::exception, and the validators
// must never throw at all (a damaged result is a provenance problem, exit 3, not an internal
// error). A target that takes more than --hang-seconds on one input fails the run. The input that
// killed the process is written to fuzz-crash-input.json (ASan death callback) so it can be
// replayed.
#include <fcntl.h>
#include <sanitizer/common_interface_defs.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/grid.hpp"
#include "model/identity.hpp"
#include "model/manifest.hpp"
#include "model/plan.hpp"
#include "model/result.hpp"
#include "model/variants_file.hpp"
#include "provenance/provenance.hpp"
#include "report/adaptive.hpp"
#include "report/report_json.hpp"
#include "report/report_render.hpp"
#include "system/json_io.hpp"
#include "system/run_dir_fs.hpp"
#include "system/sha256.hpp"
#include "tactic_cache.hpp"

namespace fs = std::filesystem;
using abh::json;

namespace {

// The input under test, kept where the ASan death callback can write it out.
std::string g_current;
std::string g_current_target;

void write_crash_input() {
  int fd = ::open("fuzz-crash-input.json", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  ssize_t ignored = ::write(fd, g_current.data(), g_current.size());
  (void)ignored;
  ::close(fd);
  std::fprintf(stderr, "fuzz_parsers: target '%s' died; input written to fuzz-crash-input.json\n",
               g_current_target.c_str());
}

struct Rng {
  std::mt19937_64 g;
  size_t below(size_t n) { return n ? static_cast<size_t>(g() % n) : 0; }
  bool coin(int one_in) { return below(static_cast<size_t>(one_in)) == 0; }
};

// ---- structured mutations: on the parsed seed, then serialized (possibly with textual tricks) --

void collect_paths(const json& j, const json::json_pointer& at,
                   std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) collect_paths(*it, at / it.key(), out);
  else if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) collect_paths(j[i], at / i, out);
}

const char* const kHugeNumbers[] = {"1e308",
                                    "-1e308",
                                    "1e999",
                                    "-1e999",
                                    "1e-400",
                                    "18446744073709551615",
                                    "18446744073709551616",
                                    "-9223372036854775808",
                                    "-9223372036854775809",
                                    "9223372036854775807",
                                    "2147483648",
                                    "-2147483649",
                                    "4294967296",
                                    "-0",
                                    "0.0",
                                    "123456789012345678901234567890123456789",
                                    "1.7976931348623157e309",
                                    "4.9e-324"};

std::string nested(size_t depth, Rng& r) {
  std::string open, close;
  open.reserve(depth * 6);
  for (size_t i = 0; i < depth; ++i) {
    if (r.coin(2)) {
      open += "[";
      close += "]";
    } else {
      open += "{\"a\":";
      close += "}";
    }
  }
  std::reverse(close.begin(), close.end());
  return open + "1" + close;
}

json other_type(const json& old, Rng& r) {
  for (;;) {
    json v;
    switch (r.below(9)) {
      case 0:
        v = nullptr;
        break;
      case 1:
        v = r.coin(2);
        break;
      case 2:
        v = -1;
        break;
      case 3:
        v = 0;
        break;
      case 4:
        v = 1.5;
        break;
      case 5:
        v = "text";
        break;
      case 6:
        v = json::array({1, "x", nullptr});
        break;
      case 7:
        v = json::object({{"k", "v"}});
        break;
      default:
        v = "";
        break;
    }
    if (v.type() != old.type() || r.coin(4)) return v;
  }
}

// Returns a mutated serialization of `seed`.
std::string mutate_structured(const json& seed, Rng& r) {
  json doc = seed;
  // A sentinel string, replaced after dump() by raw text that a json value cannot express.
  const std::string sentinel = "\x01@@SENTINEL@@\x01";
  std::string raw_replacement;
  int n = 1 + static_cast<int>(r.below(3));
  for (int m = 0; m < n; ++m) {
    std::vector<json::json_pointer> paths;
    collect_paths(doc, json::json_pointer(), paths);
    json::json_pointer p = paths[r.below(paths.size())];
    json& node = doc[p];
    switch (r.below(9)) {
      case 0:  // wrong type
        node = other_type(node, r);
        break;
      case 1:  // delete the key (or element)
        if (!p.empty()) {
          json& parent = doc[p.parent_pointer()];
          if (parent.is_object())
            parent.erase(p.back());
          else if (parent.is_array() && !parent.empty())
            parent.erase(parent.begin() + static_cast<long>(r.below(parent.size())));
        }
        break;
      case 2:  // a very long string, sometimes with NULs in it
      {
        std::string s(size_t(1) << (10 + r.below(11)), 'x');
        if (r.coin(2)) s[r.below(s.size())] = '\0';
        node = s;
        break;
      }
      case 3:  // NUL and control bytes inside a string
        node = std::string("a\0b\x01\x1f\"\\/\xc3\xa9", 10);
        break;
      case 4:  // graft another subtree here
      {
        json other = doc[paths[r.below(paths.size())]];
        node = other;
        break;
      }
      case 5:  // an empty container of the same kind
        if (node.is_object())
          node = json::object();
        else if (node.is_array())
          node = json::array();
        else
          node = other_type(node, r);
        break;
      default:  // raw text: huge number, deep nesting, or a duplicate key
        if (!raw_replacement.empty()) break;
        if (r.coin(3) && node.is_object() && !node.empty()) {
          auto first = node.begin();
          json rest = node;
          raw_replacement = "{\"" + first.key() + "\":" + other_type(*first, r).dump() + "," +
                            rest.dump().substr(1);
        } else if (r.coin(2)) {
          raw_replacement = kHugeNumbers[r.below(std::size(kHugeNumbers))];
        } else {
          raw_replacement = nested(r.coin(2) ? 10000 : 60 + r.below(10), r);
        }
        node = sentinel;
        break;
    }
  }
  std::string text = r.coin(2) ? doc.dump() : doc.dump(2);
  if (!raw_replacement.empty()) {
    const std::string quoted = json(sentinel).dump();
    auto at = text.find(quoted);
    if (at != std::string::npos) text.replace(at, quoted.size(), raw_replacement);
  }
  return text;
}

// ---- byte-level mutations of the text ----

std::string mutate_bytes(std::string s, Rng& r) {
  if (s.empty()) return s;
  switch (r.below(6)) {
    case 0: {  // flip bits
      int n = 1 + static_cast<int>(r.below(8));
      for (int i = 0; i < n; ++i) s[r.below(s.size())] ^= static_cast<char>(1u << r.below(8));
      return s;
    }
    case 1:  // truncate
      return s.substr(0, r.below(s.size()));
    case 2:  // raw NUL bytes
      for (int i = 0; i < 3; ++i) s.insert(r.below(s.size() + 1), 1, '\0');
      return s;
    case 3: {  // delete a span
      size_t a = r.below(s.size()), len = r.below(64) + 1;
      return s.erase(a, len);
    }
    case 4: {  // duplicate a span
      size_t a = r.below(s.size()), len = r.below(128) + 1;
      std::string span = s.substr(a, len);
      return s.insert(r.below(s.size() + 1), span);
    }
    default:  // structural characters at random places
    {
      const char chars[] = "{}[],:\"\\0-e.";
      for (int i = 0; i < 4; ++i) s[r.below(s.size())] = chars[r.below(sizeof chars - 1)];
      return s;
    }
  }
}

// Whole documents that are not the seed at all.
std::string hostile_document(Rng& r) {
  switch (r.below(7)) {
    case 0:
      return nested(10000, r);
    case 1:
      return std::string(10000, '[');
    case 2:
      return std::string(5000, '{') + "\"";
    case 3:
      return "";
    case 4:
      return std::string("\0\0\0", 3);
    case 5:
      return kHugeNumbers[r.below(std::size(kHugeNumbers))];
    default:
      return "\"" + std::string(size_t(1) << 20, 'y') + "\"";
  }
}

// ---- targets ----

struct Target {
  std::string name;
  json seed;
  std::function<bool(const std::string&)> run;  // true: accepted; false: rejected (exception)
  long iterations = 0, accepted = 0;
};

[[noreturn]] void property_failed(const std::string& target, const std::string& what) {
  write_crash_input();
  std::cerr << "fuzz_parsers: FAIL: " << target << ": " << what << "\n";
  std::exit(1);
}

void write_text(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::FILE* f = std::fopen(p.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + p.string());
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
}

// A two-tactic problem whose functions touch nothing: the cache file is what is under test.
int ft_create(const char*, abh_problem**, char*, size_t) {
  return ABH_ERR_RUNTIME;
}
int ft_enqueue(abh_problem*, void*, char*, size_t) {
  return ABH_OK;
}
int ft_verify(abh_problem*, abh_verify_result*, char*, size_t) {
  return ABH_OK;
}
double ft_zero(const abh_problem*) {
  return 0;
}
int ft_count(abh_problem*) {
  return 2;
}
int ft_key(abh_problem*, int i, char* buf, size_t len) {
  std::snprintf(buf, len, "t%d", i);
  return i == 0 || i == 1 ? ABH_OK : ABH_ERR_INVALID_PARAMS;
}
int ft_select(abh_problem*, const char* key, char* err, size_t len) {
  if (std::strcmp(key, "t0") == 0 || std::strcmp(key, "t1") == 0) return ABH_OK;
  std::snprintf(err, len, "no tactic '%.40s'", key);
  return ABH_ERR_INVALID_PARAMS;
}
int ft_versions(char* buf, size_t len) {
  std::snprintf(buf, len, "{}");
  return ABH_OK;
}
void ft_destroy(abh_problem*) {}
const abh_plugin_v1 kFakeTable = {
    ABH_PLUGIN_ABI_V1, "fuzz",   ABH_DEVICE_CPU, ft_create, ft_enqueue,  ft_verify, ft_zero,
    ft_zero,           ft_count, ft_key,         ft_select, ft_versions, ft_destroy};

class FixedTimer : public abh::worker::Timer {
 public:
  std::string name() const override { return "fixed"; }
  std::vector<double> measure(int count, const abh::worker::SampleHooks& hooks,
                              const std::function<void()>& iteration) override {
    std::vector<double> out;
    for (int i = 0; i < count; ++i) {
      hooks.before(i);
      iteration();
      hooks.after(i);
      out.push_back(1000.0 + i);
    }
    return out;
  }
};

// The bytes of the fake plugin file of variant `name`: only its digest matters.
std::string plugin_bytes(const std::string& name) {
  return "fuzz plugin " + name;
}

json read_seed(const fs::path& p) {
  return abh::read_json_file(p);
}

int usage() {
  std::cerr << "usage: fuzz_parsers --seeds DIR [--seconds S] [--seed N] [--hang-seconds S]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 45, hang_seconds = 10;
  std::uint64_t seed = 20261129;
  fs::path seeds;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--seconds")
      seconds = std::stod(argv[i + 1]);
    else if (a == "--seed")
      seed = std::stoull(argv[i + 1]);
    else if (a == "--seeds")
      seeds = argv[i + 1];
    else if (a == "--hang-seconds")
      hang_seconds = std::stod(argv[i + 1]);
    else
      return usage();
  }
  if (seeds.empty() || argc % 2 == 0) return usage();
  __sanitizer_set_death_callback(write_crash_input);

  const fs::path work = fs::temp_directory_path() / ("abh-fuzz." + std::to_string(::getpid()));
  fs::create_directories(work);
  struct Cleanup {
    fs::path p;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } cleanup{work};

  // The real documents, and the facts the validators check them against.
  // The seeds are sealed here, as the orchestrator and the worker seal what they write: the plan
  // with the digest of its content, the result with the digest of the plan file as written below
  // and then its own payload digest. So the seeds on disk stay editable by hand.
  // The plugins the plan records are files written below (validation re-hashes them).
  json plan_seed = read_seed(seeds / "plan.json");
  for (auto& v : plan_seed["variants"])
    v["plugin_sha256"] = abh::sha256_hex(plugin_bytes(v["name"].get<std::string>()));
  plan_seed["payload_sha256"] = abh::plan_payload_digest(plan_seed);
  json result_seed = read_seed(seeds / "result.json");
  for (const auto& v : plan_seed["variants"])
    if (v["name"] == result_seed["invocation"]["variant"])
      result_seed["plugin_sha256"] = v["plugin_sha256"];
  result_seed["plan_sha256"] = abh::sha256_hex(plan_seed.dump(2));
  result_seed["payload_sha256"] = abh::payload_digest(result_seed);
  const json report_seed = read_seed(seeds / "report.json");
  const json manifest_seed =
      read_seed(fs::path(ABH_SOURCE_DIR) / "examples/cpu-gemm/abharness.json");
  const json grid_seed = read_seed(fs::path(ABH_SOURCE_DIR) / "examples/cpu-gemm/shapes.json");
  const json variants_seed =
      read_seed(fs::path(ABH_SOURCE_DIR) / "examples/cpu-gemm/variants.json");
  abh::Plan plan = abh::plan_from_json(plan_seed, "seeds/plan.json");
  plan.file_sha256 = abh::sha256_hex(plan_seed.dump(2));
  const abh::ArmResult seed_result = abh::result_from_json(result_seed, "seeds/result.json");
  const abh::Task* task = plan.find_task(seed_result.invocation.shape, seed_result.invocation.arm);
  if (!task) {
    std::cerr << "fuzz_parsers: seeds/result.json is not an arm of seeds/plan.json\n";
    return 1;
  }
  {  // The seeds must be valid, or the fuzzer only ever explores the first error path.
    std::vector<abh::ProvenanceProblem> problems;
    abh::validate_result(plan, *task, "seed", result_seed, problems);
    if (!problems.empty()) {
      std::cerr << "fuzz_parsers: the seed result does not validate against the seed plan (stale "
                   "seeds? regenerate them from a real run): "
                << problems[0].describe() << "\n";
      return 1;
    }
    abh::report_from_json(report_seed, "seeds/report.json");
    abh::grid_from_json(grid_seed, "shapes.json");
    abh::variants_file_from_json(variants_seed, "variants.json");
  }
  const fs::path run_dir = work / "run";
  write_text(abh::plan_path(run_dir), plan_seed.dump(2));
  for (const auto& v : plan.variants) write_text(run_dir / v.plugin, plugin_bytes(v.name));
  const fs::path result_file = abh::result_path(run_dir, *task);
  const std::string result_rel = result_file.lexically_relative(run_dir).generic_string();

  // The tactic cache seed is what the worker itself writes after tuning.
  const abh::RunDirFs work_fs(work);
  abh::worker::TacticContext tctx{&work_fs, "tactics.json", "cache-key-of-this-problem"};
  abh::worker::Problem problem(&kFakeTable, nullptr);
  FixedTimer timer;
  const abh::worker::SampleHooks no_prep;
  abh::worker::choose_tactic(problem, timer, no_prep, nullptr, "auto", tctx);
  const json tactic_seed = abh::read_json_file(work / tctx.cache_file);

  std::vector<Target> targets;
  targets.push_back({"plan", plan_seed, [&](const std::string& text) {
                       fs::path dir = work / "plan-run";
                       write_text(abh::plan_path(dir), text);
                       abh::Plan p;
                       try {
                         p = abh::load_plan(dir);
                       } catch (const std::exception&) {
                         return false;
                       }
                       // An accepted plan must be usable: validation over a run directory holding
                       // the seed result must not throw.
                       write_text(abh::result_path(dir, *task), result_seed.dump());
                       try {
                         abh::validate_run(dir, p, abh::adaptive_blocks);
                       } catch (const std::exception& e) {
                         property_failed(
                             "plan",
                             std::string("validate_run threw on an accepted plan: ") + e.what());
                       }
                       return true;
                     }});
  long result_iter = 0;
  targets.push_back(
      {"result", result_seed, [&](const std::string& text) {
         json j;
         bool parsed = true;
         try {
           j = abh::parse_json(text, result_rel, abh::JsonLimits{64u << 20, 32});
         } catch (const std::exception&) {
           parsed = false;
         }
         bool accepted = false;
         if (parsed) {
           try {
             abh::result_from_json(j, result_rel);
             accepted = true;
           } catch (const std::exception&) {
           }
           std::vector<abh::ProvenanceProblem> problems;
           try {
             abh::validate_result(plan, *task, result_rel, j, problems);
           } catch (const std::exception& e) {
             property_failed("result", std::string("validate_result threw: ") + e.what());
           }
           if (!problems.empty()) accepted = false;
         }
         // Every 8th input also goes through the whole directory validation.
         if (++result_iter % 8 == 0) {
           write_text(result_file, text);
           try {
             abh::Validation v = abh::validate_run(run_dir, plan, abh::adaptive_blocks);
             if (text != result_seed.dump() && v.problems.empty() && v.complete() && !accepted)
               property_failed("result", "validate_run accepted a rejected result");
           } catch (const std::exception& e) {
             property_failed("result", std::string("validate_run threw: ") + e.what());
           }
         }
         return accepted;
       }});
  targets.push_back({"grid", grid_seed, [&](const std::string& text) {
                       fs::path p = work / "grid.json";
                       write_text(p, text);
                       try {
                         abh::load_grid(p);
                         return true;
                       } catch (const std::exception&) {
                         return false;
                       }
                     }});
  targets.push_back({"variants", variants_seed, [&](const std::string& text) {
                       fs::path p = work / "variants.json";
                       write_text(p, text);
                       try {
                         abh::load_variants_file(p);
                         return true;
                       } catch (const std::exception&) {
                         return false;
                       }
                     }});
  targets.push_back({"manifest", manifest_seed, [&](const std::string& text) {
                       fs::path src = work / "src";
                       write_text(src / abh::kManifestName, text);
                       try {
                         abh::load_recipe(src, "cpu", abh::SubstitutionVars{"/inc", "/cuda", {}});
                         return true;
                       } catch (const std::exception&) {
                         return false;
                       }
                     }});
  targets.push_back({"report", report_seed, [&](const std::string& text) {
                       abh::Report rep;
                       try {
                         rep = abh::report_from_json(abh::parse_json(text, "report.json"),
                                                     "report.json");
                       } catch (const std::exception&) {
                         return false;
                       }
                       // An accepted report must render in every format without crashing.
                       for (const char* f : {"markdown", "json", "csv", "svg", "terminal"}) {
                         try {
                           abh::render(rep, f, {});
                         } catch (const std::exception&) {
                         }
                       }
                       return true;
                     }});
  targets.push_back({"identity", plan_seed["variants"][0]["source"], [&](const std::string& text) {
                       try {
                         abh::source_identity_from_json(abh::parse_json(text, "identity"),
                                                        "identity");
                         return true;
                       } catch (const std::exception&) {
                         return false;
                       }
                     }});
  targets.push_back(
      {"tactic-cache", tactic_seed, [&](const std::string& text) {
         write_text(work / tctx.cache_file, text);
         abh::worker::TacticChoice c;
         try {
           c = abh::worker::choose_tactic(problem, timer, no_prep, nullptr, "auto", tctx);
         } catch (const std::exception& e) {
           // A damaged cache is re-tuned, never an error of the arm.
           property_failed("tactic-cache", std::string("choose_tactic threw: ") + e.what());
         }
         if (c.key != "t0" && c.key != "t1")
           property_failed("tactic-cache", "chose unknown tactic '" + c.key + "'");
         return c.how.rfind("cache hit", 0) == 0;
       }});

  Rng rng{std::mt19937_64(seed)};
  std::cout << "fuzz_parsers: seed " << seed << ", " << seconds << " s over " << targets.size()
            << " targets" << std::endl;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  long total = 0;
  while (Clock::now() < deadline || total < static_cast<long>(targets.size()) * 20) {
    Target& t = targets[static_cast<size_t>(total) % targets.size()];
    ++total;
    const int kind = static_cast<int>(rng.below(20));
    if (kind == 0)
      g_current = hostile_document(rng);
    else if (kind < 8)
      g_current = mutate_bytes(t.seed.dump(rng.coin(2) ? 2 : -1), rng);
    else if (kind < 10)
      g_current = mutate_bytes(mutate_structured(t.seed, rng), rng);
    else
      g_current = mutate_structured(t.seed, rng);
    g_current_target = t.name;
    const auto t0 = Clock::now();
    try {
      if (t.run(g_current)) ++t.accepted;
    } catch (const std::exception& e) {
      property_failed(t.name, std::string("exception escaped the target: ") + e.what());
    } catch (...) {
      property_failed(t.name, "a non-std exception escaped the target");
    }
    ++t.iterations;
    const double took = std::chrono::duration<double>(Clock::now() - t0).count();
    if (took > hang_seconds)
      property_failed(t.name, "one input took " + std::to_string(took) + " s (hang?)");
  }
  for (const auto& t : targets)
    std::cout << "  " << t.name << ": " << t.iterations << " inputs, " << t.accepted
              << " accepted, " << (t.iterations - t.accepted) << " rejected cleanly\n";
  std::cout << "fuzz_parsers: " << total << " inputs, no crash, no hang, no escaped exception"
            << std::endl;
  return 0;
}
