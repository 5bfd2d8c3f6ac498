// One training iteration of a Caffe net in GPU mode on blobrt: the bytes SyncedMemory moved
// between host and device (blobrt's transfer counters), for a whole Solver::Step and per
// layer and pass. Built and run against a Caffe checkout built on blobrt by run.sh.
//   traffic SOLVER.prototxt
// The data layers' prefetch thread pushes each batch to the device ahead of its use; every
// reading first gives that thread 300 ms to refill its queue (a batch of LeNet's takes a few
// ms), so a step's count holds one batch's push (the data and the labels).
#include <caffe/caffe.hpp>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <thread>

#include <blobrt/transfer_counters.hpp>

namespace {

blobrt::TransferCounters settled() {
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the prefetch thread's refill
  return blobrt::transfer_counters();
}

void report(const std::string& what, const blobrt::TransferCounters& c) {
  std::printf("%-28s host_to_device %10" PRIu64 "  device_to_host %10" PRIu64 "\n", what.c_str(), c.host_to_device,
              c.device_to_host);
}

}  // namespace

int main(int argc, char** argv) {
  caffe::GlobalInit(&argc, &argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: traffic SOLVER.prototxt\n");
    return 2;
  }
  caffe::SolverParameter param;
  caffe::ReadSolverParamsFromTextFileOrDie(argv[1], &param);
  param.set_solver_mode(caffe::SolverParameter_SolverMode_GPU);
  caffe::Caffe::SetDevice(0);
  caffe::Caffe::set_mode(caffe::Caffe::GPU);
  boost::shared_ptr<caffe::Solver<float>> solver(caffe::SolverRegistry<float>::CreateSolver(param));
  solver->Step(3);  // allocations and the weights' first placement
  settled();
  caffe::Net<float>& net = *solver->net();
  std::uint64_t batch = 0;
  for (int i = 0; i < static_cast<int>(net.layers().size()); ++i) {
    if (net.bottom_vecs()[i].empty()) {  // a data layer: its tops are the batch
      for (const caffe::Blob<float>* top : net.top_vecs()[i]) batch += top->count() * sizeof(float);
    }
  }
  std::printf("batch (the data layers' tops): %" PRIu64 " bytes\n", batch);
  blobrt::reset_transfer_counters();
  solver->Step(1);
  report("Solver::Step(1)", settled());
  for (int i = 0; i < static_cast<int>(net.layers().size()); ++i) {
    blobrt::reset_transfer_counters();
    net.ForwardFromTo(i, i);
    report("forward  " + net.layer_names()[i] + " (" + net.layers()[i]->type() + ")", settled());
  }
  for (int i = static_cast<int>(net.layers().size()) - 1; i >= 0; --i) {
    blobrt::reset_transfer_counters();
    net.BackwardFromTo(i, i);
    report("backward " + net.layer_names()[i] + " (" + net.layers()[i]->type() + ")", settled());
  }
  return 0;
}
