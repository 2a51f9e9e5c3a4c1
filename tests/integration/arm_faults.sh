# Fault tolerance of a sweep: a candidate whose plugin aborts, segfaults, returns an error, hangs
# (after forking a grandchild that also hangs) or computes a wrong result, each on one shape.
# Proves that the sweep goes on past every failure (the good shape and the baseline arms complete),
# that each failed arm has its logs and a failure record naming what happened, that a hung arm is
# killed at --arm-timeout together with its grandchild, that the exit code is 4 and the report marks
# exactly those shapes failed, and that resume re-runs only the failed arms. Then a candidate that
# does not compile: exit 1 with the compiler's error line and the build log's path.
source "$ABH_TESTLIB"
mkdir repo
git -C repo init -q -b main
cat >repo/abharness.json <<'JSON'
{ "schema_version": 1,
  "plugins": { "cpu": {
    "argv": ["c++", "-O1", "-std=c++17", "-shared", "-fPIC", "-I${ABHARNESS_INCLUDE}",
             "plugin.cpp", "-o", "libfaulty.so"],
    "artifact": "libfaulty.so", "env": {}, "timeout_s": 120 } } }
JSON
# A tiny vector-add plugin. Param "fault" selects how the candidate misbehaves; the baseline
# (faults.hpp: kFaulty = false) ignores it.
cat >repo/plugin.cpp <<'CPP'
#include <abharness/plugin.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "faults.hpp"

struct abh_problem {
  std::string fault, pidfile;
  std::vector<float> x, y, out;
};

namespace {
int create(const char* params, abh_problem** out, char* err, size_t len) {
  auto j = nlohmann::json::parse(params, nullptr, false);
  if (!j.is_object() || !j.contains("n") || !j["n"].is_number_integer()) {
    std::snprintf(err, len, "param 'n' must be an integer");
    return ABH_ERR_INVALID_PARAMS;
  }
  auto p = std::make_unique<abh_problem>();
  if (kFaulty) p->fault = j.value("fault", std::string());
  p->pidfile = j.value("pidfile", std::string());
  size_t n = j["n"].get<size_t>();
  p->x.assign(n, 1.5f);
  p->y.assign(n, 2.0f);
  p->out.assign(n, 0.f);
  *out = p.release();
  return ABH_OK;
}
int enqueue(abh_problem* p, void*, char* err, size_t len) {
  if (p->fault == "abort") std::abort();
  if (p->fault == "segv") raise(SIGSEGV);
  if (p->fault == "error") {
    std::snprintf(err, len, "faulty: injected enqueue failure");
    return ABH_ERR_RUNTIME;
  }
  if (p->fault == "hang") {
    pid_t child = fork();
    if (child == 0) {
      for (;;) pause();  // the grandchild of the orchestrator: must not outlive the arm
    }
    if (FILE* f = std::fopen(p->pidfile.c_str(), "w")) {
      std::fprintf(f, "%d\n", int(child));
      std::fclose(f);
    }
    for (;;) pause();
  }
  for (size_t i = 0; i < p->x.size(); ++i) p->out[i] = p->x[i] + p->y[i];
  if (p->fault == "wrong") p->out[0] += 1.0f;
  return ABH_OK;
}
int verify(abh_problem* p, abh_verify_result* r, char*, size_t) {
  double worst = 0;
  for (size_t i = 0; i < p->out.size(); ++i) {
    double e = std::abs(double(p->out[i]) - 3.5) / 3.5;
    if (e > worst) worst = e;
  }
  r->max_rel_error = worst;
  r->tolerance = 1e-6;
  r->checked = p->out.size();
  std::snprintf(r->method, sizeof r->method, "exact: x + y = 3.5");
  return worst <= r->tolerance ? ABH_OK : ABH_ERR_WRONG_RESULT;
}
double flops(const abh_problem* p) { return double(p->x.size()); }
double min_bytes(const abh_problem* p) { return 12.0 * double(p->x.size()); }
int tactic_count(abh_problem*) { return 1; }
int tactic_key(abh_problem*, int i, char* buf, size_t len) {
  if (i != 0) return ABH_ERR_INVALID_PARAMS;
  std::snprintf(buf, len, "add");
  return ABH_OK;
}
int select_tactic(abh_problem*, const char* key, char* err, size_t len) {
  if (std::string(key) == "add") return ABH_OK;
  std::snprintf(err, len, "only tactic 'add'");
  return ABH_ERR_INVALID_PARAMS;
}
int library_versions(char* buf, size_t len) {
  std::snprintf(buf, len, "{}");
  return ABH_OK;
}
void destroy(abh_problem* p) { std::unique_ptr<abh_problem> owned(p); }
const abh_plugin_v1 kTable = {ABH_PLUGIN_ABI_VERSION, "faulty", ABH_DEVICE_CPU, create, enqueue,
                              verify, flops, min_bytes, tactic_count, tactic_key, select_tactic,
                              library_versions, destroy};
}  // namespace
extern "C" ABH_PLUGIN_EXPORT const abh_plugin_v1* abh_plugin_entry(uint32_t) { return &kTable; }
CPP
echo 'constexpr bool kFaulty = false;' >repo/faults.hpp
git_q -C repo add -A && git_q -C repo commit -qm "baseline: correct"
echo 'constexpr bool kFaulty = true;' >repo/faults.hpp
git_q -C repo commit -qam "candidate: faults on demand"
# A third revision that does not compile.
echo 'constexpr bool kFaulty = this_does_not_compile;' >repo/faults.hpp
git_q -C repo commit -qam "broken candidate"
git_q -C repo tag broken
git_q -C repo reset -q --hard HEAD~1

cat >grid.json <<JSON
{ "schema_version": 1, "shapes": [
  { "id": "good",  "params": { "n": 4096 } },
  { "id": "abort", "params": { "n": 4096, "fault": "abort" } },
  { "id": "segv",  "params": { "n": 4096, "fault": "segv" } },
  { "id": "error", "params": { "n": 4096, "fault": "error" } },
  { "id": "hang",  "params": { "n": 4096, "fault": "hang", "pidfile": "$T/grandchild.pid" } },
  { "id": "wrong", "params": { "n": 4096, "fault": "wrong" } } ] }
JSON
start=$(date +%s)
expect_rc 4 "$ABH" run --repo repo --baseline HEAD~1 --candidate HEAD --grid grid.json \
  --runs-root runs --run-id f "${FAST[@]}" --arm-timeout 5 --color never
echo "faulty sweep: $(($(date +%s) - start)) s"
R=runs/f
cat "$T/last.err"
grep -q "sweep incomplete: 5 arm(s) failed" "$T/last.err" || fail "incomplete message"

# The sweep went on: every baseline arm and the good shape's candidate arm have valid results.
for s in good abort segv error hang wrong; do
  for a in A1 A2; do [ -f $R/results/$s/$a.json ] || fail "missing baseline result $s/$a"; done
done
[ -f $R/results/good/B.json ] || fail "the good shape's candidate arm did not run"

# Each failed arm: no result, both logs, a failure record with the right reason.
reason() { jget $R/logs/$1/B.failure.json 'j["reason"]'; }
for s in abort segv error hang wrong; do
  [ ! -e $R/results/$s/B.json ] || fail "$s: a failed arm left a result"
  [ -f $R/logs/$s/B.out ] && [ -f $R/logs/$s/B.err ] || fail "$s: logs missing"
  [ -f $R/logs/$s/B.failure.json ] || fail "$s: no failure record"
  echo "$s: $(reason $s)"
  [ "$(jget $R/logs/$s/B.failure.json 'j["stderr"]')" = "logs/$s/B.err" ] || fail "$s: stderr path"
done
reason abort | grep -q "SIGABRT" || fail "abort reason: $(reason abort)"
reason segv | grep -q "SIGSEGV" || fail "segv reason: $(reason segv)"
reason error | grep -q "exit code 3" || fail "error reason: $(reason error)"
reason error | grep -q "injected enqueue failure" || fail "error reason lacks the plugin's message"
reason hang | grep -qi "timed out" || fail "hang reason: $(reason hang)"
reason wrong | grep -q "exit code 4" || fail "wrong reason: $(reason wrong)"
reason wrong | grep -q "wrong result" || fail "wrong reason: $(reason wrong)"
grep -q "wrong result" $R/logs/wrong/B.err || fail "the worker's log does not say wrong result"
# The hung arm was killed at its timeout, with the grandchild it forked.
hang_wall=$(jget $R/logs/hang/B.failure.json 'j["wall_s"]')
python3 -c "import sys; sys.exit(not (4.9 <= $hang_wall < 20))" || fail "hang wall time $hang_wall"
[ -s "$T/grandchild.pid" ] || fail "the hanging plugin did not record its grandchild"
gpid=$(cat "$T/grandchild.pid")
sleep 0.2
! kill -0 "$gpid" 2>/dev/null || { kill -KILL "$gpid"; fail "grandchild $gpid outlived the hung arm"; }

# The report marks exactly the five faulty shapes failed, the good one not.
python3 - $R/report.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def walk(x):
    if isinstance(x, dict):
        if "shape" in x and "verdict" in x: yield x
        for v in x.values(): yield from walk(v)
    elif isinstance(x, list):
        for v in x: yield from walk(v)
rows = {row["shape"]: row["verdict"] for row in walk(r)}
want = {"good": False, "abort": True, "segv": True, "error": True, "hang": True, "wrong": True}
for s, failed in want.items():
    if s not in rows: sys.exit(f"FAIL: report has no row for {s}: {rows}")
    if (rows[s] == "failed") != failed: sys.exit(f"FAIL: {s} verdict {rows[s]}")
print("report verdicts:", rows)
PY
grep -q "failed" $R/report.md || fail "report.md does not mark failed shapes"
expect_rc 4 "$ABH" verify $R

# Resume re-runs only the five failed arms (they fail again: the plugin is still faulty).
expect_rc 4 "$ABH" resume $R --quiet
grep -q "13 of 18 arms already valid" "$T/last.err" || fail "resume: $(cat "$T/last.err")"
pass "crash, signal, error, hang and wrong result each recorded; the sweep went on"

# A candidate that does not compile: exit 1, the compiler's error line and the log's path.
expect_rc 1 "$ABH" run --repo repo --baseline HEAD~1 --candidate broken --grid grid.json \
  --runs-root runs --run-id b "${FAST[@]}" --color never
cat "$T/last.err"
grep -q "this_does_not_compile" "$T/last.err" || fail "build failure message lacks the compiler error"
grep -q "error" "$T/last.err" || fail "build failure message lacks the error line"
grep -q "build.log" "$T/last.err" || fail "build failure message lacks the log path"
grep -q "the candidate variant: build of broken (source digest " "$T/last.err" \
  || fail "build failure message does not name the variant and its revision first"
[ ! -e runs/b/plan.json ] || fail "a plan was written although a variant did not build"
pass "a candidate that does not compile fails with its compiler error and log path"
