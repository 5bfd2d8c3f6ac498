// Caffe model files from Python: blobrt.load_caffemodel and save_caffemodel's C++ side.

#include <algorithm>
#include <map>

#include "py_blob.hpp"
#include "blobrt/escaped_text.hpp"
#include "blobrt/io.hpp"
#include "blobrt/model_file.hpp"

namespace blobrt::python {

using namespace nb::literals;

namespace {

// Caffe model files (blobrt/model_file.hpp) for blobrt.load_caffemodel/save_caffemodel:
// each blob as (shape, dtype, raw bytes), which __init__.py turns into NumPy arrays.
NetParameter read_model(const std::string& path) {
  require_file(path);
  NetParameter net;
  {
    nb::gil_scoped_release release;
    ReadModelFileOrDie(path, &net);
  }
  return net;
}

// A model blob's values as a new NumPy array: one copy, straight from the message's field.
template <typename T>
nb::object numpy_copy(const google::protobuf::RepeatedField<T>& values, const BlobProtoShape& shape) {
  std::vector<std::size_t> dims(shape.shape.begin(), shape.shape.end());
  if (shape.count == 0 && dims.empty()) dims.push_back(0);  // an empty Blob: no values
  T* buffer = new T[values.empty() ? 1 : values.size()];
  std::copy(values.begin(), values.end(), buffer);
  nb::capsule owner(buffer, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, T>(buffer, dims.size(), dims.data(), owner));
}

// A layer name as Python sees it: str, with bytes that are not UTF-8 as lone surrogates
// (surrogateescape, as os.fsdecode), so that save_caffemodel encodes it back to the same bytes.
nb::object layer_name(const std::string& name) {
  return nb::steal(PyUnicode_DecodeUTF8(name.data(), static_cast<Py_ssize_t>(name.size()), "surrogateescape"));
}

// A layer name for a message, quoted as libblobrt quotes it: valid UTF-8 as it is, other
// bytes, control characters and backslashes as \xNN.
std::string shown_name(const std::string& name) { return blobrt::detail::escaped_text(name, /*keep_utf8=*/true); }

// The shape FromProto would give a model blob, its errors naming the layer and the blob.
BlobProtoShape model_blob_shape(const std::string& path, const ModelLayer& layer, int index,
                                const BlobProto& proto) {
  try {
    return blob_proto_shape(proto);
  } catch (const Error& e) {
    throw Error(path + ": layer '" + shown_name(layer.name) + "' blob " + std::to_string(index) + ": " + e.what());
  }
}

// [(layer name, type, [NumPy arrays])]: float64 where the blob has double_data.
nb::list read_caffemodel(const std::string& path) {
  NetParameter net = read_model(path);
  nb::list layers;
  for (const ModelLayer& layer : model_layers(&net)) {
    nb::list blobs;
    for (const BlobProto& proto : *layer.blobs) {
      const BlobProtoShape shape = model_blob_shape(path, layer, static_cast<int>(nb::len(blobs)), proto);
      blobs.append(proto.double_data_size() > 0 ? numpy_copy(proto.double_data(), shape)
                                                : numpy_copy(proto.data(), shape));
    }
    layers.append(nb::make_tuple(layer_name(layer.name), layer_name(layer.type), blobs));
  }
  return layers;
}

// Whether an array of `given` shape may replace a blob of the file: Blob::ShapeEquals'
// rules, as Caffe's CopyTrainedLayersFrom applies them. A blob with legacy num/channels/
// height/width takes any shape of at most 4 axes that is the same with 1s put in front
// (pycaffe shows a V1 model's 1x1x1xN bias as (N,), its 1x1xMxN weights as (M, N)); an
// empty blob (no axes, no values), which load_caffemodel gives as shape (0,), takes any
// array of no values; any other blob exactly its shape.
bool shape_fits(const BlobProto& proto, const std::vector<int>& old_shape, const std::vector<std::int64_t>& given) {
  const bool legacy = proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width();
  if (old_shape.empty()) {
    return std::find(given.begin(), given.end(), 0) != given.end();
  }
  if (legacy) {
    if (given.size() > 4) return false;
    std::vector<std::int64_t> padded(4 - given.size(), 1);
    padded.insert(padded.end(), given.begin(), given.end());
    return std::equal(padded.begin(), padded.end(), old_shape.begin(), old_shape.end());
  }
  return std::equal(given.begin(), given.end(), old_shape.begin(), old_shape.end());
}

// params: {layer name (bytes): [C-contiguous float32 or float64 NumPy arrays]} (__init__.py
// makes the names bytes and the arrays one of the two). Each named layer must exist and keep
// its blob count and shapes (as Caffe's CopyTrainedLayersFrom requires), else nothing is
// written. A name the file repeats: the last layer of the name that has blobs, the one
// load_caffemodel returns and Caffe's CopyTrainedLayersFrom copies last. Values go into the
// file's own precision for that blob.
void write_caffemodel(const std::string& template_path, const std::string& path, nb::dict params) {
  using Floats = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;
  using Doubles = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
  NetParameter net = read_model(template_path);
  std::map<std::string, ModelLayer> by_name;  // the last layer of each name that has blobs
  for (const ModelLayer& layer : model_layers(&net)) {
    auto it = by_name.find(layer.name);
    if (it == by_name.end() || layer.blobs->size() > 0) by_name.insert_or_assign(layer.name, layer);
  }
  const std::string where = "blobrt.save_caffemodel: " + template_path + ": ";
  for (auto [key, value] : params) {
    if (!nb::isinstance<nb::bytes>(key)) {
      detail::fail_as<InvalidTypeError>(where, "a layer name must be str or bytes, got ",
                                        nb::cast<std::string>(nb::repr(key)));
    }
    const nb::bytes key_bytes = nb::borrow<nb::bytes>(key);
    const std::string name(key_bytes.c_str(), key_bytes.size());
    const std::string shown = shown_name(name);
    auto found = by_name.find(name);
    if (found == by_name.end()) detail::fail_as<InvalidValueError>(where, "no layer '", shown, "'");
    if (!nb::isinstance<nb::list>(value)) {
      detail::fail_as<InvalidTypeError>(where, "layer '", shown, "': expected a list of arrays, got ",
                                        nb::cast<std::string>(nb::repr(value.type())));
    }
    nb::list given = nb::borrow<nb::list>(value);
    auto& blobs = *found->second.blobs;
    if (static_cast<int>(nb::len(given)) != blobs.size()) {
      detail::fail_as<InvalidValueError>(where, "layer '", shown, "' has ", blobs.size(), " blobs, ", nb::len(given),
                                         " given (nothing was written)");
    }
    for (int i = 0; i < blobs.size(); ++i) {
      BlobProto& proto = blobs[i];
      const std::vector<int> old_shape = model_blob_shape(template_path, found->second, i, proto).shape;
      Doubles doubles;
      Floats floats;
      const bool given_double = nb::try_cast(given[i], doubles);
      if (!given_double && !nb::try_cast(given[i], floats)) {
        detail::fail_as<InvalidTypeError>(where, "layer '", shown, "' blob ", i,
                                          " is not a C-contiguous float32 or float64 array");
      }
      const std::size_t ndim = given_double ? doubles.ndim() : floats.ndim();
      std::vector<std::int64_t> shape;
      for (std::size_t d = 0; d < ndim; ++d) {
        shape.push_back(static_cast<std::int64_t>(given_double ? doubles.shape(d) : floats.shape(d)));
      }
      if (!shape_fits(proto, old_shape, shape)) {
        detail::fail_as<InvalidValueError>(
            where, "layer '", shown, "' blob ", i, " has shape ",
            shape_repr(old_shape),
            proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width() ? " (legacy 4-D)" : "",
            ", the array given has ", shape_repr(shape), " (nothing was written)");
      }
      if (old_shape.empty()) continue;  // an empty blob: no values to replace
      const std::size_t n = given_double ? doubles.size() : floats.size();
      if (proto.double_data_size() > 0) {
        auto* field = proto.mutable_double_data();
        if (given_double) {
          field->Assign(doubles.data(), doubles.data() + n);
        } else {
          field->Assign(floats.data(), floats.data() + n);
        }
      } else {
        auto* field = proto.mutable_data();
        if (given_double) {
          field->Resize(static_cast<int>(n), 0.f);
          std::transform(doubles.data(), doubles.data() + n, field->mutable_data(),
                         [](double v) { return static_cast<float>(v); });
        } else {
          field->Assign(floats.data(), floats.data() + n);
        }
      }
    }
  }
  nb::gil_scoped_release release;
  WriteProtoToBinaryFile(net, path);
}

}  // namespace

void register_model_file_functions(nb::module_& m) {
  m.def("_read_caffemodel", &read_caffemodel, "path"_a,
        "[(layer name, type, [NumPy arrays])] of a Caffe model file (blobrt.load_caffemodel).");
  m.def("_write_caffemodel", &write_caffemodel, "template"_a, "path"_a, "params"_a,
        "Writes `template` with the given layers' blobs replaced to `path` (blobrt.save_caffemodel).");
}

}  // namespace blobrt::python
