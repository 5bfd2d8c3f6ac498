// Serialisation of a 16 Mi-float Blob (64 MiB): ToProto/FromProto against the
// per-element loops Caffe uses (add_data(), data(i)), to and from bytes, and save/load
// through the file helpers on a file in the page cache, all in the same run.
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
    } else if (op == "to_proto") {  // ToProto alone
      BlobProto p;
      blob.ToProto(&p);
      benchmark::DoNotOptimize(p.data().data());
    } else if (op == "to_proto_add_data_loop") {  // Caffe's ToProto: one add_data() per element
      BlobProto p;
      p.mutable_shape()->add_dim(blob.count());
      const float* data = blob.cpu_data();
      for (std::int64_t i = 0; i < blob.count(); ++i) p.add_data(data[i]);
      benchmark::DoNotOptimize(p.data().data());
    } else if (op == "from_proto") {  // FromProto alone
      blob.FromProto(proto);
    } else if (op == "from_proto_element_loop") {  // Caffe's FromProto: one data(i) per element
      float* data = blob.mutable_cpu_data();
      for (std::int64_t i = 0; i < blob.count(); ++i) data[i] = proto.data(static_cast<int>(i));
      benchmark::DoNotOptimize(data);
    }
  }
  state.SetBytesProcessed(state.iterations() * count() * 4);
  std::remove(path().c_str());
}

}  // namespace

void register_proto() {
  for (const char* op : {"to_proto", "to_proto_add_data_loop", "from_proto", "from_proto_element_loop", "to_bytes",
                         "from_bytes", "save", "load"}) {
    std::string o = op;
    reg(name("proto", "host", o, "float", count()),
                                 [o](benchmark::State& s) { proto_op(s, o); })
        ->Repetitions(smoke() ? 1 : 5)
        ->ReportAggregatesOnly(!smoke())
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace blobrt::bench
