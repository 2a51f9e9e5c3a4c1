#include "system/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <fstream>

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

}  // namespace abh
