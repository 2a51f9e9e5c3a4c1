// SHA-256 through OpenSSL 3 EVP (the SHA256_* functions are deprecated). Every identity in
// abharness — sources, binaries, payloads, result sets — is one of these digests, hex-encoded.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace abh {

class Sha256 {
 public:
  Sha256();
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;
  ~Sha256();

  Sha256& update(std::string_view bytes);
  // Length-prefixed field: keeps ("ab","c") and ("a","bc") apart when hashing several fields.
  Sha256& field(std::string_view bytes);
  std::string hex();  // finalizes; the object may not be updated afterwards

 private:
  struct Free {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, Free> ctx_;
};

std::string sha256_hex(std::string_view bytes);
std::string sha256_file(const std::filesystem::path& path);
// A digest of a directory tree: every regular file's path (relative, '/'-separated) and content
// SHA-256, and every symbolic link's path and target (never followed), in path order. Throws on
// any other kind of file.
std::string sha256_tree(const std::filesystem::path& dir);

}  // namespace abh
