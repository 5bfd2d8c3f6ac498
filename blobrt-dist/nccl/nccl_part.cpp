// libblobrt-dist-nccl.so: NCCL collectives for libblobrt-dist on CUDA devices. Each call
// runs on a stream of its own and waits for it: the caller has synchronised the CUDA
// plugin's stream before (Device::synchronize), so the order of writes is kept.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>

#include "dist_nccl_abi.h"

namespace {

struct Comm {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int device = 0;
};

int fail(char* err, size_t size, const char* what, const char* reason) {
  std::snprintf(err, size, "%s: %s", what, reason);
  return 1;
}
#define NCCL_TRY(call)                                                      \
  do {                                                                      \
    ncclResult_t r_ = (call);                                               \
    if (r_ != ncclSuccess) return fail(err, err_size, #call, ncclGetErrorString(r_)); \
  } while (0)
#define CUDA_TRY(call)                                                      \
  do {                                                                      \
    cudaError_t e_ = (call);                                                \
    if (e_ != cudaSuccess) return fail(err, err_size, #call, cudaGetErrorName(e_)); \
  } while (0)

int version(char* text, size_t size) {
  int nccl = 0, runtime = 0;
  if (ncclGetVersion(&nccl) != ncclSuccess) return 1;
  cudaRuntimeGetVersion(&runtime);
  std::snprintf(text, size, "NCCL %d.%d.%d (CUDA runtime %d)", nccl / 10000, (nccl / 100) % 100, nccl % 100,
                runtime);
  return 0;
}

int unique_id(unsigned char id[BLOBRT_DIST_NCCL_ID_BYTES], char* err, size_t err_size) {
  ncclUniqueId u;
  NCCL_TRY(ncclGetUniqueId(&u));
  static_assert(sizeof u == BLOBRT_DIST_NCCL_ID_BYTES, "NCCL_UNIQUE_ID_BYTES changed");
  std::memcpy(id, &u, sizeof u);
  return 0;
}

int init(const unsigned char id[BLOBRT_DIST_NCCL_ID_BYTES], int ranks, int rank, int device, void** out,
         char* err, size_t err_size) {
  ncclUniqueId u;
  std::memcpy(&u, id, sizeof u);
  CUDA_TRY(cudaSetDevice(device));
  Comm* c = new Comm;
  c->device = device;
  cudaError_t e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    delete c;
    return fail(err, err_size, "cudaStreamCreateWithFlags", cudaGetErrorName(e));
  }
  ncclResult_t r = ncclCommInitRank(&c->comm, ranks, u, rank);
  if (r != ncclSuccess) {
    cudaStreamDestroy(c->stream);
    delete c;
    return fail(err, err_size, "ncclCommInitRank", ncclGetErrorString(r));
  }
  *out = c;
  return 0;
}

int allreduce(void* comm, void* data, size_t count, int is_double, int mean, char* err, size_t err_size) {
  Comm* c = static_cast<Comm*>(comm);
  CUDA_TRY(cudaSetDevice(c->device));
  NCCL_TRY(ncclAllReduce(data, data, count, is_double ? ncclFloat64 : ncclFloat32, mean ? ncclAvg : ncclSum,
                         c->comm, c->stream));
  CUDA_TRY(cudaStreamSynchronize(c->stream));
  return 0;
}

int broadcast(void* comm, void* data, size_t bytes, int root, char* err, size_t err_size) {
  Comm* c = static_cast<Comm*>(comm);
  CUDA_TRY(cudaSetDevice(c->device));
  NCCL_TRY(ncclBroadcast(data, data, bytes, ncclUint8, root, c->comm, c->stream));
  CUDA_TRY(cudaStreamSynchronize(c->stream));
  return 0;
}

void destroy(void* comm) {
  Comm* c = static_cast<Comm*>(comm);
  ncclCommDestroy(c->comm);
  cudaStreamDestroy(c->stream);
  delete c;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const blobrt_dist_nccl_v1* blobrt_dist_nccl_entry_v1(void) {
  static const blobrt_dist_nccl_v1 table = {sizeof(blobrt_dist_nccl_v1), version, unique_id, init,
                                            allreduce, broadcast, destroy};
  return &table;
}
