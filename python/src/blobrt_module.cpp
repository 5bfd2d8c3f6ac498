// blobrt._blobrt: the nanobind extension behind the `blobrt` Python package
// (python/blobrt/__init__.py adds the DLPack wrapper and the file helpers; docs/python.md).
//
// One Python class, Blob, over Blob<float> or Blob<double> (the dtype chosen at
// construction). .data/.diff are NumPy arrays over the Blob's host memory that hold a
// reference to its SyncedMemory, so they outlive the Blob; each access makes the host
// side current and marks it newest (pycaffe's semantics). .device_data/.device_diff
// export the active device's memory through DLPack where it has an address (host memory,
// CUDA); OpenCL buffers have none and say so.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "blob_lock.hpp"
#include "info_report.hpp"
#include "inspect_report.hpp"
#include "log_bridge.hpp"
#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"
#include "blobrt/model_file.hpp"
#include "blobrt/runtime.hpp"
#include "view_cache.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace blobrt::python {
namespace {

enum class DType { kFloat32, kFloat64 };

// The C++ errors of the binding's own checks, each raised in Python as a blobrt.Error
// subclass that is also the built-in exception a NumPy user expects (NB_MODULE below):
// a dtype blobrt does not offer or that differs (TypeError), a bad value such as a
// negative dimension (ValueError), a file that does not exist (FileNotFoundError).
struct InvalidTypeError : Error {
  using Error::Error;
};
struct InvalidValueError : Error {
  using Error::Error;
};
struct MissingFileError : Error {
  MissingFileError(const std::string& message, std::string p) : Error(message), path(std::move(p)) {}
  std::string path;
};

// The dtype of a NumPy dtype object or name ("float32", np.float64, ...).
DType dtype_of(nb::handle dtype) {
  if (dtype.is_none()) return DType::kFloat32;  // Caffe's default Blob is Blob<float>
  nb::module_ np = nb::module_::import_("numpy");
  nb::object d = np.attr("dtype")(dtype);
  const std::string name = nb::cast<std::string>(nb::str(d.attr("name")));
  if (name == "float32") return DType::kFloat32;
  if (name == "float64") return DType::kFloat64;
  detail::fail_as<InvalidTypeError>("blobrt.Blob: dtype ", name, " is not supported (float32 or float64)");
}

std::vector<int> checked_shape(const std::vector<std::int64_t>& shape) {
  if (shape.size() > static_cast<std::size_t>(kMaxBlobAxes)) {
    detail::fail_as<InvalidValueError>("blobrt.Blob: ", shape.size(), " axes exceed the maximum of ", kMaxBlobAxes);
  }
  std::vector<int> out;
  for (std::int64_t d : shape) {
    if (d < 0 || d > INT32_MAX) detail::fail_as<InvalidValueError>("blobrt.Blob: dimension ", d, " is out of range [0, 2^31)");
    out.push_back(static_cast<int>(d));
  }
  return out;
}

class PyBlob {
 public:
  PyBlob(const std::vector<std::int64_t>& shape, DType dtype) : dtype_(dtype) {
    if (dtype == DType::kFloat32) {
      blob_ = std::make_shared<Blob<float>>(checked_shape(shape));
    } else {
      blob_ = std::make_shared<Blob<double>>(checked_shape(shape));
    }
  }
  explicit PyBlob(DType dtype) : PyBlob(std::vector<std::int64_t>{}, dtype) {}

  template <typename F>
  decltype(auto) visit(F&& f) const {
    return std::visit([&](auto& b) -> decltype(auto) { return f(*b); }, blob_);
  }

  DType dtype() const { return dtype_; }
  bool is_double() const { return dtype_ == DType::kFloat64; }

  // Held by every operation on this Blob (blob_lock.hpp); shared with the Blobs it shares
  // memory with.
  LockGroup lock;
  // The last NumPy array handed out per side ([0] data, [1] diff), handed out again only
  // while no caller can see it (view_cache.hpp): .data costs a head check, not a new NumPy
  // array (pycaffe's hot path: net.blobs[...].data in a loop).
  HostViewCache host_cache[2];
  // The last DeviceArray per side, returned again while the memory, the pointer and the
  // shape are the same (a DeviceArray has no state a caller can change).
  struct ViewCache {
    const SyncedMemory* memory = nullptr;
    const void* pointer = nullptr;
    std::vector<int> shape;
    nb::object array;

    bool holds(const SyncedMemory* m, const void* p, const std::vector<int>& s) const {
      return array.is_valid() && pointer == p && memory == m && shape == s;
    }
    const nb::object& keep(nb::object a, const SyncedMemory* m, const void* p, const std::vector<int>& s) {
      array = std::move(a);
      memory = m;
      pointer = p;
      shape = s;
      return array;
    }
  };
  ViewCache device_cache[2];
  Blob<float>& as_float() const { return *std::get<0>(blob_); }
  Blob<double>& as_double() const { return *std::get<1>(blob_); }

 private:
  DType dtype_;
  std::variant<std::shared_ptr<Blob<float>>, std::shared_ptr<Blob<double>>> blob_;
};

// f(blob) under the Blob's lock, the GIL held throughout (f makes Python objects).
template <typename F>
decltype(auto) with_gil(const PyBlob& b, F&& f) {
  BlobGuard guard(b.lock, true);
  return b.visit(std::forward<F>(f));
}

// f(blob) with the GIL released and the Blob's lock held (f must not touch Python objects).
template <typename F>
decltype(auto) without_gil(const PyBlob& b, F&& f) {
  nb::gil_scoped_release release;
  BlobGuard guard(b.lock, false);
  return b.visit(std::forward<F>(f));
}

// A capsule that owns a reference to `memory`: what keeps a view's bytes alive.
nb::capsule owner_of(std::shared_ptr<SyncedMemory> memory) {
  auto* keep = new std::shared_ptr<SyncedMemory>(std::move(memory));
  return nb::capsule(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<SyncedMemory>*>(p); });
}

std::vector<std::size_t> shape_of(const std::vector<int>& shape) { return {shape.begin(), shape.end()}; }

// .data / .diff: the host side, current and marked newest, as a writable NumPy array.
template <typename T>
nb::object host_view(Blob<T>& blob, bool diff, HostViewCache& cache) {
  if (blob.count() == 0) {
    const std::vector<std::size_t> shape = shape_of(blob.shape());
    return nb::cast(nb::ndarray<nb::numpy, T>(nullptr, shape.size(), shape.data(), nb::handle()));
  }
  T* p = diff ? blob.mutable_cpu_diff() : blob.mutable_cpu_data();
  const std::shared_ptr<SyncedMemory>& mem = diff ? blob.diff() : blob.data();
  if (PyObject* again = cache.reusable(mem.get(), p, blob.shape())) return nb::borrow(again);
  const std::vector<std::size_t> shape = shape_of(blob.shape());
  return cache.keep(nb::cast(nb::ndarray<nb::numpy, T>(p, shape.size(), shape.data(), owner_of(mem))), mem.get(), p,
                    blob.shape());
}

// A Blob's data or diff on its device, for DLPack consumers: the device memory itself.
// __dlpack__ makes the data ready for any consumer stream (waits for the device's queue)
// unless stream=-1; on host-memory devices every operation has completed already.
struct DeviceArray {
  nb::object array;  // nanobind's array_api ndarray: the DLPack capsules themselves
  std::shared_ptr<Device> device;
  int device_type = 0;
  int device_id = 0;
  std::vector<int> shape;
  bool is_double = false;
  std::string device_name;  // blobrt's id of the device, e.g. 'host:0'

  nb::tuple shape_tuple() const {
    nb::list l;
    for (int d : shape) l.append(d);
    return nb::tuple(l);
  }
};

// The id of the device a Blob's memory lives on ('host:0', 'blis:0'); the active device
// for a Blob that has no memory yet.
std::string device_id_of(const std::shared_ptr<SyncedMemory>& memory) {
  if (memory && memory->device()) return memory->device()->description().id();
  return current_device_id();
}

std::string shape_repr(const std::vector<int>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + (shape.size() == 1 ? ",)" : ")");
}

nb::object numpy_dtype(bool is_double) {
  return nb::module_::import_("numpy").attr("dtype")(is_double ? "float64" : "float32");
}

// .device_data / .device_diff.
template <typename T>
nb::object device_view(Blob<T>& blob, bool diff, PyBlob::ViewCache& cache) {
  const std::shared_ptr<SyncedMemory>& mem0 = diff ? blob.diff() : blob.data();
  if (!mem0) detail::fail("blobrt.Blob: no memory (shape ", blob.shape_string(), ")");
  const DeviceDescription& d = mem0->device()->description();
  // DLPack names memory by its native device type and index; it needs handles that are
  // addresses (a data pointer plus byte_offset), which an OpenCL cl_mem is not.
  const int device_type = static_cast<int>(d.native_type);
  if (d.native_type == NativeDeviceType::kUnknown || !d.addressable_handles) {
    detail::fail_as<UnsupportedError>(
        "blobrt.Blob.device_", diff ? "diff" : "data", ": ", d.id(), " (", d.name,
        ") cannot be exported through DLPack: its buffers are opaque handles, not addresses (native type ",
        to_string(d.native_type), "); use .", diff ? "diff" : "data", " for the host side instead");
  }
  T* p = diff ? blob.mutable_gpu_diff() : blob.mutable_gpu_data();
  if (cache.holds(mem0.get(), p, blob.shape())) return cache.array;
  const std::vector<std::size_t> shape = shape_of(blob.shape());
  DeviceArray out;
  out.device = mem0->device();
  out.device_type = device_type;
  out.device_id = d.native_index;
  out.shape = blob.shape();
  out.is_double = std::is_same_v<T, double>;
  out.device_name = d.id();
  out.array = nb::cast(nb::ndarray<nb::array_api, T>(p, shape.size(), shape.data(), owner_of(mem0), nullptr,
                                                     nb::dtype<T>(), out.device_type, out.device_id));
  return cache.keep(nb::cast(std::move(out)), mem0.get(), p, blob.shape());
}

// Blob.from_dlpack / from_numpy: a copy into a new Blob on the active device. The source is
// taken as const so that read-only arrays (np.from_dlpack of an immutable JAX array, a
// non-writeable NumPy array) are accepted.
template <typename T>
PyBlob copy_in(const nb::ndarray<const T, nb::c_contig, nb::device::cpu>& a, DType dtype) {
  std::vector<std::int64_t> shape;
  for (std::size_t i = 0; i < a.ndim(); ++i) shape.push_back(static_cast<std::int64_t>(a.shape(i)));
  PyBlob b(shape, dtype);
  b.visit([&](auto& blob) {
    if (blob.count() == 0) return;
    auto* dst = blob.mutable_cpu_data();
    std::memcpy(dst, a.data(), static_cast<std::size_t>(blob.count()) * sizeof(T));
  });
  return b;
}

// Blob.from_numpy / from_dlpack: a copy of a float32 or float64 array in a new Blob; `who`
// names the caller in errors.
nb::object from_array(nb::handle x, const char* who) {
  nb::module_ np = nb::module_::import_("numpy");
  nb::object a = np.attr("asarray")(x);
  const std::string name = nb::cast<std::string>(nb::str(a.attr("dtype").attr("name")));
  if (name != "float32" && name != "float64") {
    detail::fail_as<InvalidTypeError>("blobrt.Blob.", who, ": dtype ", name, " is not supported (float32 or float64)");
  }
  // Big-endian data (np.fromfile(..., dtype='>f4')) is brought to the machine's byte order.
  if (!nb::cast<bool>(a.attr("dtype").attr("isnative"))) {
    a = a.attr("astype")(a.attr("dtype").attr("newbyteorder")("="));
  }
  nb::object c = np.attr("require")(a, "requirements"_a = "C");
  if (name == "float32") {
    return nb::cast(copy_in(nb::cast<nb::ndarray<const float, nb::c_contig, nb::device::cpu>>(c), DType::kFloat32));
  }
  return nb::cast(copy_in(nb::cast<nb::ndarray<const double, nb::c_contig, nb::device::cpu>>(c), DType::kFloat64));
}

constexpr int kDLCPU = 1;

nb::object from_dlpack(nb::handle x) {
  if (!nb::hasattr(x, "__dlpack__")) {
    detail::fail_as<InvalidTypeError>("blobrt.Blob.from_dlpack: ", nb::cast<std::string>(nb::str(x.type().attr("__name__"))),
                                      " has no __dlpack__");
  }
  int device_type = kDLCPU;
  if (nb::hasattr(x, "__dlpack_device__")) device_type = nb::cast<int>(x.attr("__dlpack_device__")()[0]);
  if (device_type != kDLCPU) {
    detail::fail_as<UnsupportedError>("blobrt.Blob.from_dlpack: the array is on DLPack device type ", device_type,
                                      "; only CPU arrays are imported (copy it to the host first)");
  }
  return from_array(nb::module_::import_("numpy").attr("from_dlpack")(x), "from_dlpack");
}

// A str or os.PathLike path as a string.
std::string path_of(nb::handle path) {
  return nb::cast<std::string>(nb::module_::import_("os").attr("fsdecode")(path));
}

// A dimension: anything with __index__ (int, NumPy's integers), as Python's own sequences
// take it; anything else is an InvalidTypeError naming it.
std::int64_t index_of(nb::handle d, const char* who) {
  nb::object index = nb::steal(PyNumber_Index(d.ptr()));
  if (!index.is_valid()) {
    PyErr_Clear();
    detail::fail_as<InvalidTypeError>("blobrt.", who, ": a dimension must be an integer, got ",
                                      nb::cast<std::string>(nb::repr(d)));
  }
  return nb::cast<std::int64_t>(index);
}

// A missing file is MissingFileError (a FileNotFoundError), as open() raises it.
void require_file(const std::string& path) {
  struct stat st;
  if (path != "-" && ::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
    throw MissingFileError(std::strerror(ENOENT), path);  // str(): as open()'s
  }
}

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

// A layer name for a message: bytes that are not UTF-8 as \xNN.
std::string shown_name(const std::string& name) {
  nb::object text = nb::steal(PyUnicode_DecodeUTF8(name.data(), static_cast<Py_ssize_t>(name.size()), "backslashreplace"));
  if (!text.is_valid()) {
    PyErr_Clear();
    return "?";
  }
  return nb::cast<std::string>(text);
}

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

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
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
            shape_text(std::vector<std::int64_t>(old_shape.begin(), old_shape.end())),
            proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width() ? " (legacy 4-D)" : "",
            ", the array given has ", shape_text(shape), " (nothing was written)");
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

// A Blob from a BlobProto: float64 when it has double values, else float32 (what has no
// values at all, an empty Blob, loads as float32: the file does not say).
PyBlob blob_from_proto(const BlobProto& proto) {
  const bool is_double = proto.double_data_size() > 0 || proto.double_diff_size() > 0;
  PyBlob b(is_double ? DType::kFloat64 : DType::kFloat32);
  b.visit([&](auto& blob) { blob.FromProto(proto, true); });
  return b;
}

// blobrt.Error and its subclasses that are also the built-in exception of their kind, and the
// translation of blobrt's C++ errors into them.
void register_errors(nb::module_& m) {
  static nb::exception<Error> error(m, "Error", PyExc_RuntimeError);
  error.attr("__doc__") =
      "Every error blobrt raises (a RuntimeError): a failed Caffe CHECK, a device or plugin failure. The "
      "subclasses say the kind and are also the built-in exception of that kind.";
  // blobrt.Error subclasses that are also a built-in exception. The built-in comes first so
  // that its __init__ runs (OSError's sets errno and filename).
  auto subclass = [&](const char* name, PyObject* builtin, const char* doc) {
    nb::object bases = builtin ? nb::make_tuple(nb::handle(builtin), error) : nb::make_tuple(error);
    nb::object type = nb::steal(PyErr_NewExceptionWithDoc((std::string("blobrt._blobrt.") + name).c_str(), doc,
                                                           bases.ptr(), nullptr));
    if (!type.is_valid()) throw nb::python_error();
    m.attr(name) = type;
    return type;
  };
  static nb::object type_error = subclass("InvalidTypeError", PyExc_TypeError,
      "A dtype blobrt does not offer (float32 and float64 only), dtypes that differ, or an object of the "
      "wrong kind: a blobrt.Error and a TypeError.");
  static nb::object value_error = subclass("InvalidValueError", PyExc_ValueError,
      "An argument's value is out of range (a negative dimension, more than 32 axes, an unknown file "
      "format): a blobrt.Error and a ValueError.");
  static nb::object file_error = subclass("MissingFileError", PyExc_FileNotFoundError,
      "The file does not exist (errno and filename set): a blobrt.Error and a FileNotFoundError.");
  static nb::object memory_error = subclass("OutOfMemoryError", PyExc_MemoryError,
      "The host or the device could not give the memory asked for: a blobrt.Error and a MemoryError.");
  static nb::object unsupported_error = subclass("UnsupportedError", nullptr,
      "The device does not offer the operation (double precision without fp64, DLPack export of OpenCL "
      "buffers): a blobrt.Error.");
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const InvalidTypeError& e) {
      PyErr_SetString(type_error.ptr(), e.what());
    } catch (const InvalidValueError& e) {
      PyErr_SetString(value_error.ptr(), e.what());
    } catch (const MissingFileError& e) {
      nb::object args = nb::make_tuple(ENOENT, e.what(), e.path);
      PyErr_SetObject(file_error.ptr(), args.ptr());
    } catch (const OutOfMemoryError& e) {
      PyErr_SetString(memory_error.ptr(), e.what());
    } catch (const UnsupportedError& e) {
      PyErr_SetString(unsupported_error.ptr(), e.what());
    }
    // Any other blobrt::Error goes on to nb::exception<Error>'s own translator: blobrt.Error.
  });
}

// blobrt.DeviceArray: a Blob's device memory for DLPack consumers.
void register_device_array(nb::module_& m) {
  nb::class_<DeviceArray>(m, "DeviceArray",
                          "A Blob's data or diff on its device, for DLPack consumers (np.from_dlpack, "
                          "torch.from_dlpack, cupy.from_dlpack): the device memory itself. It keeps the memory "
                          "alive; __dlpack__ waits for the device's queue first unless stream=-1.")
      .def("__dlpack_device__", [](const DeviceArray& a) { return std::make_pair(a.device_type, a.device_id); },
           "(DLPack device type, device index): (1, 0) for host memory, (2, N) for CUDA device N.")
      .def("__dlpack__",
           [](DeviceArray& a, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
             const bool cpu = a.device_type == nb::device::cpu::value;
             if (cpu && !stream.is_none()) {
               detail::fail_as<InvalidValueError>("DeviceArray.__dlpack__: stream must be None for a CPU array, got ",
                            nb::cast<std::string>(nb::repr(stream)));
             }
             const bool no_sync = !stream.is_none() && nb::isinstance<nb::int_>(stream) && nb::cast<long>(stream) == -1;
             if (!cpu && !no_sync) {
               nb::gil_scoped_release release;
               a.device->synchronize();
             }
             nb::dict kwargs;
             if (!max_version.is_none()) kwargs["max_version"] = max_version;
             if (!dl_device.is_none()) kwargs["dl_device"] = dl_device;
             if (!copy.is_none() && nb::cast<bool>(copy)) {
               if (!cpu) detail::fail_as<UnsupportedError>("DeviceArray.__dlpack__: copy=True is only offered for CPU arrays");
               nb::module_ np = nb::module_::import_("numpy");
               nb::object copied = np.attr("array")(np.attr("from_dlpack")(a.array), "copy"_a = true);
               return copied.attr("__dlpack__")(**kwargs);
             }
             if (!copy.is_none()) kwargs["copy"] = copy;
             return a.array.attr("__dlpack__")(**kwargs);
           },
           nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(), "dl_device"_a = nb::none(),
           "copy"_a = nb::none(),
           nb::sig("def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None, "
                   "dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> typing.Any"),
           "A DLPack capsule of the memory (versioned when max_version is given); waits for the device "
           "unless stream=-1; copy=True copies (CPU arrays only).")
      .def_prop_ro("shape", [](const DeviceArray& a) { return a.shape_tuple(); },
                   nb::for_getter(nb::sig("def shape(self) -> tuple[int, ...]")), "The shape, as a tuple.")
      .def_prop_ro("ndim", [](const DeviceArray& a) { return a.shape.size(); }, "The number of axes.")
      .def_prop_ro("dtype", [](const DeviceArray& a) { return numpy_dtype(a.is_double); },
                   nb::for_getter(nb::sig("def dtype(self) -> numpy.dtype[typing.Any]")),
                   "numpy.float32 or numpy.float64, as a numpy.dtype.")
      .def_prop_ro("device", [](const DeviceArray& a) { return a.device_name; },
                   "blobrt's id of the device the memory is on, e.g. 'host:0' or 'cuda:1'.")
      .def("__repr__", [](const DeviceArray& a) {
        return "blobrt.DeviceArray(shape=" + shape_repr(a.shape) + ", dtype=" + (a.is_double ? "float64" : "float32") +
               ", device='" + a.device_name + "')";
      });
}

// Construction and what NumPy users reach for first: dtype, shape, ndim, size, nbytes, device, len().
void define_blob_numpy_attributes(nb::class_<PyBlob>& blob) {
  blob
      .def("__init__",
           [](PyBlob* self, const std::vector<std::int64_t>& shape, nb::handle dtype) {
             new (self) PyBlob(shape, dtype_of(dtype));
           },
           "shape"_a = std::vector<std::int64_t>{}, "dtype"_a = nb::none(),
           "A Blob of the given shape (zero-filled on first touch).")
      .def_prop_ro("dtype", [](const PyBlob& b) { return numpy_dtype(b.is_double()); },
                   nb::for_getter(nb::sig("def dtype(self) -> numpy.dtype[typing.Any]")),
                   "numpy.float32 or numpy.float64, as a numpy.dtype.")
      .def_prop_ro("shape",
                   [](const PyBlob& b) {
                     return with_gil(b, [](auto& blob) {
                       nb::list l;
                       for (int d : blob.shape()) l.append(d);
                       return nb::tuple(l);
                     });
                   },
                   nb::for_getter(nb::sig("def shape(self) -> tuple[int, ...]")), "The shape, as a tuple (NumPy's).")
      .def_prop_ro("ndim", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.num_axes(); }); },
                   "The number of axes (NumPy's name for num_axes).")
      .def_prop_ro("size", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.count(); }); },
                   "The number of elements (NumPy's name for count).")
      .def_prop_ro("nbytes",
                   [](const PyBlob& b) {
                     return with_gil(b, [&](auto& blob) {
                       return static_cast<std::int64_t>(blob.count()) * (b.is_double() ? 8 : 4);
                     });
                   },
                   "The bytes of data (count times the dtype's size); diff has as many again.")
      .def_prop_ro("device",
                   [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return device_id_of(blob.data()); }); },
                   "blobrt's id of the device the data lives on, e.g. 'host:0' or 'cuda:0' (the active device "
                   "for a Blob without memory).")
      .def("__len__",
           [](const PyBlob& b) {
             return with_gil(b, [](auto& blob) -> std::int64_t {
               if (blob.num_axes() == 0) throw nb::type_error("len() of a 0-d blobrt.Blob");
               return blob.shape(0);
             });
           },
           "The length of the first axis (TypeError for a Blob with no axes, as NumPy).");
}

// np.asarray(blob) and DLPack (np.from_dlpack, torch.from_dlpack) on the Blob itself.
void define_blob_array_protocols(nb::class_<PyBlob>& blob) {
  blob
      .def("__array__",
           [](PyBlob& b, nb::handle dtype, nb::handle copy) {
             nb::object v = with_gil(b, [&](auto& blob) { return host_view(blob, false, b.host_cache[0]); });
             bool copied = false;
             nb::module_ np = nb::module_::import_("numpy");
             if (!dtype.is_none() && !v.attr("dtype").equal(np.attr("dtype")(dtype))) {
               if (!copy.is_none() && !nb::cast<bool>(copy)) {
                 throw nb::value_error("blobrt.Blob.__array__: a dtype conversion needs a copy, copy=False forbids it");
               }
               v = v.attr("astype")(dtype);
               copied = true;
             }
             if (!copied && !copy.is_none() && nb::cast<bool>(copy)) v = v.attr("copy")();
             return v;
           },
           "dtype"_a = nb::none(), "copy"_a = nb::none(),
           nb::sig("def __array__(self, dtype: typing.Any = None, copy: bool | None = None) -> "
                   "numpy.typing.NDArray[numpy.floating[typing.Any]]"),
           "np.asarray(blob): the host side of data, as .data (no copy unless copy=True or another dtype).")
      .def("__dlpack__",
           [](PyBlob& b, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
             nb::object d = with_gil(b, [&](auto& blob) { return device_view(blob, false, b.device_cache[0]); });
             return d.attr("__dlpack__")("stream"_a = stream, "max_version"_a = max_version, "dl_device"_a = dl_device,
                                         "copy"_a = copy);
           },
           nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(), "dl_device"_a = nb::none(),
           "copy"_a = nb::none(),
           nb::sig("def __dlpack__(self, *, stream: int | None = None, max_version: tuple[int, int] | None = None, "
                   "dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> typing.Any"),
           "The device memory of data as a DLPack capsule, as device_data.__dlpack__ (np.from_dlpack(blob), "
           "torch.from_dlpack(blob)).")
      .def("__dlpack_device__",
           [](PyBlob& b) {
             // What the device says it is, with no export (and no side effect): (4, 0) for an
             // OpenCL device, whose buffers __dlpack__ then declines to hand out.
             return with_gil(b, [&](auto& blob) {
               const std::shared_ptr<SyncedMemory>& memory = blob.data();
               if (!memory) detail::fail("blobrt.Blob.__dlpack_device__: no memory (shape ", blob.shape_string(), ")");
               const DeviceDescription& d = memory->device()->description();
               if (d.native_type == NativeDeviceType::kUnknown) {
                 detail::fail_as<UnsupportedError>("blobrt.Blob.__dlpack_device__: ", d.id(), " (", d.name,
                                                   ") does not say what kind of device it is (its plugin predates "
                                                   "ABI 1.3), so DLPack has no device type for it");
               }
               return std::make_pair(static_cast<int>(d.native_type), d.native_index);
             });
           },
           "(DLPack device type, device index) of data: what the device says it is (blobrt.devices()' "
           "dlpack_device), asked without exporting anything.");
}

// Caffe's own shape accessors and Reshape.
void define_blob_caffe_shape(nb::class_<PyBlob>& blob) {
  blob
      .def_prop_ro("count", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.count(); }); },
                   "The number of elements (Caffe's count()).")
      .def_prop_ro("num_axes", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.num_axes(); }); },
                   "The number of axes (Caffe's num_axes()).")
      .def_prop_ro("num", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.num(); }); },
                   "Caffe's legacy num(): shape[0] of a 4-d Blob.")
      .def_prop_ro("channels", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.channels(); }); },
                   "Caffe's legacy channels(): shape[1] of a 4-d Blob.")
      .def_prop_ro("height", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.height(); }); },
                   "Caffe's legacy height(): shape[2] of a 4-d Blob.")
      .def_prop_ro("width", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.width(); }); },
                   "Caffe's legacy width(): shape[3] of a 4-d Blob.")
      .def("reshape",
           [](PyBlob& b, nb::args dims) {
             std::vector<std::int64_t> shape;
             // One argument that is a sequence (a tuple, a list, a 1-d array), or anything else
             // that is not an integer (int and NumPy's integers, as arr.size and np.prod return
             // them, have __index__), is the whole shape.
             if (dims.size() == 1 && (PySequence_Check(dims[0].ptr()) || !PyIndex_Check(dims[0].ptr()))) {
               nb::object items = nb::steal(PyObject_GetIter(dims[0].ptr()));
               if (!items.is_valid()) {  // neither an integer nor a sequence of them: 2.5, None
                 PyErr_Clear();
                 index_of(dims[0], "Blob.reshape");  // raises InvalidTypeError naming it
               }
               for (nb::handle d : items) shape.push_back(index_of(d, "Blob.reshape"));
             } else {
               for (nb::handle d : dims) shape.push_back(index_of(d, "Blob.reshape"));
             }
             std::vector<int> s = checked_shape(shape);
             without_gil(b, [&](auto& blob) { blob.Reshape(s); });
           },
           nb::sig("def reshape(self, *shape: typing.SupportsIndex | collections.abc.Iterable[typing.SupportsIndex]) "
                   "-> None"),
           "reshape(*shape) or reshape(shape): Caffe's Reshape (keeps memory when it fits).");
}

// The host (NumPy) and device (DLPack) views of data and diff.
void define_blob_views(nb::class_<PyBlob>& blob) {
  blob
      .def_prop_ro("data", [](PyBlob& b) { return with_gil(b, [&](auto& blob) { return host_view(blob, false, b.host_cache[0]); }); },
                   nb::for_getter(nb::sig("def data(self) -> numpy.typing.NDArray[numpy.floating[typing.Any]]")),
                   "The host side of data as a writable NumPy array (no copy on host-memory devices); "
                   "each access makes the host side current and marks it newest.")
      .def_prop_ro("diff", [](PyBlob& b) { return with_gil(b, [&](auto& blob) { return host_view(blob, true, b.host_cache[1]); }); },
                   nb::for_getter(nb::sig("def diff(self) -> numpy.typing.NDArray[numpy.floating[typing.Any]]")),
                   "The host side of diff, like .data.")
      .def_prop_ro("device_data",
                   [](PyBlob& b) { return with_gil(b, [&](auto& blob) { return device_view(blob, false, b.device_cache[0]); }); },
                   nb::for_getter(nb::sig("def device_data(self) -> DeviceArray")),
                   "The active device's data memory as a DLPack exporter (no copy); raises blobrt.UnsupportedError on "
                   "devices whose buffers are not addresses (OpenCL).")
      .def_prop_ro("device_diff",
                   [](PyBlob& b) { return with_gil(b, [&](auto& blob) { return device_view(blob, true, b.device_cache[1]); }); },
                   nb::for_getter(nb::sig("def device_diff(self) -> DeviceArray")),
                   "The active device's diff memory as a DLPack exporter, like device_data.");
}

// Caffe's Blob math on the active device, and copying or sharing memory between Blobs.
void define_blob_math(nb::class_<PyBlob>& blob) {
  blob
      .def("asum_data", [](const PyBlob& b) { return without_gil(b, [](auto& blob) { return double(blob.asum_data()); }); },
           "The sum of |data|, on the active device.")
      .def("asum_diff", [](const PyBlob& b) { return without_gil(b, [](auto& blob) { return double(blob.asum_diff()); }); },
           "The sum of |diff|, on the active device.")
      .def("sumsq_data", [](const PyBlob& b) { return without_gil(b, [](auto& blob) { return double(blob.sumsq_data()); }); },
           "The sum of data squared, on the active device.")
      .def("sumsq_diff", [](const PyBlob& b) { return without_gil(b, [](auto& blob) { return double(blob.sumsq_diff()); }); },
           "The sum of diff squared, on the active device.")
      .def("scale_data",
           [](PyBlob& b, double s) { without_gil(b, [&](auto& blob) { blob.scale_data(static_cast<decltype(blob.asum_data())>(s)); }); },
           "factor"_a, "data *= factor, on the active device.")
      .def("scale_diff",
           [](PyBlob& b, double s) { without_gil(b, [&](auto& blob) { blob.scale_diff(static_cast<decltype(blob.asum_data())>(s)); }); },
           "factor"_a, "diff *= factor, on the active device.")
      .def("update", [](PyBlob& b) { without_gil(b, [](auto& blob) { blob.Update(); }); },
           "data -= diff, on the side where data is newest (Caffe's Update).")
      .def("copy_from",
           [](PyBlob& b, const PyBlob& source, bool copy_diff, bool reshape) {
             if (b.dtype() != source.dtype()) detail::fail_as<InvalidTypeError>("blobrt.Blob.copy_from: dtypes differ");
             nb::gil_scoped_release release;
             BlobGuard guard(b.lock, &source.lock, false);
             if (b.is_double()) {
               b.as_double().CopyFrom(source.as_double(), copy_diff, reshape);
             } else {
               b.as_float().CopyFrom(source.as_float(), copy_diff, reshape);
             }
           },
           "source"_a, "copy_diff"_a = false, "reshape"_a = false,
           "Copies source's data (or diff) into this Blob (Caffe's CopyFrom); reshape=True takes its shape.")
      .def("share_data",
           [](PyBlob& b, const PyBlob& other) {
             if (b.dtype() != other.dtype()) detail::fail_as<InvalidTypeError>("blobrt.Blob.share_data: dtypes differ");
             nb::gil_scoped_release release;
             BlobGuard guard(b.lock, &other.lock, false);
             if (b.is_double()) b.as_double().ShareData(other.as_double()); else b.as_float().ShareData(other.as_float());
             LockGroup::merge(b.lock, other.lock);  // from now on they touch the same memory
           },
           "other"_a, "Makes this Blob's data the other Blob's data memory (Caffe's ShareData).")
      .def("share_diff",
           [](PyBlob& b, const PyBlob& other) {
             if (b.dtype() != other.dtype()) detail::fail_as<InvalidTypeError>("blobrt.Blob.share_diff: dtypes differ");
             nb::gil_scoped_release release;
             BlobGuard guard(b.lock, &other.lock, false);
             if (b.is_double()) b.as_double().ShareDiff(other.as_double()); else b.as_float().ShareDiff(other.as_float());
             LockGroup::merge(b.lock, other.lock);
           },
           "other"_a, "Makes this Blob's diff the other Blob's diff memory (Caffe's ShareDiff).");
}

// BlobProto files, repr, and new Blobs from arrays.
void define_blob_files_and_copies(nb::class_<PyBlob>& blob) {
  blob
      .def("save",
           [](const PyBlob& b, nb::handle path_arg, bool binary, bool write_diff) {
             const std::string path = path_of(path_arg);
             without_gil(b, [&](auto& blob) {
               BlobProto proto;
               blob.ToProto(&proto, write_diff);
               if (binary) WriteProtoToBinaryFile(proto, path); else WriteProtoToTextFile(proto, path);
             });
           },
           "path"_a, "binary"_a = true, "write_diff"_a = false,
           nb::sig("def save(self, path: str | os.PathLike[str], binary: bool = True, write_diff: bool = False) -> None"),
           "Writes a Caffe BlobProto file (binary or text), as Caffe's WriteProtoTo*File.")
      .def("__repr__", [](const PyBlob& b) {
        return with_gil(b, [&](auto& blob) {
          return "blobrt.Blob(shape=" + shape_repr(blob.shape()) + ", dtype=" + (b.is_double() ? "float64" : "float32") +
                 ", device='" + device_id_of(blob.data()) + "')";
        });
      })
      .def_static("from_numpy", [](nb::handle array) { return from_array(array, "from_numpy"); }, "array"_a,
                  nb::sig("def from_numpy(array: typing.Any) -> Blob"),
                  "A new Blob on the active device with a copy of a float32 or float64 array (or anything "
                  "numpy.asarray takes); other dtypes raise blobrt.InvalidTypeError.")
      .def_static("from_dlpack", &from_dlpack, "x"_a, nb::sig("def from_dlpack(x: typing.Any) -> Blob"),
                  "A new Blob on the active device with a copy of any DLPack exporter's CPU data (read-only "
                  "ones included); other devices raise blobrt.UnsupportedError.");
}

// blobrt.Blob, topic by topic (the order of the definitions is the stub's).
void register_blob(nb::module_& m) {
  nb::class_<PyBlob> blob(m, "Blob",
                          "Caffe's Blob: an N-d array with data and diff, on the active device.\n\n"
                          "Blob(shape, dtype=numpy.float32); dtype is float32 or float64.");
  define_blob_numpy_attributes(blob);
  define_blob_array_protocols(blob);
  define_blob_caffe_shape(blob);
  define_blob_views(blob);
  define_blob_math(blob);
  define_blob_files_and_copies(blob);
}

// The module's functions: files, the runtime, and the reports shared with the blobrt command.
void register_log(nb::module_& m) {
  m.def("set_log_handler", [](nb::handle handler) {
        if (!handler.is_none() && !PyCallable_Check(handler.ptr())) {
          detail::fail_as<InvalidTypeError>("blobrt.set_log_handler: expected a callable or None, got ",
                                            nb::cast<std::string>(nb::repr(handler)));
        }
        LogBridge::get().set(handler);
      },
      "handler"_a.none(),
      nb::sig("def set_log_handler(handler: collections.abc.Callable[[str, str], object] | None) -> None"),
      "Sends blobrt's log messages (at or above the level in force) to handler(level, message) instead of "
      "stderr / BLOBRT_LOG_FILE: level is 'error', 'warn', 'info' or 'debug', message has no prefix. Messages "
      "from other threads arrive in order through the main thread. None restores the default. "
      "blobrt.log_to_logging() puts the logging module behind it.");
  m.def("set_log_level", [](const std::string& level) {
        const std::optional<LogLevel> parsed = parse_log_level(level);
        if (!parsed) {
          detail::fail_as<InvalidValueError>("blobrt.set_log_level: '", level,
                                             "' is not one of off, error, warn, info, debug");
        }
        blobrt::set_log_level(*parsed);
      },
      "level"_a, "The level in force from now on ('off', 'error', 'warn', 'info', 'debug'; case-insensitive), "
      "instead of BLOBRT_LOG's.");
  m.def("log_level", [] { return std::string(to_string(blobrt::log_level())); },
        "The level in force: set_log_level's, else BLOBRT_LOG's, else 'warn'.");
}

void register_functions(nb::module_& m) {
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

  m.def("_read_caffemodel", &read_caffemodel, "path"_a,
        "[(layer name, type, [NumPy arrays])] of a Caffe model file (blobrt.load_caffemodel).");
  m.def("_write_caffemodel", &write_caffemodel, "template"_a, "path"_a, "params"_a,
        "Writes `template` with the given layers' blobs replaced to `path` (blobrt.save_caffemodel).");

  m.def("select_backend", &select_backend, "spec"_a,
        "Selects 'auto', 'host', 'NAME' or 'NAME:INDEX' (as BLOBRT_BACKEND); raises blobrt.Error listing what "
        "was found if it cannot be used.");
  // blobrt.active_device(), its older name, is a Python function in __init__.py that warns.
  m.def("current_device_id", &current_device_id,
        "The calling thread's current device's id, e.g. 'blis:0' (selected per BLOBRT_BACKEND on first use).");
  m.def("available_devices", &available_devices, "Every backend:index that can be opened here, host first.");
  // One description of the node for `blobrt info --json` and blobrt.info() / devices()
  // (report/info_report.hpp; docs/blobrt-info.schema.json): the same keys in both.
  m.def("_info_json", [] { return tools::dump_json(tools::info_report(), -1); },
        "What `blobrt info --json` prints, as JSON text (blobrt.info() parses it).");
  m.def("version", [] { return std::string(version()); }, "libblobrt's version, e.g. '1.4.0' (also blobrt.__version__).");
}

}  // namespace
}  // namespace blobrt::python

NB_MODULE(_blobrt, m) {
  using namespace blobrt::python;
  m.doc() = "blobrt's Blob and runtime (the extension behind the blobrt package)";
  register_errors(m);
  register_device_array(m);
  register_blob(m);
  register_functions(m);
  register_log(m);
}
