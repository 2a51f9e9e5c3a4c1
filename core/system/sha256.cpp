#include "system/sha256.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <vector>

#include "system/error.hpp"

namespace abh {

void Sha256::Free::operator()(evp_md_ctx_st* ctx) const {
  EVP_MD_CTX_free(ctx);
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1)
    throw Error("OpenSSL: cannot initialise a SHA-256 digest");
}
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
Sha256::~Sha256() = default;

Sha256& Sha256::update(std::string_view bytes) {
  if (!ctx_) throw Error("SHA-256: update after hex()");
  if (EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) != 1)
    throw Error("OpenSSL: EVP_DigestUpdate failed");
  return *this;
}

Sha256& Sha256::field(std::string_view bytes) {
  update(std::to_string(bytes.size()));
  update(":");
  return update(bytes);
}

std::string Sha256::hex() {
  if (!ctx_) throw Error("SHA-256: hex() called twice");
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned len = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), md.data(), &len) != 1)
    throw Error("OpenSSL: EVP_DigestFinal_ex failed");
  ctx_.reset();
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * len);
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(digits[md[i] >> 4]);
    out.push_back(digits[md[i] & 15]);
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  return Sha256().update(bytes).hex();
}

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path.string() + " to hash it");
  Sha256 h;
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    if (in.gcount() > 0) h.update(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) throw Error("read error while hashing " + path.string());
  return h.hex();
}

std::string sha256_tree(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error("cannot hash " + dir.string() + ": not a directory");
  std::vector<std::pair<std::string, fs::path>> entries;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::end(it); ++it)
    if (!it->is_directory() || it->is_symlink())
      entries.emplace_back(it->path().lexically_relative(dir).generic_string(), it->path());
  std::sort(entries.begin(), entries.end());
  Sha256 h;
  h.field("abharness-tree-v1");
  for (const auto& [rel, path] : entries) {
    const fs::file_status st = fs::symlink_status(path);
    if (fs::is_symlink(st))
      h.field("link").field(rel).field(fs::read_symlink(path).string());
    else if (fs::is_regular_file(st))
      h.field("file").field(rel).field(sha256_file(path));
    else
      throw Error("cannot hash " + path.string() + ": neither a regular file nor a symbolic link");
  }
  return h.hex();
}

}  // namespace abh
