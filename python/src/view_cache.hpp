// The last NumPy array .data / .diff handed out, given again only when no caller can see
// it: nothing but the cache holds it (reference count 1) and it is as it was made (same
// data pointer, shape, strides, dtype and flags). So .data stays a head check in the
// pycaffe hot loop (`b.data[...] = x`, the temporary gone before the next access), while a
// caller that keeps its array, marks it read-only, reshapes it in place or changes its
// dtype never changes what the next caller gets: that caller gets an array of its own.
#ifndef BLOBRT_PYTHON_VIEW_CACHE_HPP
#define BLOBRT_PYTHON_VIEW_CACHE_HPP

#include <vector>

#include <nanobind/nanobind.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/ndarraytypes.h>  // the PyArrayObject fields only: no NumPy C-API table needed

namespace blobrt::python {

class HostViewCache {
 public:
  // The cached array if it can be handed to a new caller for this memory, pointer and shape.
  PyObject* reusable(const void* memory, const void* pointer, const std::vector<int>& shape) const {
    if (!array_.is_valid() || memory_ != memory || pointer_ != pointer || shape_ != shape) return nullptr;
    PyObject* a = array_.ptr();
    if (Py_REFCNT(a) != 1) return nullptr;  // a caller still holds it (or a view of it)
    auto* arr = reinterpret_cast<PyArrayObject*>(a);
    if (PyArray_DATA(arr) != made_.data || PyArray_FLAGS(arr) != made_.flags ||
        reinterpret_cast<PyObject*>(PyArray_DESCR(arr)) != made_.descr || PyArray_NDIM(arr) != made_.ndim) {
      return nullptr;
    }
    for (int i = 0; i < made_.ndim; ++i) {
      if (PyArray_DIMS(arr)[i] != made_.dims[i] || PyArray_STRIDES(arr)[i] != made_.strides[i]) return nullptr;
    }
    return a;
  }

  // Keeps `array` (a NumPy array just made) as the one to hand out again.
  const nanobind::object& keep(nanobind::object array, const void* memory, const void* pointer,
                               const std::vector<int>& shape) {
    auto* arr = reinterpret_cast<PyArrayObject*>(array.ptr());
    made_.data = PyArray_DATA(arr);
    made_.flags = PyArray_FLAGS(arr);
    made_.descr = reinterpret_cast<PyObject*>(PyArray_DESCR(arr));
    made_.ndim = PyArray_NDIM(arr);
    made_.dims.assign(PyArray_DIMS(arr), PyArray_DIMS(arr) + made_.ndim);
    made_.strides.assign(PyArray_STRIDES(arr), PyArray_STRIDES(arr) + made_.ndim);
    array_ = std::move(array);
    memory_ = memory;
    pointer_ = pointer;
    shape_ = shape;
    return array_;
  }

 private:
  struct Made {
    void* data = nullptr;
    int flags = 0;
    PyObject* descr = nullptr;  // the cache's array holds its descr, so the address stays valid
    int ndim = 0;
    std::vector<npy_intp> dims, strides;
  };
  nanobind::object array_;
  const void* memory_ = nullptr;
  const void* pointer_ = nullptr;
  std::vector<int> shape_;
  Made made_;
};

}  // namespace blobrt::python

#endif  // BLOBRT_PYTHON_VIEW_CACHE_HPP
