#include "inspect_report.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>

#include "blobrt/blob.hpp"
#include "number_format.hpp"

namespace blobrt::tools {
namespace {

template <typename T>
json stats(const T* values, std::int64_t n) {
  double min = INFINITY, max = -INFINITY, sum = 0, asum = 0, sumsq = 0;
  std::int64_t finite = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) continue;
    ++finite;
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
    asum += std::fabs(v);
    sumsq += v * v;
  }
  json none = nullptr;
  return {{"min", finite ? json(min) : none},
          {"max", finite ? json(max) : none},
          {"mean", finite ? json(sum / static_cast<double>(finite)) : none},
          {"asum", asum},
          {"sumsq", sumsq},
          {"non_finite", n - finite}};
}

template <typename T>
json report(const std::string& file, const BlobProto& proto, bool has_diff) {
  Blob<T> blob;
  blob.FromProto(proto, true);
  const std::int64_t n = blob.count();
  return {{"schema_version", kInspectSchemaVersion},
          {"file", file},
          {"shape", blob.shape()},
          {"count", n},
          {"dtype", sizeof(T) == 8 ? "float64" : "float32"},
          {"legacy_4d", proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width()},
          {"has_diff", has_diff},
          {"data", n ? stats(blob.cpu_data(), n) : json(nullptr)},
          {"diff", has_diff && n ? stats(blob.cpu_diff(), n) : json(nullptr)}};
}

std::string number_text(const json& v) { return v.is_null() ? "-" : exact_number(v.get<double>()); }

void stats_text(std::ostringstream& s, const char* label, const json& st) {
  if (st.is_null()) {
    s << "  " << label << ": (none)\n";
    return;
  }
  s << "  " << label << ": min " << number_text(st["min"]) << ", max " << number_text(st["max"]) << ", mean "
    << number_text(st["mean"]) << ", asum " << number_text(st["asum"]) << ", sumsq " << number_text(st["sumsq"]);
  if (st["non_finite"].get<std::int64_t>()) s << ", " << st["non_finite"].get<std::int64_t>() << " non-finite";
  s << "\n";
}

}  // namespace

json inspect_report(const std::string& file, const BlobProto& proto) {
  try {
    if (proto.double_data_size() > 0 || proto.double_diff_size() > 0) {
      return report<double>(file, proto, proto.double_diff_size() > 0 || proto.diff_size() > 0);
    }
    return report<float>(file, proto, proto.diff_size() > 0);
  } catch (const Error& e) {
    throw Error(file + ": " + e.what());  // shape/data mismatches name the file too
  }
}

std::string inspect_text(const json& r) {
  std::ostringstream s;
  std::string shape;
  for (const json& d : r["shape"]) shape += std::to_string(d.get<long long>()) + " ";
  s << r["file"].get<std::string>() << "\n  shape " << shape << "(" << r["count"].get<std::int64_t>()
    << "), precision " << (r["dtype"] == "float64" ? "double (double_data)" : "float (data)")
    << (r["legacy_4d"].get<bool>() ? ", legacy 4-D num/channels/height/width" : "") << "\n";
  stats_text(s, "data", r["data"]);
  stats_text(s, "diff", r["diff"]);
  return s.str();
}

}  // namespace blobrt::tools
