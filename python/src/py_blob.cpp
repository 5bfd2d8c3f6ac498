// The helpers py_blob.hpp declares.
#include "py_blob.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "blobrt/runtime.hpp"

namespace blobrt::python {

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

// A capsule that owns a reference to `memory`: what keeps a view's bytes alive.
nb::capsule owner_of(std::shared_ptr<SyncedMemory> memory) {
  auto* keep = new std::shared_ptr<SyncedMemory>(std::move(memory));
  return nb::capsule(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<SyncedMemory>*>(p); });
}

// The id of the device a Blob's memory lives on ('host:0', 'blis:0'); the active device
// for a Blob that has no memory yet.
std::string device_id_of(const std::shared_ptr<SyncedMemory>& memory) {
  if (memory && memory->device()) return memory->device()->description().id();
  return current_device_id();
}

nb::object numpy_dtype(bool is_double) {
  return nb::module_::import_("numpy").attr("dtype")(is_double ? "float64" : "float32");
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

}  // namespace blobrt::python
