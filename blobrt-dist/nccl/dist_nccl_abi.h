/* The C table between libblobrt-dist and its NCCL part, libblobrt-dist-nccl.so: the part
 * that links NCCL and the CUDA runtime, installed only on GPU nodes (install tag "cuda")
 * and loaded at run time, so libblobrt-dist itself runs on nodes without CUDA.
 * Same rules as plugin_abi.h: struct_size first, fields only appended, no C++ across. */
#ifndef BLOBRT_DIST_NCCL_ABI_H
#define BLOBRT_DIST_NCCL_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BLOBRT_DIST_NCCL_ENTRY_SYMBOL "blobrt_dist_nccl_entry_v1"
#define BLOBRT_DIST_NCCL_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */

typedef struct blobrt_dist_nccl_v1 {
  size_t struct_size;
  /* "NCCL 2.27.7 (CUDA runtime 13000)", into text; 0 on success. */
  int (*version)(char* text, size_t size);
  /* On one rank; the id goes to the others through MPI. */
  int (*unique_id)(unsigned char id[BLOBRT_DIST_NCCL_ID_BYTES], char* err, size_t err_size);
  int (*init)(const unsigned char id[BLOBRT_DIST_NCCL_ID_BYTES], int ranks, int rank, int cuda_device,
              void** comm, char* err, size_t err_size);
  /* In place on device memory; returns when the result is in memory. mean: ncclAvg. */
  int (*allreduce)(void* comm, void* data, size_t count, int is_double, int mean, char* err, size_t err_size);
  int (*broadcast)(void* comm, void* data, size_t bytes, int root, char* err, size_t err_size);
  void (*destroy)(void* comm);
} blobrt_dist_nccl_v1;

typedef const blobrt_dist_nccl_v1* (*blobrt_dist_nccl_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif
