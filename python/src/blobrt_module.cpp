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

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "blob_lock.hpp"
#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"
#include "blobrt/runtime.hpp"
#include "view_cache.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace blobrt::python {
namespace {

enum class DType { kFloat32, kFloat64 };

// The dtype of a NumPy dtype object or name ("float32", np.float64, ...).
DType dtype_of(nb::handle dtype) {
  if (dtype.is_none()) return DType::kFloat32;  // Caffe's default Blob is Blob<float>
  nb::module_ np = nb::module_::import_("numpy");
  nb::object d = np.attr("dtype")(dtype);
  const std::string name = nb::cast<std::string>(nb::str(d.attr("name")));
  if (name == "float32") return DType::kFloat32;
  if (name == "float64") return DType::kFloat64;
  detail::fail("blobrt.Blob: dtype ", name, " is not supported (float32 or float64)");
}

std::vector<int> checked_shape(const std::vector<std::int64_t>& shape) {
  if (shape.size() > static_cast<std::size_t>(kMaxBlobAxes)) {
    detail::fail("blobrt.Blob: ", shape.size(), " axes exceed the maximum of ", kMaxBlobAxes);
  }
  std::vector<int> out;
  for (std::int64_t d : shape) {
    if (d < 0 || d > INT32_MAX) detail::fail("blobrt.Blob: dimension ", d, " is out of range [0, 2^31)");
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
};

// .device_data / .device_diff.
template <typename T>
nb::object device_view(Blob<T>& blob, bool diff, PyBlob::ViewCache& cache) {
  const std::shared_ptr<SyncedMemory>& mem0 = diff ? blob.diff() : blob.data();
  if (!mem0) detail::fail("blobrt.Blob: no memory (shape ", blob.shape_string(), ")");
  const DeviceDescription& d = mem0->device()->description();
  int device_type = 0;
  if (d.host_memory) {
    device_type = nb::device::cpu::value;
  } else if (d.backend == "cuda") {
    device_type = nb::device::cuda::value;
  } else {
    detail::fail_as<UnsupportedError>(
        "blobrt.Blob.device_", diff ? "diff" : "data", ": ", d.id(), " (", d.name,
        ") cannot be exported through DLPack: its buffers are opaque handles (an OpenCL buffer "
        "is a cl_mem, not an address); use .", diff ? "diff" : "data", " for the host side instead");
  }
  T* p = diff ? blob.mutable_gpu_diff() : blob.mutable_gpu_data();
  if (cache.holds(mem0.get(), p, blob.shape())) return cache.array;
  const std::vector<std::size_t> shape = shape_of(blob.shape());
  DeviceArray out;
  out.device = mem0->device();
  out.device_type = device_type;
  out.device_id = device_type == nb::device::cpu::value ? 0 : d.index;
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

// Reads a BlobProto file: format None decides from the file itself (ReadBlobProtoFromFile,
// the one rule in blobrt/io.hpp), "binary" or "text" reads it as that format only.
BlobProto read_proto(const std::string& path, const std::optional<std::string>& format) {
  BlobProto proto;
  bool ok = false;
  if (!format) {
    ok = ReadBlobProtoFromFile(path, &proto);
  } else if (*format == "binary") {
    ok = ReadProtoFromBinaryFile(path, &proto);
  } else if (*format == "text") {
    ok = ReadProtoFromTextFile(path, &proto);
  } else {
    detail::fail("blobrt.load: format must be None, 'binary' or 'text', got '", *format, "'");
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

nb::dict device_dict(const DeviceDescription& d) {
  nb::dict out;
  out["id"] = d.id();
  out["backend"] = d.backend;
  out["index"] = d.index;
  out["name"] = d.name;
  out["details"] = d.details;
  out["type"] = std::string(to_string(d.kind));
  out["memory_bytes"] = d.memory_bytes;
  out["memory_model"] = std::string(to_string(d.memory_model()));
  out["supports_fp64"] = d.supports_fp64;
  return out;
}

}  // namespace
}  // namespace blobrt::python

NB_MODULE(_blobrt, m) {
  using namespace blobrt;
  using namespace blobrt::python;
  m.doc() = "blobrt's Blob and runtime (the extension behind the blobrt package)";

  static nb::exception<Error> error(m, "Error", PyExc_RuntimeError);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });

  nb::class_<DeviceArray>(m, "DeviceArray",
                          "A Blob's data or diff on its device, for DLPack consumers (np.from_dlpack, "
                          "torch.from_dlpack, cupy.from_dlpack): the device memory itself. It keeps the memory "
                          "alive; __dlpack__ waits for the device's queue first unless stream=-1.")
      .def("__dlpack_device__", [](const DeviceArray& a) { return nb::make_tuple(a.device_type, a.device_id); })
      .def("__dlpack__",
           [](DeviceArray& a, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
             const bool cpu = a.device_type == nb::device::cpu::value;
             if (cpu && !stream.is_none()) {
               detail::fail("DeviceArray.__dlpack__: stream must be None for a CPU array, got ",
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
               if (!cpu) detail::fail("DeviceArray.__dlpack__: copy=True is only offered for CPU arrays");
               nb::module_ np = nb::module_::import_("numpy");
               nb::object copied = np.attr("array")(np.attr("from_dlpack")(a.array), "copy"_a = true);
               return copied.attr("__dlpack__")(**kwargs);
             }
             if (!copy.is_none()) kwargs["copy"] = copy;
             return a.array.attr("__dlpack__")(**kwargs);
           },
           nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(), "dl_device"_a = nb::none(),
           "copy"_a = nb::none())
      .def_prop_ro("shape", [](const DeviceArray& a) { return nb::tuple(a.array.attr("shape")); })
      .def("__repr__", [](const DeviceArray& a) {
        return "blobrt.DeviceArray(shape=" + nb::cast<std::string>(nb::repr(a.array.attr("shape"))) +
               ", device=(" + std::to_string(a.device_type) + ", " + std::to_string(a.device_id) + "))";
      });

  nb::class_<PyBlob>(m, "Blob",
                     "Caffe's Blob: an N-d array with data and diff, on the active device.\n\n"
                     "Blob(shape, dtype=numpy.float32); dtype is float32 or float64.")
      .def("__init__",
           [](PyBlob* self, const std::vector<std::int64_t>& shape, nb::handle dtype) {
             new (self) PyBlob(shape, dtype_of(dtype));
           },
           "shape"_a = std::vector<std::int64_t>{}, "dtype"_a = nb::none(),
           "A Blob of the given shape (zero-filled on first touch).")
      .def_prop_ro("dtype",
                   [](const PyBlob& b) {
                     return nb::module_::import_("numpy").attr("dtype")(b.is_double() ? "float64" : "float32");
                   })
      .def_prop_ro("shape", [](const PyBlob& b) {
        return with_gil(b, [](auto& blob) {
          nb::list l;
          for (int d : blob.shape()) l.append(d);
          return nb::tuple(l);
        });
      })
      .def_prop_ro("count", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.count(); }); })
      .def_prop_ro("num_axes", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.num_axes(); }); })
      .def_prop_ro("num", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.num(); }); })
      .def_prop_ro("channels", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.channels(); }); })
      .def_prop_ro("height", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.height(); }); })
      .def_prop_ro("width", [](const PyBlob& b) { return with_gil(b, [](auto& blob) { return blob.width(); }); })
      .def("reshape",
           [](PyBlob& b, nb::args dims) {
             std::vector<std::int64_t> shape;
             if (dims.size() == 1 && !nb::isinstance<nb::int_>(dims[0])) {
               for (nb::handle d : dims[0]) shape.push_back(nb::cast<std::int64_t>(d));
             } else {
               for (nb::handle d : dims) shape.push_back(nb::cast<std::int64_t>(d));
             }
             std::vector<int> s = checked_shape(shape);
             without_gil(b, [&](auto& blob) { blob.Reshape(s); });
           },
           "reshape(*shape) or reshape(shape): Caffe's Reshape (keeps memory when it fits).")
      .def_prop_ro("data", [](PyBlob& b) { return with_gil(b, [&](auto& blob) { return host_view(blob, false, b.host_cache[0]); }); },
                   "The host side of data as a writable NumPy array (no copy on host-memory devices); "
                   "each access makes the host side current and marks it newest.")
      .def_prop_ro("diff", [](PyBlob& b) { return with_gil(b, [&](auto& blob) { return host_view(blob, true, b.host_cache[1]); }); },
                   "The host side of diff, like .data.")
      .def_prop_ro("device_data",
                   [](PyBlob& b) { return with_gil(b, [&](auto& blob) { return device_view(blob, false, b.device_cache[0]); }); },
                   "The active device's data memory as a DLPack exporter (no copy); raises blobrt.Error on "
                   "devices whose buffers are not addresses (OpenCL).")
      .def_prop_ro("device_diff",
                   [](PyBlob& b) { return with_gil(b, [&](auto& blob) { return device_view(blob, true, b.device_cache[1]); }); },
                   "The active device's diff memory as a DLPack exporter, like device_data.")
      .def("asum_data", [](const PyBlob& b) { return without_gil(b, [](auto& blob) { return double(blob.asum_data()); }); })
      .def("asum_diff", [](const PyBlob& b) { return without_gil(b, [](auto& blob) { return double(blob.asum_diff()); }); })
      .def("sumsq_data", [](const PyBlob& b) { return without_gil(b, [](auto& blob) { return double(blob.sumsq_data()); }); })
      .def("sumsq_diff", [](const PyBlob& b) { return without_gil(b, [](auto& blob) { return double(blob.sumsq_diff()); }); })
      .def("scale_data",
           [](PyBlob& b, double s) { without_gil(b, [&](auto& blob) { blob.scale_data(static_cast<decltype(blob.asum_data())>(s)); }); },
           "factor"_a)
      .def("scale_diff",
           [](PyBlob& b, double s) { without_gil(b, [&](auto& blob) { blob.scale_diff(static_cast<decltype(blob.asum_data())>(s)); }); },
           "factor"_a)
      .def("update", [](PyBlob& b) { without_gil(b, [](auto& blob) { blob.Update(); }); },
           "data -= diff, on the side where data is newest (Caffe's Update).")
      .def("copy_from",
           [](PyBlob& b, const PyBlob& source, bool copy_diff, bool reshape) {
             if (b.dtype() != source.dtype()) detail::fail("blobrt.Blob.copy_from: dtypes differ");
             nb::gil_scoped_release release;
             BlobGuard guard(b.lock, &source.lock, false);
             if (b.is_double()) {
               b.as_double().CopyFrom(source.as_double(), copy_diff, reshape);
             } else {
               b.as_float().CopyFrom(source.as_float(), copy_diff, reshape);
             }
           },
           "source"_a, "copy_diff"_a = false, "reshape"_a = false)
      .def("share_data",
           [](PyBlob& b, const PyBlob& other) {
             if (b.dtype() != other.dtype()) detail::fail("blobrt.Blob.share_data: dtypes differ");
             nb::gil_scoped_release release;
             BlobGuard guard(b.lock, &other.lock, false);
             if (b.is_double()) b.as_double().ShareData(other.as_double()); else b.as_float().ShareData(other.as_float());
             LockGroup::merge(b.lock, other.lock);  // from now on they touch the same memory
           },
           "other"_a)
      .def("share_diff",
           [](PyBlob& b, const PyBlob& other) {
             if (b.dtype() != other.dtype()) detail::fail("blobrt.Blob.share_diff: dtypes differ");
             nb::gil_scoped_release release;
             BlobGuard guard(b.lock, &other.lock, false);
             if (b.is_double()) b.as_double().ShareDiff(other.as_double()); else b.as_float().ShareDiff(other.as_float());
             LockGroup::merge(b.lock, other.lock);
           },
           "other"_a)
      .def("save",
           [](const PyBlob& b, const std::string& path, bool binary, bool write_diff) {
             without_gil(b, [&](auto& blob) {
               BlobProto proto;
               blob.ToProto(&proto, write_diff);
               if (binary) WriteProtoToBinaryFile(proto, path); else WriteProtoToTextFile(proto, path);
             });
           },
           "path"_a, "binary"_a = true, "write_diff"_a = false,
           "Writes a Caffe BlobProto file (binary or text), as Caffe's WriteProtoTo*File.")
      .def("__repr__", [](const PyBlob& b) {
        return with_gil(b, [&](auto& blob) {
          return std::string("blobrt.Blob(shape=") + blob.shape_string() + ", dtype=" +
                 (b.is_double() ? "float64" : "float32") + ")";
        });
      });

  m.def("_from_array_f32", [](const nb::ndarray<const float, nb::c_contig, nb::device::cpu>& a) { return copy_in(a, DType::kFloat32); });
  m.def("_from_array_f64", [](const nb::ndarray<const double, nb::c_contig, nb::device::cpu>& a) { return copy_in(a, DType::kFloat64); });

  m.def("load",
        [](const std::string& path, const std::optional<std::string>& format) {
          BlobProto proto;
          {
            nb::gil_scoped_release release;  // a file, or a pipe that may wait for its writer
            proto = read_proto(path, format);
          }
          return blob_from_proto(proto);
        },
        "path"_a, "format"_a = nb::none(),
        "A Blob from a Caffe BlobProto file (double_data gives float64). format None decides binary or text "
        "from the file itself (docs/python.md); 'binary' or 'text' reads it as that format only.");
  m.def("_inspect", [](const std::string& path, const std::optional<std::string>& format) {
    BlobProto proto;
    {
      nb::gil_scoped_release release;
      proto = read_proto(path, format);
    }
    nb::dict out;
    const bool is_double = proto.double_data_size() > 0 || proto.double_diff_size() > 0;
    PyBlob b = blob_from_proto(proto);
    b.visit([&](auto& blob) {
      nb::list shape;
      for (int d : blob.shape()) shape.append(d);
      out["shape"] = nb::tuple(shape);
      out["count"] = blob.count();
    });
    out["dtype"] = is_double ? "float64" : "float32";
    out["has_diff"] = proto.diff_size() > 0 || proto.double_diff_size() > 0;
    out["legacy_4d"] = proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width();
    out["blob"] = nb::cast(std::move(b));
    return out;
  }, "path"_a, "format"_a = nb::none());

  m.def("select_backend", &select_backend, "spec"_a,
        "Selects 'auto', 'host', 'NAME' or 'NAME:INDEX' (as BLOBRT_BACKEND); raises blobrt.Error listing what "
        "was found if it cannot be used.");
  m.def("active_device", [] { return active_backend(); }, "The active device's id, e.g. 'blis:0'.");
  m.def("available_devices", &available_devices, "Every backend:index that can be opened here, host first.");
  m.def("devices", [] {
    nb::list out;
    out.append(device_dict(host_device()->description()));
    for (const PluginReport& p : inventory().plugins) {
      if (!p.usable) continue;
      for (const DeviceDescription& d : p.devices) out.append(device_dict(d));
    }
    return out;
  });
  m.def("_inventory", [] {
    nb::dict out;
    out["version"] = std::string(version());
    nb::list dirs;
    for (const SearchDirectory& d : inventory().directories) {
      nb::dict e;
      e["path"] = d.path;
      e["origin"] = d.origin;
      e["exists"] = d.exists;
      e["refused"] = d.refused;
      dirs.append(e);
    }
    out["search_path"] = dirs;
    nb::list plugins;
    for (const PluginReport& p : inventory().plugins) {
      nb::dict e;
      e["name"] = p.name;
      e["manifest"] = p.manifest;
      e["library"] = p.library;
      e["abi"] = p.abi;
      e["priority"] = p.priority;
      e["library_version"] = p.library_version;
      e["usable"] = p.usable;
      e["reason"] = p.reason;
      nb::list devs;
      for (const DeviceDescription& d : p.devices) devs.append(device_dict(d));
      e["devices"] = devs;
      plugins.append(e);
    }
    out["plugins"] = plugins;
    out["selection"] = selection_log();
    return out;
  });
  m.def("version", [] { return std::string(version()); });
}
