// The Python interpreter record of plans and results (model/interpreter.hpp): its JSON mapping,
// the fields that identify it, and how a change is named for a person.
#include <doctest/doctest.h>

#include <string>

#include "model/interpreter.hpp"
#include "system/error.hpp"
#include "test_support.hpp"

using namespace abh;

namespace {

Interpreter planned() {
  Interpreter p;
  p.requested = "python3";
  p.executable = "/opt/venv/bin/python3";
  p.real_path = "/usr/bin/python3.12";
  p.version = "3.12.3";
  p.sha256 = std::string(64, 'a');
  p.distributions = {"numpy==2.1.0", "torch==2.11.0", "triton==3.6.0"};
  p.distributions_sha256 = std::string(64, 'd');
  p.site_sha256 = std::string(64, 's');
  return p;
}

}  // namespace

TEST_CASE("interpreter: the JSON mapping keeps every field, the list only where there is one") {
  const Interpreter p = planned();
  CHECK(interpreter_from_json(to_json(p), "plan.json: python") == p);
  Interpreter arm = p;
  arm.distributions.clear();  // results carry the digest only
  const json j = to_json(arm);
  CHECK_FALSE(j.contains("distributions"));
  CHECK(interpreter_from_json(j, "result") == arm);
}

TEST_CASE("interpreter: a distribution that is not name==version is refused, naming the field") {
  json j = to_json(planned());
  j["distributions"] = json::array({"numpy==2.1.0", "torch"});
  CHECK(test::contains(test::error_of([&] { interpreter_from_json(j, "plan.json: python"); }),
                       "plan.json: python: field 'distributions'"));
  j.erase("distributions");
  j.erase("sha256");
  CHECK(test::contains(test::error_of([&] { interpreter_from_json(j, "plan.json: python"); }),
                       "'sha256'"));
}

TEST_CASE("interpreter: its identity is path, binary, version and distributions digest") {
  const Interpreter p = planned();
  Interpreter q = p;
  q.requested = "/opt/venv/bin/python3";  // asked for differently: the same interpreter
  q.distributions.clear();
  q.site_sha256 = std::string(64, 't');  // the import path's fingerprint moved: not an identity
  CHECK(identity_json(q) == identity_json(p));
  CHECK(describe_changes(p, q).empty());
  for (auto change : {+[](Interpreter& i) { i.executable = "/other/bin/python3"; },
                      +[](Interpreter& i) { i.real_path = "/usr/bin/python3.13"; },
                      +[](Interpreter& i) { i.version = "3.12.4"; },
                      +[](Interpreter& i) { i.sha256 = std::string(64, 'b'); },
                      +[](Interpreter& i) { i.distributions_sha256 = std::string(64, 'e'); }}) {
    Interpreter r = p;
    change(r);
    CHECK(identity_json(r) != identity_json(p));
    CHECK_FALSE(describe_changes(p, r).empty());
  }
}

TEST_CASE("interpreter: changes are named, distribution by distribution") {
  const Interpreter p = planned();
  Interpreter now = p;
  now.version = "3.12.4";
  now.distributions = {"numpy==2.1.0", "pandas==2.2.3", "torch==2.11.1"};
  now.distributions_sha256 = std::string(64, 'e');
  CHECK(
      describe_changes(p, now) ==
      "version 3.12.3 -> 3.12.4; torch 2.11.0 -> 2.11.1; triton 3.6.0 removed; pandas 2.2.3 added");
  // Without the lists (a result's record), the digests are named.
  Interpreter a = p, b = now;
  a.distributions.clear();
  b.distributions.clear();
  b.version = a.version;
  CHECK(describe_changes(a, b) == "distributions digest dddddddddddd -> eeeeeeeeeeee");
}
