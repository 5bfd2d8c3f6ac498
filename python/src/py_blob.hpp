// The Python binding's Blob (PyBlob) and the helpers every part of the binding shares: the
// errors it raises, dtypes and shapes from Python, the GIL and the Blob's lock, and the host
// views .data/.diff. The parts: blob_binding.cpp (blobrt.Blob), dlpack.cpp (DLPack both
// ways), files.cpp (BlobProto files), model_files.cpp (Caffe model files), errors.cpp
// (Python's exception types), blobrt_module.cpp (the module and its runtime functions).
#pragma once

// nanobind's casters for the standard types, in every part alike: a part without one would
// compile nb::cast<std::string> to a failing generic cast (std::bad_cast at run time).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "blob_lock.hpp"
#include "blobrt/blob.hpp"
#include "view_cache.hpp"

namespace blobrt::python {

namespace nb = nanobind;

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
DType dtype_of(nb::handle dtype);

std::vector<int> checked_shape(const std::vector<std::int64_t>& shape);

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
nb::capsule owner_of(std::shared_ptr<SyncedMemory> memory);

inline std::vector<std::size_t> shape_of(const std::vector<int>& shape) { return {shape.begin(), shape.end()}; }

// .data / .diff: the host side, current and marked newest, as a writable NumPy array.
template <typename T>
inline nb::object host_view(Blob<T>& blob, bool diff, HostViewCache& cache) {
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

// The id of the device a Blob's memory lives on ('host:0', 'blis:0'); the active device
// for a Blob that has no memory yet.
std::string device_id_of(const std::shared_ptr<SyncedMemory>& memory);

// A shape as Python writes a tuple: "(2, 3)", "(5,)", "()".
template <typename Int>
std::string shape_repr(const std::vector<Int>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + (shape.size() == 1 ? ",)" : ")");
}

nb::object numpy_dtype(bool is_double);

// A str or os.PathLike path as a string.
std::string path_of(nb::handle path);

// A dimension: anything with __index__ (int, NumPy's integers), as Python's own sequences
// take it; anything else is an InvalidTypeError naming it.
std::int64_t index_of(nb::handle d, const char* who);

// A missing file is MissingFileError (a FileNotFoundError), as open() raises it.
void require_file(const std::string& path);

// .device_data / .device_diff (dlpack.cpp).
template <typename T>
nb::object device_view(Blob<T>& blob, bool diff, PyBlob::ViewCache& cache);

// Blob.from_numpy / from_dlpack: a copy of a float32 or float64 array in a new Blob; `who`
// names the caller in errors (dlpack.cpp).
nb::object from_array(nb::handle x, const char* who);
nb::object from_dlpack(nb::handle x);

// What each part adds to the module (NB_MODULE in blobrt_module.cpp calls them in order).
void register_errors(nb::module_& m);
void register_device_array(nb::module_& m);
void register_blob(nb::module_& m);
void define_blob_array_protocols(nb::class_<PyBlob>& blob);
void register_file_functions(nb::module_& m);
void register_model_file_functions(nb::module_& m);

}  // namespace blobrt::python
