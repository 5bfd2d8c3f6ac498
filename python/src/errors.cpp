// blobrt.Error and its subclasses, and how blobrt's C++ errors become them.
#include <cerrno>

#include "py_blob.hpp"

namespace blobrt::python {

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

}  // namespace blobrt::python
