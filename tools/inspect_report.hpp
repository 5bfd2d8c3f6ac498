// `blobrt inspect`: a BlobProto file's shape, precision and summary statistics, as text or
// as JSON (docs/blobrt-inspect.schema.json). Numbers read back exactly (number_format.hpp).
#ifndef BLOBRT_TOOLS_INSPECT_REPORT_HPP
#define BLOBRT_TOOLS_INSPECT_REPORT_HPP

#include <string>

#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"
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

}  // namespace blobrt::tools

#endif
