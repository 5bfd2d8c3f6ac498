#include "bench_common.hpp"

namespace blobrt::bench {
namespace {
bool smoke_mode = false;
}

bool smoke() { return smoke_mode; }
void set_smoke(bool on) { smoke_mode = on; }

std::vector<std::int64_t> sizes() {
  if (smoke_mode) return {1, 1 << 12};
  std::vector<std::int64_t> n;
  for (int p = 0; p <= 26; p += 2) n.push_back(std::int64_t(1) << p);
  return n;
}

std::int64_t bytes_moved(Pattern p, std::int64_t n, std::int64_t element) {
  switch (p) {
    case Pattern::kFill: return n * element;       // write x
    case Pattern::kCopy: return 2 * n * element;   // read x, write y
    case Pattern::kSum: return n * element;        // read x
    case Pattern::kDot: return 2 * n * element;    // read x, y
    case Pattern::kTriad: return 3 * n * element;  // read x, y, write y
    case Pattern::kScale: return 2 * n * element;  // read x, write x
  }
  return 0;
}

const char* to_string(Pattern p) {
  switch (p) {
    case Pattern::kFill: return "fill";
    case Pattern::kCopy: return "copy";
    case Pattern::kSum: return "sum";
    case Pattern::kDot: return "dot";
    case Pattern::kTriad: return "triad";
    case Pattern::kScale: return "scale";
  }
  return "?";
}

std::string name(const std::string& group, const std::string& subject, const std::string& op,
                 const std::string& dtype, std::int64_t n) {
  return group + "/" + subject + "/" + op + "/" + dtype + "/" + std::to_string(n);
}

}  // namespace blobrt::bench
