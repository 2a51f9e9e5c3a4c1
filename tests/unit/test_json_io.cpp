// JSON in and out of files: bounded parsing of hostile input, typed field access whose errors name
// the file and the field, range checks before narrowing, atomic writes and the canonical text.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "system/error.hpp"
#include "system/json_io.hpp"
#include "test_support.hpp"

using namespace abh;
namespace fs = std::filesystem;

using test::error_of;

TEST_CASE("json_io: parsing is bounded in size and depth and names the origin") {
  CHECK(parse_json(R"({"a": [1, 2]})", "x.json") == json{{"a", {1, 2}}});
  const std::string bad = error_of([] { parse_json("{", "x.json"); });
  CHECK(bad.rfind("x.json: not valid JSON (", 0) == 0);
  CHECK(bad.find("; correct the file there") != std::string::npos);
  CHECK(error_of([] {
          parse_json(std::string(11, ' '), "x.json", JsonLimits{10, 8});
        }) ==
        std::string("x.json: 11 bytes is more than the limit of 10") +
            ": check that this is the file meant, or split a grid this large into several runs");
  const std::string deep = std::string(5, '[') + std::string(5, ']');
  CHECK_NOTHROW(parse_json(deep, "x.json", JsonLimits{1024, 6}));
  CHECK(error_of([&] {
          parse_json(deep, "x.json", JsonLimits{1024, 4});
        }) ==
        std::string("x.json: JSON nested deeper than 4 levels") +
            ": check that this is the file meant, or split a grid this large into several runs");
  // Hostile nesting far beyond any stack is refused, not recursed into.
  const std::string bomb = std::string(1 << 19, '[') + std::string(1 << 19, ']');
  CHECK(error_of([&] {
          parse_json(bomb, "x.json", JsonLimits{2u << 20, 64});
        }) ==
        std::string("x.json: JSON nested deeper than 64 levels") +
            ": check that this is the file meant, or split a grid this large into several runs");
}

TEST_CASE("json_io: files are read within a limit and a missing one is named") {
  test::TempDir tmp;
  const fs::path p = tmp.path() / "a.json";
  CHECK(error_of([&] { read_json_file(p); }).rfind("cannot read " + p.string() + ": ", 0) == 0);
  test::write(p, R"({"k": "v"})");
  CHECK(read_json_file(p)["k"] == "v");
  CHECK(error_of([&] { read_text_file(p, 4); }) ==
        p.string() + ": 10 bytes is more than the limit of 4" +
            ": check that this is the file meant, or split a grid this large into several runs");
  test::write(p, "[1,");
  CHECK(error_of([&] { read_json_file(p); }).rfind(p.string() + ": not valid JSON", 0) == 0);
  CHECK(error_of([&] { read_json_file(tmp.path()); }) ==
        "cannot read " + tmp.path().string() + ": it is a directory; give a file");
}

TEST_CASE("json_io: a pipe is read to its end, within the limit (--grid <(make_grid))") {
  test::TempDir tmp;
  const fs::path fifo = tmp.path() / "grid";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto feed = [&](std::string text) {
    return std::thread([&fifo, text] {
      std::ofstream out(fifo, std::ios::binary);
      out << text;
    });
  };
  std::thread writer = feed(R"({"k": "v"})");
  CHECK(read_json_file(fifo)["k"] == "v");
  writer.join();
  writer = feed(std::string(100000, ' '));
  CHECK(error_of([&] { read_text_file(fifo, 70000); }) ==
        fifo.string() + ": more than the limit of 70000 bytes" +
            ": check that this is the file meant, or split a grid this large into several runs");
  writer.join();
}

TEST_CASE("json_io: typed fields name the file, the field, what was expected and found") {
  const json j = {{"s", "text"}, {"i", 5},          {"d", 2.5},
                  {"b", true},   {"o", {{"x", 1}}}, {"n", nullptr}};
  CHECK(field<std::string>(j, "s", "f.json") == "text");
  CHECK(field<int>(j, "i", "f.json") == 5);
  CHECK(field<double>(j, "i", "f.json") == 5.0);  // an integer is a number
  CHECK(field<bool>(j, "b", "f.json"));
  CHECK(error_of([&] { field<int>(j, "d", "f.json"); }) ==
        "f.json: field 'd': expected an integer, found number 2.5");
  CHECK(error_of([&] { field<std::string>(j, "i", "f.json"); }) ==
        "f.json: field 'i': expected a string, found integer 5");
  CHECK(error_of([&] { field<bool>(j, "s", "f.json"); }) ==
        "f.json: field 's': expected true or false, found string \"text\"");
  CHECK(error_of([&] { field<int>(j, "missing", "f.json"); }) == "f.json: missing field 'missing'");
  CHECK(error_of([&] { field<int>(json::array(), "i", "f.json"); }) ==
        "f.json: expected a JSON object, found array []");
  CHECK(object_field(j, "o", "f.json") == json{{"x", 1}});
  CHECK(error_of([&] { object_field(j, "s", "f.json"); }) ==
        "f.json: field 's': expected an object, found string \"text\"");
}

TEST_CASE("json_io: integers are range-checked before narrowing") {
  const json j = {{"big", 1e30}, {"huge", std::uint64_t{1} << 40}, {"neg", -1}, {"max", INT32_MAX}};
  CHECK(field<int>(j, "max", "f.json") == INT32_MAX);
  CHECK(error_of([&] { field<int>(j, "huge", "f.json"); }) ==
        "f.json: field 'huge': 1099511627776 is out of range");
  CHECK(error_of([&] { field<std::uint64_t>(j, "neg", "f.json"); }) ==
        "f.json: field 'neg': -1 is out of range");
  CHECK(field<std::int64_t>(j, "huge", "f.json") == std::int64_t{1} << 40);
  // 1e30 is a floating-point number, never an integer.
  CHECK(error_of([&] { field<std::int64_t>(j, "big", "f.json"); }).find("expected an integer") !=
        std::string::npos);
}

TEST_CASE("json_io: optional fields fall back when absent or null, never when ill-typed") {
  const json j = {{"n", nullptr}, {"s", 3}};
  CHECK(field_or<std::string>(j, "absent", "f.json", "dflt") == "dflt");
  CHECK(field_or<int>(j, "n", "f.json", 7) == 7);
  CHECK(error_of([&] { field_or<std::string>(j, "s", "f.json", ""); }) ==
        "f.json: field 's': expected a string, found integer 3");
}

TEST_CASE("json_io: an atomic write replaces the file whole and leaves no temp file") {
  test::TempDir tmp;
  const fs::path p = tmp.path() / "sub" / "dir" / "out.json";
  write_json_atomic(p, json{{"a", 1}});
  CHECK(test::slurp(p) == "{\n  \"a\": 1\n}\n");
  write_file_atomic(p, "second");
  CHECK(test::slurp(p) == "second");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(p.parent_path())) entries += e.exists() ? 1 : 0;
  CHECK(entries == 1);
  // A path whose directory cannot be made is an error, not a silent loss.
  test::write(tmp.path() / "file", "x");
  CHECK(error_of([&] { write_file_atomic(tmp.path() / "file" / "out.json", "y"); })
            .rfind(
                "cannot create the directory " + (tmp.path() / "file").string() + " for out.json: ",
                0) == 0);
}

TEST_CASE("json_io: the canonical text sorts keys and has no whitespace") {
  json j = json::parse(R"({ "b": [1, {"d": 1, "c": 2}], "a": "x" })");
  CHECK(canonical(j) == R"({"a":"x","b":[1,{"c":2,"d":1}]})");
}

TEST_CASE("json_io: string_array reads strings and names the field or item that is not one") {
  const json j = json::parse(R"({"argv": ["cc", "-O2"], "empty": [], "mixed": ["a", 5],
    "text": "cc", "deep": [{"a": "0123456789012345678901234567890123456789"}]})");
  CHECK(string_array(j, "argv", "m.json") == std::vector<std::string>{"cc", "-O2"});
  CHECK(string_array(j, "empty", "m.json").empty());
  CHECK(error_of([&] { string_array(j, "missing", "m.json"); }) ==
        "m.json: field 'missing': expected an array of strings");
  CHECK(error_of([&] { string_array(j, "text", "m.json"); }) ==
        "m.json: field 'text': expected an array of strings");
  CHECK(error_of([&] { string_array(j, "mixed", "m.json"); }) ==
        "m.json: field 'mixed[1]': expected a string, found 5");
  // A large item is cut short in the message.
  CHECK(error_of([&] { string_array(j, "deep", "m.json"); }) ==
        "m.json: field 'deep[0]': expected a string, found "
        "{\"a\":\"0123456789012345678901234567890...");
  CHECK(error_of([&] { string_array(json::array(), "argv", "m.json"); }) ==
        "m.json: expected a JSON object, found array []");
}

TEST_CASE("json_io: array_field refuses a missing field and one that is not an array") {
  const json j = json::parse(R"({"list": [1, 2], "obj": {"k": 1}})");
  CHECK(array_field(j, "list", "p.json").size() == 2);
  CHECK(error_of([&] { array_field(j, "tasks", "p.json"); }) == "p.json: missing field 'tasks'");
  CHECK(error_of([&] { array_field(j, "obj", "p.json"); }) ==
        "p.json: field 'obj': expected an array");
}

TEST_CASE("json_io: schema_version accepts the expected version and says how to fix another") {
  CHECK(schema_version(json{{"schema_version", 1}}, "plan.json", 1, "plan") == 1);
  CHECK(error_of([] {
          schema_version(json{{"schema_version", 2}}, "plan.json", 1, "plan", "re-run the sweep");
        }) ==
        "plan.json: field 'schema_version': found 2, this abharness reads plan schema 1: re-run "
        "the sweep");
  CHECK(error_of([] {
          schema_version(json{{"schema_version", 0}}, "g.json", 1, "grid");
        }) == "g.json: field 'schema_version': found 0, this abharness reads grid schema 1");
  CHECK(error_of([] {
          schema_version(json{{"schema_version", "1"}}, "g.json", 1, "grid");
        }) == "g.json: field 'schema_version': expected an integer, found string \"1\"");
  CHECK(error_of([] { schema_version(json::object(), "g.json", 1, "grid"); }) ==
        "g.json: missing field 'schema_version'");
}

TEST_CASE("json_io: an atomic write onto a directory is refused, leaving no temp file") {
  test::TempDir tmp;
  const fs::path dir = tmp.path() / "out";
  fs::create_directories(dir);
  CHECK(error_of([&] { write_file_atomic(dir, "x"); }) ==
        "cannot write " + dir.string() + ": it is a directory; name a file");
  CHECK_THROWS_AS(write_file_atomic(dir, "x"), UsageError);
  for (const auto& e : fs::directory_iterator(tmp.path())) CHECK(e.path() == dir);
}
