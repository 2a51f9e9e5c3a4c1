// SHA-256 through OpenSSL: the standard test vectors, the length-prefixed fields that keep
// ("ab", "c") and ("a", "bc") apart, file and tree hashing, and misuse after finalizing.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "system/error.hpp"
#include "system/sha256.hpp"
#include "test_support.hpp"

using namespace abh;

TEST_CASE("sha256: the FIPS 180-2 test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Updates in pieces equal one update of the whole.
  CHECK(Sha256().update("a").update("bc").hex() == sha256_hex("abc"));
}

TEST_CASE("sha256: fields are length-prefixed so that their boundaries count") {
  CHECK(Sha256().field("ab").field("c").hex() != Sha256().field("a").field("bc").hex());
  CHECK(Sha256().field("ab").hex() == sha256_hex("2:ab"));
  CHECK(Sha256().field("").field("x").hex() == sha256_hex("0:1:x"));
}

TEST_CASE("sha256: a file hashes to the digest of its bytes") {
  test::TempDir tmp;
  std::string big(200000, '\0');  // more than one read buffer, with NUL bytes
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  test::write(tmp.path() / "f", big);
  CHECK(sha256_file(tmp.path() / "f") == sha256_hex(big));
  CHECK(test::error_of([&] { sha256_file(tmp.path() / "missing"); }) ==
        "cannot read " + (tmp.path() / "missing").string() + " to hash it");
}

TEST_CASE("sha256: a finalized digest refuses more input") {
  Sha256 h;
  h.update("x");
  h.hex();
  CHECK(test::error_of([&] { h.update("y"); }) == "SHA-256: update after hex()");
  CHECK(test::error_of([&] { h.hex(); }) == "SHA-256: hex() called twice");
}

TEST_CASE("sha256: a tree digest covers every path and content, links by target") {
  test::TempDir tmp;
  const auto dir = tmp.path() / "src";
  test::write(dir / "pkg" / "mod.py", "x = 1\n");
  test::write(dir / "README", "r");
  std::filesystem::create_symlink("pkg/mod.py", dir / "link");
  const std::string d0 = sha256_tree(dir);
  CHECK(d0.size() == 64);
  CHECK(sha256_tree(dir) == d0);  // stable

  test::write(dir / "pkg" / "mod.py", "x = 2\n");
  const std::string d1 = sha256_tree(dir);
  CHECK(d1 != d0);
  std::filesystem::rename(dir / "README", dir / "README.md");
  const std::string d2 = sha256_tree(dir);
  CHECK(d2 != d1);
  std::filesystem::remove(dir / "link");
  std::filesystem::create_symlink("README.md", dir / "link");  // another target
  const std::string d3 = sha256_tree(dir);
  CHECK(d3 != d2);
  std::filesystem::create_directories(dir / "pkg" / "__pycache__");  // an empty directory: no file
  CHECK(sha256_tree(dir) == d3);
  test::write(dir / "pkg" / "__pycache__" / "mod.cpython-312.pyc", "bytecode");
  CHECK(sha256_tree(dir) != d3);

  CHECK(test::contains(test::error_of([&] { sha256_tree(dir / "README.md"); }), "not a directory"));
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK(test::contains(test::error_of([&] { sha256_tree(dir); }),
                       "neither a regular file nor a symbolic link"));
}
