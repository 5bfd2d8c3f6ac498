// `blobrt inspect`: a BlobProto file's shape, precision and summary statistics, as text or
// as JSON (docs/blobrt-inspect.schema.json). Numbers read back exactly (number_format.hpp).
#ifndef BLOBRT_TOOLS_INSPECT_REPORT_HPP
#define BLOBRT_TOOLS_INSPECT_REPORT_HPP

#include <string>

#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"
#include "blobrt/model_file.hpp"
#include "blobrt.pb.h"
#include "json_out.hpp"

namespace blobrt::tools {

constexpr int kInspectSchemaVersion = 1;

// {"schema_version", "file", "shape", "count", "dtype", "legacy_4d", "has_diff",
//  "data": stats, "diff": stats or null}; stats: {"min", "max", "mean", "asum", "sumsq",
//  "non_finite"} over the finite values (min/max/mean null when there are none).
// Throws blobrt::Error (naming the file) when the shape does not match the data.
json inspect_report(const std::string& file, const BlobProto& proto);
// The same, as the lines `blobrt inspect` prints.
std::string inspect_text(const json& report);

// A Caffe model file (blobrt/model_file.hpp): {"schema_version", "file", "kind": "caffemodel",
// "name", "layers": [{"name", "type", "layout", "blobs": [{"shape", "count", "dtype"}]}],
// "blob_count", "parameter_count"}.
json model_report(const std::string& file, NetParameter* net);
std::string model_text(const json& report);

// What `blobrt inspect FILE` and blobrt.inspect() report: a Caffe model file's layers when
// FILE is one (not for "-": standard input is read once, as a BlobProto), else the BlobProto
// report; read errors (a file that is neither) throw blobrt::Error naming the file.
json inspect_file(const std::string& file);
std::string inspect_file_text(const json& report);

}  // namespace blobrt::tools

#endif
