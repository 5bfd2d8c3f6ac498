// What Caffe's caffe/common.hpp, caffe/util/rng.hpp and the CUDA-free part of
// caffe/util/device_alternate.hpp give layer code, on blobrt (part of
// <blobrt/caffe_compat.hpp>; docs/differences-from-caffe.md says where it differs).
//
// The random numbers are Caffe's: boost::mt19937 seeded as Caffe's RNG class seeds it
// (set_random_seed, else /dev/urandom as cluster_seedgen), drawn through Boost.Random's
// distributions as Caffe's math_functions.cpp draws them, so a seed gives Caffe's values.
#ifndef BLOBRT_CAFFE_COMMON_HPP
#define BLOBRT_CAFFE_COMMON_HPP

#include <boost/random/mersenne_twister.hpp>
#ifdef BLOBRT_CAFFE_HEADERS
#include <boost/shared_ptr.hpp>
#endif
#include <boost/random/uniform_int.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "blobrt/error.hpp"
#include "blobrt/runtime.hpp"

#ifndef STRINGIFY
#define STRINGIFY(m) #m
#endif
#ifndef AS_STRING
#define AS_STRING(m) STRINGIFY(m)
#endif

#ifndef DISABLE_COPY_AND_ASSIGN
#define DISABLE_COPY_AND_ASSIGN(classname) \
 private:                                  \
  classname(const classname&);             \
  classname& operator=(const classname&)
#endif

#ifndef INSTANTIATE_CLASS
#define INSTANTIATE_CLASS(classname)   \
  char gInstantiationGuard##classname; \
  template class classname<float>;     \
  template class classname<double>
#endif

#ifndef INSTANTIATE_LAYER_GPU_FORWARD
#define INSTANTIATE_LAYER_GPU_FORWARD(classname)                                                               \
  template void classname<float>::Forward_gpu(const std::vector<Blob<float>*>& bottom,                         \
                                              const std::vector<Blob<float>*>& top);                           \
  template void classname<double>::Forward_gpu(const std::vector<Blob<double>*>& bottom,                       \
                                               const std::vector<Blob<double>*>& top);
#define INSTANTIATE_LAYER_GPU_BACKWARD(classname)                                                              \
  template void classname<float>::Backward_gpu(const std::vector<Blob<float>*>& top,                           \
                                               const std::vector<bool>& propagate_down,                        \
                                               const std::vector<Blob<float>*>& bottom);                       \
  template void classname<double>::Backward_gpu(const std::vector<Blob<double>*>& top,                         \
                                                const std::vector<bool>& propagate_down,                       \
                                                const std::vector<Blob<double>*>& bottom)
#define INSTANTIATE_LAYER_GPU_FUNCS(classname) \
  INSTANTIATE_LAYER_GPU_FORWARD(classname);    \
  INSTANTIATE_LAYER_GPU_BACKWARD(classname)
#endif

// Caffe: LOG(FATAL). Here a blobrt::Error naming where.
#ifndef NOT_IMPLEMENTED
#define NOT_IMPLEMENTED ::blobrt::detail::fail("Not Implemented Yet (", __FILE__, ":", __LINE__, ")")
#endif
#ifndef NO_GPU
#define NO_GPU ::blobrt::detail::fail("Cannot use GPU in CPU-only Caffe: check mode (", __FILE__, ":", __LINE__, ")")
#endif

// Caffe's CPU_ONLY stubs. Caffe's make a GPU-mode Forward/Backward fail; blobrt's run the
// CPU code instead (on data the device side syncs back), so a layer built without its .cu
// file works in GPU mode on every backend (docs/differences-from-caffe.md).
#ifndef STUB_GPU
#define STUB_GPU(classname)                                                                                    \
  template <typename Dtype>                                                                                    \
  void classname<Dtype>::Forward_gpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) {    \
    Forward_cpu(bottom, top);                                                                                  \
  }                                                                                                            \
  template <typename Dtype>                                                                                    \
  void classname<Dtype>::Backward_gpu(const vector<Blob<Dtype>*>& top, const vector<bool>& propagate_down,     \
                                      const vector<Blob<Dtype>*>& bottom) {                                    \
    Backward_cpu(top, propagate_down, bottom);                                                                 \
  }
#define STUB_GPU_FORWARD(classname, funcname)                                                                  \
  template <typename Dtype>                                                                                    \
  void classname<Dtype>::funcname##_##gpu(const vector<Blob<Dtype>*>& bottom, const vector<Blob<Dtype>*>& top) { \
    funcname##_##cpu(bottom, top);                                                                             \
  }
#define STUB_GPU_BACKWARD(classname, funcname)                                                                 \
  template <typename Dtype>                                                                                    \
  void classname<Dtype>::funcname##_##gpu(const vector<Blob<Dtype>*>& top, const vector<bool>& propagate_down, \
                                          const vector<Blob<Dtype>*>& bottom) {                                \
    funcname##_##cpu(top, propagate_down, bottom);                                                             \
  }
#endif

// Caffe's CUDA launch geometry (CUDA-free arithmetic some layer code reads).
#ifndef CAFFE_CUDA_NUM_THREADS
#define CAFFE_CUDA_NUM_THREADS 512
#endif

namespace cv { class Mat; }

namespace caffe {

using std::fstream;
using std::ifstream;
using std::ios;
using std::isinf;
using std::isnan;
using std::iterator;
using std::make_pair;
using std::map;
using std::ostringstream;
using std::pair;
using std::set;
#ifdef BLOBRT_CAFFE_HEADERS
// With blobrt-caffe's caffe/*.hpp headers, Caffe's own choice (common.hpp: using
// boost::shared_ptr), so that Caffe code spelling boost::shared_ptr<Blob<Dtype> > for what
// Net returns (tools/extract_features.cpp) compiles as it does on Caffe.
using boost::shared_ptr;
#else
using std::shared_ptr;
#endif
using std::string;
using std::stringstream;
using std::vector;

inline int CAFFE_GET_BLOCKS(const int N) { return (N + CAFFE_CUDA_NUM_THREADS - 1) / CAFFE_CUDA_NUM_THREADS; }

// Caffe's generator type (caffe/util/rng.hpp).
typedef boost::mt19937 rng_t;

// Caffe's seed when none is set: 8 bytes of /dev/urandom, else Caffe's fallback formula.
inline std::int64_t cluster_seedgen() {
  std::int64_t seed = 0;
  if (FILE* f = std::fopen("/dev/urandom", "rb")) {
    const bool read = std::fread(&seed, 1, sizeof(seed), f) == sizeof(seed);
    std::fclose(f);
    if (read) return seed;
  }
  const std::int64_t pid = getpid(), s = std::time(nullptr);
  return std::abs(((s * 181) * ((pid - 83) * 359)) % 104729);
}

// Flags and logging are the program's own business here: accepted and left alone. With
// blobrt-caffe's caffe/*.hpp headers (BLOBRT_CAFFE_HEADERS) it is Caffe's: gflags, glog and
// the failure handler, in libblobrt-caffe.
#ifndef BLOBRT_CAFFE_HEADERS
inline void GlobalInit(int* /*pargc*/, char*** /*pargv*/) {}
#endif

// Caffe's per-thread context. The mode says where Caffe code wants its math
// (caffe_copy follows it, as Caffe's); the device is the calling thread's current blobrt
// device (blobrt/runtime.hpp): SetDevice selects it for this thread only, as Caffe's
// cudaSetDevice does, and a thread that set none follows the process default.
class Caffe {
 public:
  enum Brew { CPU, GPU };

  // Caffe's facade over the generator: generator() is a caffe::rng_t*.
  class RNG {
   public:
    RNG() : generator_(std::make_shared<rng_t>(static_cast<rng_t::result_type>(cluster_seedgen()))) {}
    explicit RNG(unsigned int seed) : generator_(std::make_shared<rng_t>(seed)) {}
    RNG(const RNG& other) = default;
    RNG& operator=(const RNG& other) = default;
    void* generator() { return static_cast<void*>(generator_.get()); }

   private:
    std::shared_ptr<rng_t> generator_;
  };

  // The calling thread's (one per process and thread, in libblobrt: every library of a
  // process sees the same).
  static Caffe& Get();

  static RNG& rng_stream() {
    if (!Get().random_generator_) Get().random_generator_ = std::make_shared<RNG>();
    return *Get().random_generator_;
  }

  static Brew mode() { return Get().mode_; }
  static void set_mode(Brew mode) {
#ifdef BLOBRT_CAFFE_CHECK_GPU_DEVICE
    // Caffe's portable build (blobrt-caffe's portable/device_runtime.hpp): GPU mode's device must take
    // the offset handles Caffe's GPU code makes.
    if (mode == GPU) BLOBRT_CAFFE_CHECK_GPU_DEVICE();
#endif
    Get().mode_ = mode;
  }
  // As Caffe's: the host generator and the device's stream both start from the seed.
  // (Defined in libblobrt, as take_device_words: they use members a libblobrt.so.1 from before
  // them would not have made; a program built with these headers against one fails to link
  // rather than writing past its Caffe.)
  static void set_random_seed(const unsigned int seed);

  // GPU mode's random words (blobrt's bernoulli_mask: the Philox4x32-10 stream, where Caffe's
  // GPU code draws from cuRAND's generator): the key and the first word of the next `count`,
  // which the calling thread's stream then moves past. The key is the seed set_random_seed
  // gave, as Caffe seeds cuRAND with it, else one from cluster_seedgen, as Caffe's generator
  // is seeded when no seed is set. Each draw starts at a block of four words.
  struct DeviceWords {
    std::int64_t seed;
    std::int64_t counter;
  };
  static DeviceWords take_device_words(std::int64_t count);

  // Caffe's device ordinals are the indices of the current backend's devices ("opencl:1"
  // is device 1 in an OpenCL program): SetDevice selects one for the calling thread (the
  // process default and other threads keep theirs), the others only look.
  static void SetDevice(const int device_id) {
    blobrt::select_thread_device(device_spec(device_id));
#ifdef BLOBRT_CAFFE_AFTER_SET_DEVICE
    // A CUDA build of Caffe's sources (blobrt-caffe's device_alternate.hpp): the CUDA
    // runtime's current device, where Caffe's own kernels launch, follows.
    BLOBRT_CAFFE_AFTER_SET_DEVICE();
#endif
#ifdef BLOBRT_CAFFE_CHECK_GPU_DEVICE
    if (mode() == GPU) BLOBRT_CAFFE_CHECK_GPU_DEVICE();
#endif
  }
  static bool CheckDevice(const int device_id) {
    if (device_id < 0) return false;
    try {
      return blobrt::open_device(device_spec(device_id)) != nullptr;
    } catch (const blobrt::Error&) {
      return false;
    }
  }
  static int FindDevice(const int start_id = 0) {
    for (int id = std::max(start_id, 0); id < 64; ++id) {
      if (CheckDevice(id)) return id;
    }
    return -1;
  }
  // Caffe logs the CUDA device's properties; here the thread's current device's description.
  static void DeviceQuery() {
    const blobrt::DeviceDescription& d = blobrt::current_device()->description();
    std::clog << "Device id:                     " << d.id() << "\n"
              << "Name:                          " << d.name << "\n"
              << "Kind:                          " << blobrt::to_string(d.kind) << "\n"
              << "Memory model:                  " << blobrt::to_string(d.memory_model) << "\n"
              << "Total memory:                  " << d.memory_bytes << "\n"
              << "Double precision:              " << (d.supports_fp64 ? "Yes" : "No") << "\n"
              << "Details:                       " << d.details << std::endl;
  }

  // Parallel training, as Caffe keeps it (libblobrt-dist programs set rank and count).
  static int solver_count() { return Get().solver_count_; }
  static void set_solver_count(int val) { Get().solver_count_ = val; }
  static int solver_rank() { return Get().solver_rank_; }
  static void set_solver_rank(int val) { Get().solver_rank_ = val; }
  static bool multiprocess() { return Get().multiprocess_; }
  static void set_multiprocess(bool val) { Get().multiprocess_ = val; }
  static bool root_solver() { return Get().root_solver_ && Get().solver_rank_ == 0; }
  // Caffe before 2017 (the forks SSD, OpenPose and py-faster-rcnn were made from) kept the
  // root flag itself, per thread: its InternalThread hands a new thread the parent's
  // set_root_solver(root_solver()), its P2PSync workers say false. Kept beside the rank.
  static void set_root_solver(bool val) { Get().root_solver_ = val; }

 private:
  Caffe() = default;
  Caffe(const Caffe&) = delete;
  Caffe& operator=(const Caffe&) = delete;

  static std::string device_spec(int device_id) {
    if (device_id < 0) blobrt::detail::fail("Caffe::SetDevice: device id ", device_id, " is negative");
    const std::string active = blobrt::current_device_id();  // "blis:0"
    return active.substr(0, active.find(':')) + ":" + std::to_string(device_id);
  }

  std::shared_ptr<RNG> random_generator_;
  Brew mode_ = CPU;
  int solver_count_ = 1;
  int solver_rank_ = 0;
  bool root_solver_ = true;
  bool multiprocess_ = false;
  std::int64_t device_seed_ = -1;  // take_device_words' key; -1: none yet
  std::int64_t device_counter_ = 0;  // its next word
};

// caffe/util/rng.hpp
inline rng_t* caffe_rng() { return static_cast<rng_t*>(Caffe::rng_stream().generator()); }

template <class RandomAccessIterator, class RandomGenerator>
inline void shuffle(RandomAccessIterator begin, RandomAccessIterator end, RandomGenerator* gen) {
  typedef typename std::iterator_traits<RandomAccessIterator>::difference_type difference_type;
  typedef typename boost::uniform_int<difference_type> dist_type;
  difference_type length = std::distance(begin, end);
  if (length <= 0) return;
  for (difference_type i = length - 1; i > 0; --i) {
    dist_type dist(0, i);
    std::iter_swap(begin + i, begin + dist(*gen));
  }
}

template <class RandomAccessIterator>
inline void shuffle(RandomAccessIterator begin, RandomAccessIterator end) {
  shuffle(begin, end, caffe_rng());
}

}  // namespace caffe

#endif  // BLOBRT_CAFFE_COMMON_HPP
