// blobrt.Blob: construction, NumPy's attributes, Caffe's shape accessors, the views of data
// and diff, Caffe's Blob math, BlobProto files and copies (DLPack: dlpack.cpp).

#include "py_blob.hpp"
#include "blobrt/io.hpp"

namespace blobrt::python {

using namespace nb::literals;

namespace {

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

}  // namespace

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

}  // namespace blobrt::python
