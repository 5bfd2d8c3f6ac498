// Serialisation of a 16 Mi-float Blob (64 MiB): to and from bytes, and save/load through
// the file helpers on a file in the page cache; against the per-element add_data() loop
// that Caffe's ToProto uses, in the same run.
#include <cstdio>
#include <string>
#include <unistd.h>

#include "bench_common.hpp"
#include "blobrt/blob.hpp"
#include "blobrt/io.hpp"
#include "blobrt/runtime.hpp"

namespace blobrt::bench {
namespace {

std::int64_t count() { return smoke() ? (1 << 12) : (1 << 24); }

std::string path() { return "/tmp/blobrt_bench_" + std::to_string(::getpid()) + ".binaryproto"; }

void prepare(Blob<float>& blob) {
  blob.Reshape(std::vector<int>{static_cast<int>(count())});
  float* data = blob.mutable_cpu_data();
  for (std::int64_t i = 0; i < blob.count(); ++i) data[i] = float(i % 1000) * 0.5f;
}

void proto_op(benchmark::State& state, const std::string& op) {
  select_backend("host");
  Blob<float> blob;
  prepare(blob);
  BlobProto proto;
  blob.ToProto(&proto);
  std::string bytes;
  proto.SerializeToString(&bytes);
  WriteProtoToBinaryFile(proto, path());
  for (auto _ : state) {
    if (op == "to_bytes") {  // ToProto + SerializeToString
      BlobProto p;
      blob.ToProto(&p);
      std::string out;
      p.SerializeToString(&out);
      benchmark::DoNotOptimize(out.data());
    } else if (op == "from_bytes") {  // ParseFromString + FromProto
      BlobProto p;
      p.ParseFromString(bytes);
      blob.FromProto(p);
    } else if (op == "save") {  // ToProto + WriteProtoToBinaryFile
      BlobProto p;
      blob.ToProto(&p);
      WriteProtoToBinaryFile(p, path());
    } else if (op == "load") {  // ReadProtoFromBinaryFile + FromProto
      BlobProto p;
      ReadProtoFromBinaryFile(path(), &p);
      blob.FromProto(p);
    } else if (op == "add_data_loop") {  // Caffe's ToProto: one add_data() per element
      BlobProto p;
      p.mutable_shape()->add_dim(blob.count());
      const float* data = blob.cpu_data();
      for (std::int64_t i = 0; i < blob.count(); ++i) p.add_data(data[i]);
      std::string out;
      p.SerializeToString(&out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * count() * 4);
  std::remove(path().c_str());
}

}  // namespace

void register_proto() {
  for (const char* op : {"to_bytes", "from_bytes", "save", "load", "add_data_loop"}) {
    std::string o = op;
    reg(name("proto", "host", o, "float", count()),
                                 [o](benchmark::State& s) { proto_op(s, o); })
        ->Repetitions(smoke() ? 1 : 5)
        ->ReportAggregatesOnly(!smoke())
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace blobrt::bench
