// DLPack both ways: a Blob's device memory exported (blobrt.DeviceArray, .device_data,
// Blob.__dlpack__) and arrays imported by copy (Blob.from_dlpack, Blob.from_numpy).

#include <cstring>
#include <type_traits>

#include "py_blob.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt::python {

using namespace nb::literals;

namespace {

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

}  // namespace

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
template nb::object device_view(Blob<float>&, bool, PyBlob::ViewCache&);
template nb::object device_view(Blob<double>&, bool, PyBlob::ViewCache&);

namespace {

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

}  // namespace

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

}  // namespace blobrt::python
