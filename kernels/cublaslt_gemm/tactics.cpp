// Phase 5 of a cuBLASLt GEMM problem (problem.hpp): its tactics, the heuristic's candidates (up to
// 16, for the plugin's 32 MiB workspace), and the keys that name them. A key is
// "cublasLt<version>:<hex of the 64-byte cublasLtMatmulAlgo_t>": an algorithm is valid for one
// cuBLASLt version only, so a key made for another is refused, and a key's algorithm is checked
// again with cublasLtMatmulAlgoCheck for the problem at hand.
#include <string>

#include "problem.hpp"

namespace cublaslt_gemm {
namespace {

constexpr int kMaxCandidates = 16;

std::string lt_version_tag() {
  return "cublasLt" + std::to_string(cublasLtGetVersion());
}

std::string to_hex(const cublasLtMatmulAlgo_t& a) {
  static const char* digits = "0123456789abcdef";
  const auto* b = reinterpret_cast<const unsigned char*>(&a);
  std::string s;
  for (std::size_t i = 0; i < sizeof a; ++i) {
    s.push_back(digits[b[i] >> 4]);
    s.push_back(digits[b[i] & 15]);
  }
  return s;
}

// The algorithm a key names, refusing a key that is not one or was made for another cuBLASLt.
cublasLtMatmulAlgo_t decode_key(const std::string& k) {
  const std::string tag = lt_version_tag() + ":";
  const std::size_t hex_len = 2 * sizeof(cublasLtMatmulAlgo_t);
  if (k.rfind("cublasLt", 0) != 0 || k.find(':') == std::string::npos)
    throw Failure(ABH_ERR_INVALID_PARAMS, "'" + k + "' is not a cuBLASLt tactic key (expected \"" +
                                              tag + "<" + std::to_string(hex_len) +
                                              " hex digits>\"): use --tactic auto");
  if (k.rfind(tag, 0) != 0)
    throw Failure(ABH_ERR_INVALID_PARAMS, "tactic key was made for " + k.substr(0, k.find(':')) +
                                              " but this is " + lt_version_tag() +
                                              ": algorithms are valid for one cuBLASLt version "
                                              "only; re-tune (--tactic auto)");
  const std::string hex = k.substr(tag.size());
  if (hex.size() != hex_len || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw Failure(ABH_ERR_INVALID_PARAMS, "tactic key '" + k + "' is damaged: expected " +
                                              std::to_string(hex_len) + " lowercase hex digits");
  cublasLtMatmulAlgo_t algo{};
  auto* b = reinterpret_cast<unsigned char*>(&algo);
  for (std::size_t i = 0; i < sizeof algo; ++i)
    b[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return algo;
}

}  // namespace

void find_candidates(abh_problem& p, const GpuInfo& gpu) {
  cublasLtMatmulPreference_t pref = nullptr;
  lt_ok(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  p.pref.reset(pref);
  const uint64_t ws = kWorkspaceBytes;
  lt_ok(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                             sizeof ws),
        "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  cublasLtMatmulHeuristicResult_t results[kMaxCandidates] = {};
  int returned = 0;
  cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(p.lt.get(), p.desc.get(), p.la.get(), p.lb.get(), p.ld.get(),
                                     p.ld.get(), pref, kMaxCandidates, results, &returned);
  if (st != CUBLAS_STATUS_SUCCESS || returned == 0)
    throw Failure(
        ABH_ERR_UNSUPPORTED,
        "cuBLASLt " + std::to_string(cublasLtGetVersion()) + " has no algorithm for " +
            p.precision + " " + p.layout + " m=" + std::to_string(p.m) +
            " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) + " on " + gpu.name + " (" +
            (st != CUBLAS_STATUS_SUCCESS ? cublasLtGetStatusString(st) : "no candidate returned") +
            ")");
  for (int i = 0; i < returned; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS) p.candidates.push_back(results[i].algo);
  if (p.candidates.empty())
    throw Failure(ABH_ERR_UNSUPPORTED, "cuBLASLt returned no usable candidate for this problem");
  p.algo = p.candidates.front();
}

std::string tactic_key_of(const cublasLtMatmulAlgo_t& algo) {
  return lt_version_tag() + ":" + to_hex(algo);
}

cublasLtMatmulAlgo_t algo_of_key(const abh_problem& p, const std::string& key) {
  cublasLtMatmulAlgo_t algo = decode_key(key);
  cublasLtMatmulHeuristicResult_t check{};
  cublasStatus_t st = cublasLtMatmulAlgoCheck(p.lt.get(), p.desc.get(), p.la.get(), p.lb.get(),
                                              p.ld.get(), p.ld.get(), &algo, &check);
  if (st != CUBLAS_STATUS_SUCCESS)
    throw Failure(ABH_ERR_INVALID_PARAMS,
                  std::string("cublasLtMatmulAlgoCheck rejects this tactic for ") + p.precision +
                      " m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) +
                      " k=" + std::to_string(p.k) + " (" + cublasLtGetStatusString(st) +
                      "): it was tuned for another problem or GPU; re-tune (--tactic auto)");
  if (check.workspaceSize > kWorkspaceBytes)
    throw Failure(ABH_ERR_INVALID_PARAMS, "tactic needs " + std::to_string(check.workspaceSize) +
                                              " bytes of workspace, more than the plugin's " +
                                              std::to_string(kWorkspaceBytes));
  return algo;
}

}  // namespace cublaslt_gemm
