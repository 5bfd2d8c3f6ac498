#include "inspect_report.hpp"

#include <cmath>
#include <cstdint>
#include <sys/stat.h>

#include <algorithm>
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

json model_report(const std::string& file, NetParameter* net) {
  json layers = json::array();
  std::int64_t blob_count = 0, parameters = 0;
  for (const ModelLayer& layer : model_layers(net)) {
    json blobs = json::array();
    for (const BlobProto& proto : *layer.blobs) {
      const bool is_double = proto.double_data_size() > 0;
      BlobProtoShape shape;
      try {
        shape = blob_proto_shape(proto);  // FromProto's shape and checks, no values copied
      } catch (const Error& e) {
        throw Error(file + ": layer '" + layer.name + "' blob " + std::to_string(blobs.size()) + ": " + e.what());
      }
      const std::int64_t count = shape.count;
      blobs.push_back({{"shape", shape.shape}, {"count", count}, {"dtype", is_double ? "float64" : "float32"}});
      ++blob_count;
      parameters += count;
    }
    layers.push_back({{"name", layer.name}, {"type", layer.type}, {"layout", layer.layout}, {"blobs", blobs}});
  }
  return {{"schema_version", kInspectSchemaVersion}, {"file", file},      {"kind", "caffemodel"},
          {"name", net->name()},                     {"layers", layers}, {"blob_count", blob_count},
          {"parameter_count", parameters}};
}

std::string model_text(const json& r) {
  std::ostringstream s;
  const json& layers = r["layers"];
  s << r["file"].get<std::string>() << "\n  Caffe model (binary NetParameter)"
    << (r["name"].get<std::string>().empty() ? "" : " '" + r["name"].get<std::string>() + "'") << ": "
    << layers.size() << " layers, " << r["blob_count"].get<std::int64_t>() << " blobs, "
    << r["parameter_count"].get<std::int64_t>() << " parameters\n";
  std::size_t name_width = 4, type_width = 4;
  for (const json& l : layers) {
    name_width = std::max(name_width, l["name"].get<std::string>().size());
    type_width = std::max(type_width, l["type"].get<std::string>().size());
  }
  for (const json& l : layers) {
    std::string name = l["name"].get<std::string>(), type = l["type"].get<std::string>();
    s << "  " << name << std::string(name_width - name.size() + 2, ' ') << type;
    std::string blobs;
    for (const json& b : l["blobs"]) {
      std::string shape;
      for (const json& d : b["shape"]) shape += (shape.empty() ? "" : ", ") + std::to_string(d.get<long long>());
      blobs += " (" + shape + (b["shape"].size() == 1 ? ",)" : ")") + (b["dtype"] == "float64" ? " double" : "");
    }
    if (!blobs.empty()) s << std::string(type_width - type.size() + 1, ' ') << blobs;
    if (l["layout"] != "layer") s << "  [" << l["layout"].get<std::string>() << "]";
    s << "\n";
  }
  return s.str();
}

json inspect_file(const std::string& file) {
  // Only a regular file is tried as a model file first: a pipe, FIFO or device is read once,
  // as a BlobProto (a second open of a FIFO would wait for a writer that never comes).
  struct stat st {};
  if (file != "-" && ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    NetParameter net;
    if (ReadModelFile(file, &net)) return model_report(file, &net);
  }
  BlobProto proto;
  // Binary or text by the one rule of blobrt/io.hpp, as Python's blobrt.load.
  ReadBlobProtoFromFileOrDie(file == "-" ? std::string("/dev/stdin") : file, &proto);
  return inspect_report(file, proto);
}

std::string inspect_file_text(const json& report) {
  return report.contains("kind") && report["kind"] == "caffemodel" ? model_text(report) : inspect_text(report);
}

}  // namespace blobrt::tools
