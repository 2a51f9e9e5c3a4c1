// `abharness bisect --good REV --bad REV --grid g.json`: which commit moved each shape. The search
// (bisect/search.hpp) says which A/B/A to measure next; each such probe is an ordinary run
// directory under <bisect>/probes/, planned, measured, validated and reported as `run` does, so it
// resumes and verifies like any run. Nothing else is state: resume and verify replay the search
// from bisect.json and the probes' validated results (docs/bisect.md).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <set>

#include "bisect/bisect_report.hpp"
#include "bisect/search.hpp"
#include "bisect/spec.hpp"
#include "conclude.hpp"
#include "exit_codes.hpp"
#include "git/first_parent.hpp"
#include "new_run_dir.hpp"
#include "planner.hpp"
#include "provenance/provenance.hpp"
#include "report/adaptive.hpp"
#include "report/report_builder.hpp"
#include "run_command.hpp"
#include "run_lock.hpp"
#include "system/error.hpp"
#include "system/json_io.hpp"
#include "variants.hpp"

namespace abh {
namespace fs = std::filesystem;
using bisect::BisectSpec;
using bisect::Probe;
using bisect::ProbeRecord;
using bisect::ProbeVerdicts;
using bisect::Search;

namespace {

struct BisectFlags {
  std::string good, bad, grid, shapes, repo = ".", target = "cpu";
  std::string runs_root = "runs", run_id, resume_dir;
  std::string python, gpus = "0", cpus, start_ahead = "auto", until_decided = "auto";
  bool share_host = false;
  MeasureSettings settings;
  ReportFlags report;
};

// Replaying the search either measures what is missing (run, resume) or only checks what is
// there (verify), which then reports the first probe it cannot replay.
enum class Mode { measure, verify };

// A probe that could not be replayed while verifying: its reason, and the exit code to give.
struct Unreplayable : Error {
  int code;
  Unreplayable(const std::string& what, int c) : Error(what), code(c) {}
};

std::string short_sha(const std::string& sha) {
  return sha.substr(0, 12);
}

// "03-step-<candidate>-vs-<baseline>": the order, the kind and both commits, so that a listing of
// probes/ reads as the search went.
std::string probe_name(const BisectSpec& spec, int seq, const Probe& p) {
  char n[16];
  std::snprintf(n, sizeof n, "%02d", seq);
  return std::string(n) + "-" + to_string(p.kind) + "-" +
         short_sha(spec.commits.at(p.candidate).sha) + "-vs-" +
         short_sha(spec.commits.at(p.baseline).sha);
}

fs::path unbuildable_marker(const fs::path& probes, const std::string& name) {
  return probes / (name + ".unbuildable.json");
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

PlanRequest probe_request(const fs::path& dir, const BisectSpec& spec, const Probe& p) {
  PlanRequest r;
  r.repo = spec.repo;
  r.baseline = spec.commits.at(p.baseline).sha;
  r.candidate = spec.commits.at(p.candidate).sha;
  r.grid = (dir / "grid.json").string();
  r.shapes = join(p.shapes, ",");  // shape ids are [A-Za-z0-9._-]: no pattern characters
  r.target = spec.target;
  r.gpus = spec.gpus;
  r.python = spec.python;
  r.cpus = spec.cpus;
  r.start_ahead = spec.start_ahead;
  r.until_decided = spec.until_decided;
  r.settings = spec.settings;
  r.schedule.decision = spec.stats;
  r.schedule.share_host = spec.share_host;
  r.argv = spec.argv;
  set_until_decided(r);
  return r;
}

// The probe's verdicts from its validated results (never from its report files, which are only
// renderings): a probe that fails validation, or whose plan compares other commits than its name
// says, stops the replay.
ProbeVerdicts probe_verdicts(const fs::path& run_dir, const BisectSpec& spec, const Probe& p) {
  const Plan plan = load_plan(run_dir);
  const Validation v = validate_run(run_dir, plan, adaptive_blocks);
  if (!v.problems.empty()) {
    print_problems(v, run_dir);
    throw Unreplayable("bisect: probe " + run_dir.string() + " failed provenance validation",
                       exit_code::kProvenance);
  }
  for (const auto& var : plan.variants) {
    const std::string& want =
        spec.commits.at(var.name == "baseline" ? p.baseline : p.candidate).sha;
    if (var.source.commit != want)
      throw Unreplayable("bisect: probe " + run_dir.string() + " measured " + var.name + " " +
                             var.source.commit + ", but the search calls for " + want,
                         exit_code::kProvenance);
  }
  const Report report = build_report(plan, v.outcomes, spec.stats, v.result_set_digest);
  ProbeVerdicts out;
  for (const auto& row : report.shapes) {
    bisect::ShapeVerdict sv{to_string(row.verdict), row.speedup, {}, {}};
    if (row.ci) sv.lo = row.ci->lo, sv.hi = row.ci->hi;
    out[row.shape] = sv;
  }
  return out;
}

// "s48 slower 0.51x [0.49, 0.53]; s64 same 1.00x [...]"
std::string verdicts_line(const ProbeVerdicts& v) {
  std::string s;
  char b[96];
  for (const auto& [shape, x] : v) {
    std::snprintf(b, sizeof b, " %.4fx", x.speedup.value_or(0));
    s += (s.empty() ? "" : "; ") + shape + " " + x.verdict + (x.speedup ? b : "");
  }
  return s;
}

class Bisection {
 public:
  Bisection(fs::path dir, Mode mode, ReportFlags flags)
      : dir_(std::move(dir)),
        probes_(dir_ / "probes"),
        mode_(mode),
        flags_(std::move(flags)),
        spec_(bisect::load_spec(dir_)),
        search_(static_cast<int>(spec_.commits.size()) - 1, spec_.shapes) {
    flags_.quiet = true;  // each probe's table is summed up in one line
    flags_.fail_on_regression = false;
  }

  // Replays every probe the search calls for, measuring the missing ones in measure mode.
  void replay() {
    int seq = 0;
    while (std::optional<Probe> p = search_.next()) {
      const std::string name = probe_name(spec_, ++seq, *p);
      ProbeRecord rec{name, *p, false, ""};
      const fs::path marker = unbuildable_marker(probes_, name);
      if (fs::exists(marker)) {
        rec.unbuildable = true;
        rec.note = field<std::string>(read_json_file(marker), "message", marker.string());
      } else {
        rec = measure(rec);
      }
      if (rec.unbuildable) {
        search_.record_unbuildable(p->candidate, rec.note);
        say(name + ": " + commit_text(p->candidate) + " does not build: skipped");
      } else {
        const ProbeVerdicts v = probe_verdicts(probes_ / name, spec_, *p);
        search_.record(*p, v);
        say(name + ": " + commit_text(p->candidate) + " against " + commit_text(p->baseline) +
            ": " + verdicts_line(v));
      }
      records_.push_back(std::move(rec));
    }
    check_no_other_probes();
  }

  bisect::BisectReport report() const {
    return bisect::make_bisect_report(spec_, search_, records_);
  }
  const fs::path& dir() const { return dir_; }

 private:
  std::string commit_text(int i) const {
    const auto& c = spec_.commits.at(i);
    return short_sha(c.sha) + " (" + std::to_string(i) + "/" +
           std::to_string(spec_.commits.size() - 1) + " " + c.subject + ")";
  }
  void say(const std::string& line) const {
    if (mode_ == Mode::measure) std::cerr << "bisect " << line << "\n";
  }

  // Measures the probe, or resumes it where a kill left it; verify mode only checks it is there.
  ProbeRecord measure(ProbeRecord rec) {
    const fs::path run = probes_ / rec.name;
    const bool planned = fs::exists(run / "plan.json");
    if (mode_ == Mode::verify) {
      if (!planned)
        throw Unreplayable("bisect: probe " + rec.name + " has not run yet: `abharness resume " +
                               dir_.string() + "` continues the bisect",
                           exit_code::kIncomplete);
      const Plan plan = load_plan(run);
      const Validation v = validate_run(run, plan, adaptive_blocks);
      if (!v.problems.empty()) {
        print_problems(v, run);
        throw Unreplayable("bisect: probe " + run.string() + " failed provenance validation",
                           exit_code::kProvenance);
      }
      if (!v.complete())
        throw Unreplayable("bisect: probe " + rec.name + " is incomplete: `abharness resume " +
                               dir_.string() + "` continues it",
                           exit_code::kIncomplete);
      return rec;
    }
    if (planned) {
      say(rec.name + ": resuming");
      check_probe_exit(resume_run(run, flags_, nullptr), rec.name);
      return rec;
    }
    // A start killed before its plan was written (its build, say) left a directory to redo.
    if (fs::exists(run)) fs::remove_all(run);
    say(rec.name + ": measuring " + commit_text(rec.probe.candidate) + " against " +
        commit_text(rec.probe.baseline) + " on " + std::to_string(rec.probe.shapes.size()) +
        " shape(s)");
    try {
      check_probe_exit(
          run_new_sweep(probe_request(dir_, spec_, rec.probe), probes_, rec.name, flags_),
          rec.name);
    } catch (const BuildFailed& e) {
      if (rec.probe.kind != Probe::Kind::step) throw;  // every other probe's commits built before
      rec.unbuildable = true;
      rec.note = e.what();
      write_json_atomic(
          unbuildable_marker(probes_, rec.name),
          json{{"commit", spec_.commits.at(rec.probe.candidate).sha}, {"message", rec.note}});
    }
    return rec;
  }

  // A probe with failed arms still steers the search (those shapes read `failed`, so undecided);
  // one that fails validation stops it.
  static void check_probe_exit(int rc, const std::string& name) {
    if (rc == exit_code::kProvenance)
      throw Unreplayable("bisect: probe " + name + " failed provenance validation",
                         exit_code::kProvenance);
  }

  // A probe directory the replay did not call for was not made by this search.
  void check_no_other_probes() const {
    if (!fs::exists(probes_)) return;
    std::set<std::string> known;
    for (const auto& r : records_) {
      known.insert(r.name);
      known.insert(r.name + ".unbuildable.json");
    }
    for (const auto& e : fs::directory_iterator(probes_)) {
      const std::string n = e.path().filename().string();
      if (n == ".cache" || known.count(n)) continue;
      throw Unreplayable("bisect: probes/" + n +
                             " is not a probe this bisect's search calls for (moved there or "
                             "left by another search): remove it, or verify it as a run of its own",
                         exit_code::kProvenance);
    }
  }

  fs::path dir_, probes_;
  Mode mode_;
  ReportFlags flags_;
  BisectSpec spec_;
  Search search_;
  std::vector<ProbeRecord> records_;
};

int finish(const Bisection& b, const ReportFlags& flags) {
  const bisect::BisectReport r = b.report();
  write_json_atomic(b.dir() / "bisect-report.json", bisect::to_json(r));
  write_file_atomic(b.dir() / "bisect.md", bisect::render_markdown(r));
  // The table is what --quiet keeps: it silences the progress only.
  std::cout << bisect::render_terminal(
      r, use_color(flags.color, ::isatty(STDOUT_FILENO), std::getenv("NO_COLOR")));
  std::cerr << "bisect report: " << (b.dir() / "bisect.md").string() << " (bisect-report.json)\n";
  if (!bisect::complete(r)) return exit_code::kIncomplete;
  // A shape undecided between good and bad may have moved: a search that found nothing for it
  // is not a success a script may read as "nothing moved".
  if (const auto undecided = bisect::undecided_shapes(r); !undecided.empty()) {
    std::cerr << "abharness: exit " << exit_code::kUndecided << ": " << undecided.size()
              << " shape(s) not decided between good and bad, so their first bad commit was not "
                 "searched for: "
              << join(undecided, ", ")
              << "; more blocks decide them (--until-decided N), or a quieter machine\n";
    return exit_code::kUndecided;
  }
  return exit_code::kSuccess;
}

int run_bisection(const fs::path& dir, const ReportFlags& flags) {
  RunLock lock(dir);
  Bisection b(dir, Mode::measure, flags);
  try {
    b.replay();
  } catch (const Unreplayable& e) {
    std::cerr << "abharness: " << e.what() << "\n";
    return e.code;
  }
  return finish(b, flags);
}

// Checks the request and writes bisect.json and grid.json into a new directory.
fs::path start_bisection(const BisectFlags& f) {
  if (f.settings.timing.find(',') != std::string::npos)
    throw UsageError("--timing " + f.settings.timing +
                     ": bisect one timing at a time (a shape moves in one of them)");
  PlanRequest check;
  check.repo = f.repo;
  check.grid = f.grid;
  check.shapes = f.shapes;
  check.target = f.target;
  check.gpus = f.gpus;
  check.python = f.python;
  check.cpus = f.cpus;
  check.start_ahead = f.start_ahead;
  check.until_decided = f.until_decided;
  check.settings = f.settings;
  check.schedule.decision = f.report.stats;
  check.schedule.share_host = f.share_host;
  set_until_decided(check);
  const auto commits = git::first_parent_path(f.repo, f.good, f.bad);
  check.baseline = commits.front().sha;
  check.candidate = commits.back().sha;
  const ResolvedRequest resolved = resolve_request(check);

  BisectSpec spec;
  spec.good_requested = f.good;
  spec.bad_requested = f.bad;
  spec.commits = commits;
  spec.repo = resolved.repo.string();
  spec.target = f.target;
  for (const auto& s : resolved.grid.shapes) spec.shapes.push_back(s.id);
  spec.python = f.python;
  spec.gpus = f.gpus;
  spec.cpus = f.cpus;
  spec.start_ahead = f.start_ahead;
  spec.until_decided = f.until_decided;
  spec.share_host = f.share_host;
  spec.settings = f.settings;
  spec.stats = f.report.stats;
  spec.argv = invocation_argv();
  std::string id = f.run_id;
  NewRunDir dir(fs::absolute(f.runs_root).lexically_normal(), id);
  spec.id = id;
  write_json_atomic(dir.path() / "grid.json", to_json(resolved.grid));
  write_json_atomic(bisect::spec_path(dir.path()), bisect::to_json(spec));
  dir.keep();
  std::cerr << "bisect " << id << " in " << dir.path().string() << ": " << commits.size() - 2
            << " commit(s) between good " << short_sha(commits.front().sha) << " and bad "
            << short_sha(commits.back().sha) << ", " << spec.shapes.size() << " shape(s)\n";
  return dir.path();
}

// A bisect whose first probe was refused before its first arm (an option its plugin cannot honour)
// leaves nothing behind, as a run refused so does, and its --run-id can be used again; one with a
// probe directory (a failed build's log, results) keeps it all.
void remove_if_nothing_probed(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir / "probes", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() != ".cache") return;
  fs::remove_all(dir, ec);
  if (!ec) std::cerr << "abharness: removed " << dir.string() << ": nothing was probed in it\n";
}

}  // namespace

int resume_bisect(const fs::path& dir, const ReportFlags& flags) {
  return run_bisection(fs::absolute(dir).lexically_normal(), flags);
}

int verify_bisect(const fs::path& dir_in) {
  const fs::path dir = fs::absolute(dir_in).lexically_normal();
  Bisection b(dir, Mode::verify, ReportFlags{});
  try {
    b.replay();
  } catch (const Unreplayable& e) {
    std::cerr << "abharness: " << e.what() << "\n";
    return e.code;
  }
  const bisect::BisectReport r = b.report();
  const fs::path written = dir / "bisect-report.json";
  if (fs::exists(written) && read_json_file(written) != bisect::to_json(r)) {
    std::cerr << "abharness: " << written.string()
              << " differs from what the probes' results give: it was edited, or written by "
                 "another abharness; `abharness resume "
              << dir.string() << "` writes it again\n";
    return exit_code::kProvenance;
  }
  std::cout << "verified bisect " << r.id << ": " << r.probes.size()
            << " probe(s) replayed from their validated results\n";
  return bisect::complete(r) ? exit_code::kSuccess : exit_code::kIncomplete;
}

void add_bisect_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<BisectFlags>();
  auto* c = app.add_subcommand(
      "bisect", "find the commit that moved each shape between a good and a bad revision");
  c->add_option("--good", f->good, "a revision where the shapes were fine");
  c->add_option("--bad", f->bad, "a later revision (first-parent descendant) where they moved");
  c->add_option("--grid", f->grid, "shapes file (JSON)")->check(CLI::ExistingFile);
  c->add_option("--shapes", f->shapes, "only these shapes of the grid (ids or patterns)");
  c->add_option("--repo", f->repo, "kernel repository")->capture_default_str();
  c->add_option("--target", f->target, "plugin key in abharness.json")->capture_default_str();
  c->add_option("--runs-root", f->runs_root, "directory that holds run and bisect directories")
      ->capture_default_str();
  c->add_option("--run-id", f->run_id, "name of the bisect directory");
  c->add_option("--resume", f->resume_dir, "continue this bisect directory");
  c->add_option("--gpus", f->gpus, "GPU indices or UUIDs")->capture_default_str();
  c->add_option("--python", f->python, "interpreter of Python plugins");
  c->add_option("--cpus", f->cpus, "CPUs the arms may use");
  c->add_option("--start-ahead", f->start_ahead, "workers started ahead (as for run)")
      ->capture_default_str();
  c->add_option("--until-decided", f->until_decided,
                "more blocks for each probe's undecided shapes (as for run): an undecided probe "
                "gets them before it may steer the search")
      ->capture_default_str();
  c->add_flag("--share-host", f->share_host,
              "let other runs given --share-host measure on other CPUs beside every probe (as "
              "for run)");
  add_measure_flags(*c, f->settings);
  add_stats_flags(*c, f->report.stats);
  add_color_option(*c, f->report.color);
  c->add_flag("-q,--quiet", f->report.quiet, "print only the bisect's table");
  c->footer(R"(Examples:
  abharness bisect --good v1.2 --bad main --grid shapes.json --target cuda
  abharness bisect --good HEAD~8 --bad HEAD --grid g.json --shapes m512_* --run-id pad
  abharness resume runs/pad        (after a kill: measures what is missing, nothing twice)
First an A/B/A of bad against good decides which shapes moved; each probe then measures one
commit of the first-parent path against good (and against bad when that is undecided). A commit
that does not build is skipped and named. docs/bisect.md says how each step decides.
Exit codes: 0 every moved shape has its first bad commit, 1 error, 2 usage, 3 provenance failure,
4 incomplete, 6 a shape not decided between good and bad (not searched).)");
  c->callback([c, f, &exit_code] {
    if (c->count("--resume")) {
      exit_code = resume_bisect(f->resume_dir, f->report);
      return;
    }
    if (f->good.empty() || f->bad.empty() || f->grid.empty())
      throw UsageError("bisect needs --good, --bad and --grid (or --resume DIR)");
    validate(f->report.stats);
    const fs::path dir = start_bisection(*f);
    try {
      exit_code = run_bisection(dir, f->report);
    } catch (const UsageError&) {
      remove_if_nothing_probed(dir);
      throw;
    }
  });
}

}  // namespace abh
