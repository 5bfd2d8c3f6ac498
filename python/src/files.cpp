// BlobProto files from Python: blobrt.load, and the JSON behind blobrt.inspect().

#include <optional>

#include "inspect_report.hpp"
#include "py_blob.hpp"
#include "blobrt/io.hpp"

namespace blobrt::python {

using namespace nb::literals;

namespace {

// Reads a BlobProto file: format None decides from the file itself (ReadBlobProtoFromFile,
// the one rule in blobrt/io.hpp), "binary" or "text" reads it as that format only.
BlobProto read_proto(const std::string& path, const std::optional<std::string>& format) {
  if (format && *format != "binary" && *format != "text") {
    detail::fail_as<InvalidValueError>("blobrt.load: format must be None, 'binary' or 'text', got '", *format, "'");
  }
  require_file(path);
  BlobProto proto;
  bool ok = false;
  if (!format) {
    ok = ReadBlobProtoFromFile(path, &proto);
  } else if (*format == "binary") {
    ok = ReadProtoFromBinaryFile(path, &proto);
  } else if (*format == "text") {
    ok = ReadProtoFromTextFile(path, &proto);
  }
  if (!ok) throw Error(last_read_error());
  return proto;
}

// A Blob from a BlobProto: float64 when it has double values, else float32 (what has no
// values at all, an empty Blob, loads as float32: the file does not say).
PyBlob blob_from_proto(const BlobProto& proto) {
  const bool is_double = proto.double_data_size() > 0 || proto.double_diff_size() > 0;
  PyBlob b(is_double ? DType::kFloat64 : DType::kFloat32);
  b.visit([&](auto& blob) { blob.FromProto(proto, true); });
  return b;
}

}  // namespace

void register_file_functions(nb::module_& m) {
  m.def("load",
        [](nb::handle path_arg, const std::optional<std::string>& format) {
          const std::string path = path_of(path_arg);
          BlobProto proto;
          {
            nb::gil_scoped_release release;  // a file, or a pipe that may wait for its writer
            proto = read_proto(path, format);
          }
          return blob_from_proto(proto);
        },
        "path"_a, "format"_a = nb::none(),
        nb::sig("def load(path: str | os.PathLike[str], format: str | None = None) -> Blob"),
        "A Blob from a Caffe BlobProto file (double_data gives float64). format None decides binary or text "
        "from the file itself (docs/python.md); 'binary' or 'text' reads it as that format only.");
  // One computation for `blobrt inspect --json` and blobrt.inspect() (report/inspect_report.hpp;
  // docs/blobrt-inspect.schema.json): the same keys and numbers in both.
  m.def("_inspect_json",
        [](const std::string& path, const std::optional<std::string>& format) {
          nb::gil_scoped_release release;  // a file, or a pipe that may wait for its writer
          // format None: a Caffe model file's layers when it is one (tools::inspect_file).
          if (!format && path != "-") {
            require_file(path);
            return tools::dump_json(tools::inspect_file(path), -1);
          }
          return tools::dump_json(tools::inspect_report(path, read_proto(path, format)), -1);
        },
        "path"_a, "format"_a = nb::none(),
        "What `blobrt inspect --json PATH` prints, as JSON text (blobrt.inspect() parses it).");
}

}  // namespace blobrt::python
