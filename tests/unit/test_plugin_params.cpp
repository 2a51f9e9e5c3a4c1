// abh_plugin::Params (include/abharness/plugin_params.hpp): the typed reader of the parameters a
// plugin's create() receives. Each refusal names the shape (by its parameters) and the field.
#include <doctest/doctest.h>
#include <abharness/plugin_support.hpp>

#include <string>

using abh_plugin::ParamError;
using abh_plugin::Params;

namespace {

// The message of the ParamError `f` throws, or "" when it throws none.
template <typename F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const ParamError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("plugin params: integers, numbers, strings and booleans, required and optional") {
  const Params p(R"( {"m": 128, "n":-3, "scale": 2.5e-1, "dtype": "bf16", "fused": true,
                      "tiles": [1, {"a": "]"}], "note": null} )");
  CHECK(p.required_int("m") == 128);
  CHECK(p.required_int("m", 1, 128) == 128);
  CHECK(p.required_int("n") == -3);
  CHECK(p.optional_int("seed", 7) == 7);
  CHECK(p.optional_int("m", 7) == 128);
  CHECK(p.required_number("scale") == 0.25);
  CHECK(p.required_number("m") == 128.0);  // an integer is a number too
  CHECK(p.optional_number("alpha", 1.5) == 1.5);
  CHECK(p.required_string("dtype") == "bf16");
  CHECK(p.optional_string("layout", "TN") == "TN");
  CHECK(p.optional_bool("fused", false));
  CHECK_FALSE(p.optional_bool("capturable", false));
  CHECK(p.raw("tiles") == R"([1, {"a": "]"}])");
  CHECK(p.has("note"));
  CHECK_FALSE(p.has("k"));
  CHECK(p.keys() == std::vector<std::string>{"m", "n", "scale", "dtype", "fused", "tiles", "note"});
}

TEST_CASE("plugin params: string escapes decode, the empty object is fine") {
  const Params p(R"({"s": "a\"b\\c\/d\n\u00b5\ud83d\ude00"})");
  CHECK(p.required_string("s") == "a\"b\\c/d\n\u00b5\U0001F600");
  CHECK(Params("{}").keys().empty());
  CHECK(Params(" { } ").shape() == "{}");
}

TEST_CASE("plugin params: each refusal names the shape and the field") {
  const Params p(R"({"m":8,"k":0,"dtype":"fp8","seed":1.5,"big":99999999999999999999})");
  const std::string shape =
      R"(shape {"m":8,"k":0,"dtype":"fp8","seed":1.5,"big":99999999999999999999})";

  std::string e = refusal([&] { p.required_int("n", 1, 65536); });
  CHECK(has(e, shape));
  CHECK(has(e, "param 'n' is missing"));

  e = refusal([&] { p.required_int("k", 1, 65536); });
  CHECK(has(e, shape));
  CHECK(has(e, "param 'k' must be an integer in [1, 65536], got 0"));

  e = refusal([&] { p.optional_int("seed", 1); });  // 1.5 is not an integer
  CHECK(has(e, "param 'seed' must be an integer"));
  CHECK(has(e, "got 1.5"));
  CHECK(has(refusal([&] { p.required_int("big"); }), "param 'big' must be an integer"));

  e = refusal([&] { p.required_int("dtype"); });
  CHECK(has(e, "param 'dtype' must be an integer"));
  CHECK(has(e, "got \"fp8\""));

  e = refusal([&] { p.required_string("m"); });
  CHECK(has(e, "param 'm' must be a string, got 8"));
  CHECK(has(refusal([&] { p.optional_bool("m", true); }), "param 'm' must be true or false"));
  CHECK(has(refusal([&] { p.required_number("m", 10, 20); }), "param 'm' must be a number in"));

  e = refusal([&] { p.only({"m", "k", "dtype", "seed"}); });
  CHECK(has(e, shape));
  CHECK(has(e, "unknown param 'big'"));
  CHECK(has(e, "this plugin reads m, k, dtype, seed"));
  CHECK(refusal([&] { p.only({"m", "k", "dtype", "seed", "big"}); }).empty());

  e = refusal([&] { p.fail("k", "must be a multiple of 16, got 0"); });
  CHECK(e == shape + ": param 'k' must be a multiple of 16, got 0");
}

TEST_CASE("plugin params: what is not a JSON object is refused, never half read") {
  for (const char* bad :
       {"", "[1,2]", "{\"m\":1", "{\"m\":1,}", "{\"m\" 1}", "{m:1}", "{\"m\":1} x", "{\"m\":01x}",
        "{\"m\":\"a}", "{\"m\":[1,2}", "{\"m\":1,\"m\":2}", "{\"m\":tru}", "{\"s\":\"\\x\"}"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(Params{bad}, ParamError);
  }
  CHECK_THROWS_AS(Params{nullptr}, ParamError);
  CHECK(has(refusal([] { Params("{\"m\":1,\"m\":2}"); }), "has the key 'm' twice"));
}
