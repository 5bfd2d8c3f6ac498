// pycaffe's one line of data parallelism, C++ side (docs/dist.md, "Caffe across ranks"):
//
//   import caffe, blobrt.caffe
//   blobrt.caffe.data_parallel()          # before caffe.get_solver(...)
//
// This file is compiled into Caffe's own library (libcaffe.so) by caffe-on-blobrt.cmake
// where blobrt has libblobrt-dist and the Caffe tree has Caffe's solvers; with Caffe's
// Makefile, copy it into src/caffe/. pycaffe's extension (_caffe.so) links libcaffe, so
// blobrt.caffe.data_parallel() finds the entry below through the loaded extension
// (ctypes) and calls it. Installed as <datadir>/blobrt/caffe/data_parallel_entry.cpp.
//
// The entry is C: no C++ exception crosses it, and its error is a message in a buffer.
#include <dlfcn.h>

#include <cstddef>
#include <cstring>
#include <exception>
#include <string>

#include "blobrt/caffe/data_parallel.hpp"
#include "caffe/common.hpp"

namespace {

// Open MPI before 3.0 loads its components with dlopen and needs libmpi's symbols in the
// global scope (open-mpi/ompi#3705); a Python extension and what it links are loaded
// RTLD_LOCAL. As mpi4py does, libmpi alone (it is loaded already: this library links it)
// is made global before MPI starts. Harmless where it already is, and for other MPIs.
bool make_libmpi_global() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&MPI_Init_thread), &info) == 0 || info.dli_fname == nullptr) return false;
  // RTLD_NOLOAD: only promotes the copy already loaded; the handle keeps it so, for good.
  return dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) != nullptr;
}

// The process's DataParallel: made by the first call, kept until the process exits.
//
// A function-local static, not a leaked pointer: its destructor (MpiSession's
// MPI_Finalize, where it initialised MPI, and Caffe's solver registries given back) is
// registered with __cxa_atexit once it is constructed, so it runs in exit() after
// Python's own finalisation (Py_FinalizeEx: atexit functions, the modules torn down, so
// pycaffe's solvers and the communicators they hold, which call MPI, are gone first) and
// while libmpi is still mapped (nothing is unloaded at exit). A leaked pointer would
// never call MPI_Finalize, and Open MPI's mpirun then reports the job as failed ("exited
// without calling finalize") even though every rank finished. Where the program (or
// mpi4py) initialised MPI, DataParallel leaves finalising it to them. Thread-safe
// initialisation; a constructor that throws leaves it unmade, and the next call tries again.
blobrt::caffe::DataParallel& data_parallel() {
  static const bool libmpi_global = make_libmpi_global();
  static_cast<void>(libmpi_global);
  static blobrt::caffe::DataParallel instance;
  return instance;
}

void copy_message(const char* message, char* error, std::size_t error_size) {
  if (error == nullptr || error_size == 0) return;
  std::size_t n = std::strlen(message);
  if (n > error_size - 1) n = error_size - 1;
  std::memcpy(error, message, n);
  error[n] = '\0';
}

}  // namespace

// Makes this process's Caffe training data-parallel across the ranks of its MPI job
// (blobrt::caffe::DataParallel, once per process) and returns the number of ranks, or -1
// with the error's message in `error` (at most error_size bytes, NUL-terminated). Later
// calls return the same count; each sets the calling thread's Caffe::solver_count(),
// solver_rank() and multiprocess() (Caffe keeps them per thread).
extern "C" __attribute__((visibility("default"))) int blobrt_caffe_data_parallel(char* error,
                                                                                  std::size_t error_size) {
  try {
    blobrt::caffe::DataParallel& parallel = data_parallel();
    ::caffe::Caffe::set_solver_count(parallel.size());
    ::caffe::Caffe::set_solver_rank(parallel.rank());
    ::caffe::Caffe::set_multiprocess(true);
    return parallel.size();
  } catch (const std::exception& e) {
    copy_message(e.what(), error, error_size);
  } catch (...) {
    copy_message("blobrt_caffe_data_parallel: an exception that is not a std::exception", error, error_size);
  }
  return -1;
}
