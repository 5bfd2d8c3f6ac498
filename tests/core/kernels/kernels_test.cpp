// The host kernels (core/kernels/blobrt_kernels): streaming stores for large copies must
// copy exactly what memcpy does, whatever the alignment of either end; the work-sharing
// team (parallel.hpp, thread_team.hpp) must give the serial result for every size and
// team, keep reductions deterministic, take concurrent callers, be sized as
// team_size.hpp says, and never wait for a helper that is not running.
#include <gtest/gtest.h>

#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "blobrt_kernels/bernoulli_mask.hpp"
#include "blobrt_kernels/huge_pages.hpp"
#include "blobrt_kernels/level1.hpp"
#include "blobrt_kernels/memory_limit.hpp"
#include "blobrt_kernels/stream_copy.hpp"
#include "blobrt_kernels/team_size.hpp"

namespace {

std::vector<unsigned char> pattern(std::size_t bytes, unsigned seed) {
  std::vector<unsigned char> v(bytes);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<unsigned char>(x >> 24);
  }
  return v;
}

// The random stream of bernoulli_mask is Philox4x32-10: Random123's known answers
// (kat_vectors: counter, key, the block), and the stream's words laid out as
// blobrt/math_operations.h says (word w is lane w % 4 of block w / 4, the block number in the
// counter's first two words, the seed in the key).
TEST(PhiloxTest, KnownAnswersOfRandom123) {
  using blobrt_kernels::Philox4x32;
  EXPECT_EQ(Philox4x32::block({0, 0, 0, 0}, 0, 0), (Philox4x32::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32::block({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff),
            (Philox4x32::Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32::block({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0),
            (Philox4x32::Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  EXPECT_EQ(Philox4x32::words(0, 0), Philox4x32::block({0, 0, 0, 0}, 0, 0));
  EXPECT_EQ(Philox4x32::words(0x0000000500000007ull, 0x0000000300000002ull), Philox4x32::block({2, 3, 0, 0}, 7, 5));
}

TEST(PhiloxTest, TheMaskIsTheStreamsWordsAgainstTheThreshold) {
  using blobrt_kernels::MathArgs;
  using blobrt_kernels::MathOp;
  using blobrt_kernels::Philox4x32;
  // From word 5 (inside the second block) for 11 words: the end of block 1, blocks 2 and 3.
  std::vector<double> mask(11, -1);
  const MathArgs<MathOp::bernoulli_mask> args{BLOBRT_FLOAT64, 11, 1703, 5, 2147483647, mask.data(), 0};
  ASSERT_EQ(blobrt_kernels::invalid_arguments(args), nullptr);
  ASSERT_EQ(blobrt_kernels::run_in_place(args, nullptr), BLOBRT_OK);
  for (std::uint64_t i = 0; i < 11; ++i) {
    const std::uint32_t word = Philox4x32::words(1703, (5 + i) / 4)[(5 + i) % 4];
    EXPECT_EQ(mask[i], word > 2147483647u ? 1.0 : 0.0) << i;
  }
  const MathArgs<MathOp::bernoulli_mask> wide{BLOBRT_FLOAT64, 1, 0, 0, std::int64_t{1} << 32, mask.data(), 0};
  EXPECT_NE(blobrt_kernels::invalid_arguments(wide), nullptr) << "a threshold of 2^32";
  const MathArgs<MathOp::bernoulli_mask> past{BLOBRT_FLOAT64, 2, 0, INT64_MAX - 1, 0, mask.data(), 0};
  EXPECT_NE(blobrt_kernels::invalid_arguments(past), nullptr) << "words past 2^63";
}

// Every length from 0 to 300 bytes at every alignment of source and destination within
// 16 bytes: the head (up to alignment), the 64-byte streaming body and the tail.
TEST(StreamCopyTest, EveryHeadAndTailMatchesMemcpy) {
  const std::vector<unsigned char> src = pattern(400, 1);
  for (std::size_t dst_off = 0; dst_off < 16; ++dst_off) {
    for (std::size_t src_off = 0; src_off < 16; src_off += 5) {
      for (std::size_t bytes = 0; bytes <= 300; ++bytes) {
        std::vector<unsigned char> dst(400, 0xee), want(400, 0xee);
        blobrt_kernels::stream_copy(reinterpret_cast<char*>(dst.data()) + dst_off,
                                    reinterpret_cast<const char*>(src.data()) + src_off, bytes);
        std::memcpy(want.data() + dst_off, src.data() + src_off, bytes);
        ASSERT_EQ(dst, want) << "dst offset " << dst_off << ", src offset " << src_off << ", " << bytes << " bytes";
      }
    }
  }
}

// A copy above the streaming threshold, split across threads, at odd offsets.
TEST(StreamCopyTest, LargeCopyBytesAboveTheThresholdIsExact) {
  const std::size_t bytes = blobrt_kernels::kStreamingCopyBytes + 4099;
  const std::vector<unsigned char> src = pattern(bytes + 8, 2);
  std::vector<unsigned char> dst(bytes + 16, 0xee);
  blobrt_kernels::copy_bytes(dst.data() + 3, src.data() + 5, bytes);
  EXPECT_EQ(dst[0], 0xee);
  EXPECT_EQ(dst[2], 0xee);
  EXPECT_EQ(std::memcmp(dst.data() + 3, src.data() + 5, bytes), 0);
  EXPECT_EQ(dst[bytes + 3], 0xee);
}

// Overlapping ranges keep memmove semantics (one thread, no streaming).
TEST(StreamCopyTest, OverlappingLargeCopyIsAMove) {
  const std::size_t bytes = blobrt_kernels::kStreamingCopyBytes + 64;
  std::vector<unsigned char> buffer = pattern(bytes + 1000, 3);
  std::vector<unsigned char> want = buffer;
  std::memmove(want.data() + 1000, want.data(), bytes);
  blobrt_kernels::copy_bytes(buffer.data() + 1000, buffer.data(), bytes);
  EXPECT_TRUE(buffer == want);
}

// The team's tests set its size; each puts the size back as it found it.
class TeamSize {
 public:
  explicit TeamSize(int threads) : saved_(blobrt_kernels::team_size()) { blobrt_kernels::set_team_size(threads); }
  ~TeamSize() { blobrt_kernels::set_team_size(saved_); }

 private:
  int saved_;
};

// Sizes at and around every boundary the split has: the threshold, one chunk, a
// multiple of the chunk, the largest job that still has minimum-size chunks, and above.
std::vector<std::int64_t> split_sizes() {
  const std::int64_t t = blobrt_kernels::kParallelThreshold;
  const std::int64_t quarter = t / 4, most = quarter * blobrt_kernels::kMaxChunks;
  std::vector<std::int64_t> sizes;
  for (std::int64_t base : {t, 2 * t, 3 * quarter + t, most, 3 * most}) {
    for (std::int64_t d : {-17, -16, -1, 0, 1, 15, 16}) sizes.push_back(base + d);
  }
  return sizes;
}

TEST(ThreadTeamTest, EveryElementIsVisitedOnceWhateverTheTeam) {
  for (int threads : {1, 2, 3, 8}) {
    TeamSize size(threads);
    for (std::int64_t n : split_sizes()) {
      std::vector<std::atomic<int>> visits(static_cast<std::size_t>(n));
      blobrt_kernels::parallel_for(n, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) visits[i].fetch_add(1, std::memory_order_relaxed);
      });
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(visits[i].load(), 1) << "n " << n << ", element " << i << ", " << threads << " threads";
      }
    }
  }
}

// axpy and scal are element-wise: the split result is the unsplit loop's, bit for bit.
TEST(ThreadTeamTest, AxpyAndScalEqualTheSerialLoop) {
  for (int threads : {1, 2, 4}) {
    TeamSize size(threads);
    for (std::int64_t n : split_sizes()) {
      std::vector<float> x(static_cast<std::size_t>(n)), y(x.size());
      for (std::int64_t i = 0; i < n; ++i) {
        x[i] = 0.25f * static_cast<float>(i % 97) - 3.0f;
        y[i] = 1.0f / static_cast<float>(1 + i % 13);
      }
      std::vector<float> want = y;
      blobrt_kernels::chunk::axpy(n, 0.7f, x.data(), want.data());  // the same loop, one piece
      blobrt_kernels::chunk::scal(n, -1.3f, want.data());
      blobrt_kernels::axpy(n, 0.7f, x.data(), y.data());
      blobrt_kernels::scal(n, -1.3f, y.data());
      ASSERT_EQ(std::memcmp(y.data(), want.data(), y.size() * sizeof(float)), 0) << "n " << n << ", " << threads;
    }
  }
}

// dot and asum add one partial per chunk in chunk order: identical for every team size,
// and equal to that sum done by hand.
TEST(ThreadTeamTest, ReductionsAreTheSameForEveryTeamSize) {
  for (std::int64_t n : split_sizes()) {
    std::vector<float> x(static_cast<std::size_t>(n)), y(x.size());
    for (std::int64_t i = 0; i < n; ++i) {
      x[i] = std::sin(static_cast<float>(i)) * 1e3f;
      y[i] = std::cos(static_cast<float>(i) * 0.37f);
    }
    const blobrt_kernels::Chunks chunks = blobrt_kernels::chunks_for(n);
    double by_hand = 0;
    for (int c = 0; c < chunks.count; ++c) {
      std::int64_t b = c * chunks.size, e = std::min(n, b + chunks.size);
      by_hand += blobrt_kernels::chunk::dot(e - b, x.data() + b, y.data() + b);
    }
    const float want_dot = static_cast<float>(by_hand);
    std::vector<float> asums;
    for (int threads : {1, 2, 3, 5, 8}) {
      TeamSize size(threads);
      for (int repeat = 0; repeat < 3; ++repeat) {
        float dot = blobrt_kernels::dot(n, x.data(), y.data());
        ASSERT_EQ(std::memcmp(&dot, &want_dot, sizeof dot), 0) << "n " << n << ", " << threads << " threads";
        asums.push_back(blobrt_kernels::asum(n, x.data()));
      }
    }
    for (float a : asums) ASSERT_EQ(std::memcmp(&a, &asums[0], sizeof a), 0) << "n " << n;
  }
}

// Several threads calling at once: one holds the team, the others run on their own
// thread; every result is right.
TEST(ThreadTeamTest, ConcurrentCallersAllGetTheirResults) {
  TeamSize size(3);
  const std::int64_t n = 5 * blobrt_kernels::kParallelThreshold + 7;
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      std::vector<float> x(static_cast<std::size_t>(n), static_cast<float>(t + 1)), y(x.size(), 1.0f);
      for (int round = 0; round < 200; ++round) {
        blobrt_kernels::axpy(n, 1.0f, x.data(), y.data());  // y = 1 + (round + 1) (t + 1)
        float expect = 1.0f + static_cast<float>((round + 1) * (t + 1));
        if (y[0] != expect || y[n / 2] != expect || y[n - 1] != expect) ++wrong;
        if (blobrt_kernels::asum(n, x.data()) != static_cast<float>(n) * static_cast<float>(t + 1)) ++wrong;
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

// With a team of two, large jobs do get shared (some chunk runs on the helper).
TEST(ThreadTeamTest, HelpersTakeChunksOfLargeJobs) {
  TeamSize size(2);
  const std::int64_t n = blobrt_kernels::kParallelThreshold * 64;
  const pthread_t caller = ::pthread_self();
  std::atomic<int> on_helper{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (on_helper.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    blobrt_kernels::parallel_for(n, [&](std::int64_t, std::int64_t) {
      if (!::pthread_equal(::pthread_self(), caller)) ++on_helper;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    });
  }
  EXPECT_GT(on_helper.load(), 0) << "no chunk ran on a helper in 20 s";
  EXPECT_GE(blobrt_kernels::team().helpers_started(), 1);
}

// The team's helper threads (named blobrt-team) in this process.
std::vector<pid_t> helper_threads() {
  std::vector<pid_t> tids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name == "blobrt-team") tids.push_back(static_cast<pid_t>(std::stol(entry.path().filename().string())));
  }
  return tids;
}

// A helper that is not running (stopped by a tracer, as a descheduled thread would be)
// is not waited for: the caller does every chunk and returns. Tracing a single thread
// needs another process: a forked child stops the helper with PTRACE_INTERRUPT.
TEST(ThreadTeamTest, CallsCompleteWhileAHelperIsStopped) {
  TeamSize size(2);
  const std::int64_t n = blobrt_kernels::kParallelThreshold * 16;
  std::vector<float> x(static_cast<std::size_t>(n), 1.0f), y(x.size(), 0.0f);
  blobrt_kernels::axpy(n, 1.0f, x.data(), y.data());  // starts the helper
  std::vector<pid_t> helpers = helper_threads();
  ASSERT_GE(helpers.size(), 1u);
  ::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // where Yama restricts ptrace
  int to_parent[2], to_child[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(to_child), 0);
  pid_t tracer = ::fork();
  if (tracer == 0) {
    bool stopped = true;
    for (pid_t tid : helpers) {  // every helper: earlier tests may have started more
      int status = 0;
      stopped = stopped && ::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) == 0 &&
                ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0 && ::waitpid(tid, &status, __WALL) == tid &&
                WIFSTOPPED(status);
    }
    char report = stopped ? 's' : 'f';
    (void)!::write(to_parent[1], &report, 1);
    char go;
    (void)!::read(to_child[0], &go, 1);
    for (pid_t tid : helpers) ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
    ::_exit(0);
  }
  ASSERT_GT(tracer, 0);
  char report = 'f';
  (void)!::read(to_parent[0], &report, 1);
  int on_helper = 0, wrong = 0;
  std::atomic<bool> finished{false};
  std::thread watchdog;
  if (report == 's') {
    // If a call waited for the stopped helper it would never return: let it go after
    // 30 s, so that the test fails instead of hanging.
    watchdog = std::thread([&] {
      for (int i = 0; i < 300 && !finished.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      char go = 'g';
      (void)!::write(to_child[1], &go, 1);
    });
    const pthread_t caller = ::pthread_self();
    for (int round = 1; round <= 200; ++round) {
      blobrt_kernels::parallel_for(n, [&](std::int64_t b, std::int64_t e) {
        if (!::pthread_equal(::pthread_self(), caller)) ++on_helper;
        blobrt_kernels::serial::axpy(e - b, 1.0f, x.data() + b, y.data() + b);
      });
      if (y[0] != round + 1 || y[n / 3] != round + 1 || y[n - 1] != round + 1) ++wrong;
    }
    finished = true;
    watchdog.join();
  } else {
    char go = 'g';
    (void)!::write(to_child[1], &go, 1);
  }
  ::waitpid(tracer, nullptr, 0);
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) ::close(fd);
  if (report != 's') GTEST_SKIP() << "ptrace is not permitted here";
  EXPECT_EQ(on_helper, 0) << "a stopped helper ran chunks";
  EXPECT_EQ(wrong, 0);
}

// The size comes from the environment as team_size.hpp says. (setenv while no other
// thread reads the environment: the team's helpers never do.)
class EnvironmentTest : public ::testing::Test {
 protected:
  static constexpr const char* kNames[] = {"BLOBRT_NUM_THREADS", "OMP_NUM_THREADS", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                           "MPI_LOCALNRANKS", "SLURM_STEP_TASKS_PER_NODE", "SLURM_NODEID"};
  // Whatever the test run was started with is put aside and restored afterwards.
  void SetUp() override {
    for (const char* name : kNames) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
      ::unsetenv(name);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name, value->c_str(), 1);
      } else {
        ::unsetenv(name);
      }
    }
  }

 private:
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

std::vector<std::string>& team_size_warnings() {
  static std::vector<std::string> said;
  return said;
}
void collect_team_size_warning(const std::string& message) { team_size_warnings().push_back(message); }

TEST_F(EnvironmentTest, BlobrtNumThreadsWinsAndBadValuesAreIgnored) {
  const int cpus = blobrt_kernels::team_size_detail::affinity_cpus();
  EXPECT_EQ(blobrt_kernels::configured_team_size(), cpus);
  ::setenv("OMP_NUM_THREADS", "5,2", 1);
  EXPECT_EQ(blobrt_kernels::configured_team_size(), 5);
  ::setenv("BLOBRT_NUM_THREADS", "3", 1);
  EXPECT_EQ(blobrt_kernels::configured_team_size(), 3);
  for (const std::string bad : {"0", "-2", "many", "4x", "", "65", "257", "99999999999"}) {
    ::setenv("BLOBRT_NUM_THREADS", bad.c_str(), 1);
    team_size_warnings().clear();
    EXPECT_EQ(blobrt_kernels::configured_team_size(&collect_team_size_warning), 5) << "'" << bad << "'";
    EXPECT_EQ(team_size_warnings(),
              std::vector<std::string>{"BLOBRT_NUM_THREADS='" + bad + "' is not a thread count from 1 to 64; ignored"});
  }
  ::setenv("OMP_NUM_THREADS", "0", 1);
  team_size_warnings().clear();
  EXPECT_EQ(blobrt_kernels::configured_team_size(&collect_team_size_warning), cpus);
  EXPECT_EQ(team_size_warnings().size(), 2u) << "BLOBRT_NUM_THREADS and OMP_NUM_THREADS";
  // Without a receiver nothing is written anywhere: the header has no output of its own.
  testing::internal::CaptureStderr();
  EXPECT_EQ(blobrt_kernels::configured_team_size(), cpus);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST_F(EnvironmentTest, RanksOnTheNodeShareItsCpus) {
  const int cpus = blobrt_kernels::team_size_detail::affinity_cpus();
  auto expect = [&](long ranks) { return static_cast<int>(std::max<long>(1, cpus / ranks)); };
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  EXPECT_EQ(blobrt_kernels::configured_team_size(), expect(2));
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "100000", 1);
  EXPECT_EQ(blobrt_kernels::configured_team_size(), 1);
  ::unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  ::setenv("MPI_LOCALNRANKS", "1", 1);
  EXPECT_EQ(blobrt_kernels::configured_team_size(), cpus);
  ::unsetenv("MPI_LOCALNRANKS");
  ::setenv("SLURM_STEP_TASKS_PER_NODE", "4(x2),1", 1);
  ::setenv("SLURM_NODEID", "2", 1);
  EXPECT_EQ(blobrt_kernels::configured_team_size(), cpus);
  ::setenv("SLURM_NODEID", "1", 1);
  EXPECT_EQ(blobrt_kernels::configured_team_size(), expect(4));
}

TEST(SlurmTasksTest, CompressedListsAreRead) {
  using blobrt_kernels::team_size_detail::slurm_tasks_on_node;
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 0), 2);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 2), 2);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 3), 1);
  EXPECT_EQ(slurm_tasks_on_node("2(x3),1", 4), std::nullopt);
  EXPECT_EQ(slurm_tasks_on_node("8", 0), 8);
  EXPECT_EQ(slurm_tasks_on_node("2(x", 0), std::nullopt);
  EXPECT_EQ(slurm_tasks_on_node("", 0), std::nullopt);
}

// cgroup_memory_limit on made-up /proc/self/cgroup files and cgroup trees.
class CgroupLimitTest : public testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/blobrt-cgroup-XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    root_ = name;
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  unsigned long long limit(unsigned long long swap = blobrt_kernels::kNoMemoryLimit) {
    return blobrt_kernels::cgroup_memory_limit((root_ / "proc-cgroup").c_str(), (root_ / "fs").c_str(), swap);
  }
  std::filesystem::path root_;
};

constexpr unsigned long long kGiB = 1ULL << 30;

TEST_F(CgroupLimitTest, V2TheLeastLimitOnTheWayToTheRootBinds) {
  write("proc-cgroup", "0::/job/step\n");
  write("fs/cgroup.controllers", "memory\n");
  write("fs/job/memory.max", std::to_string(3 * kGiB) + "\n");
  write("fs/job/memory.swap.max", "0\n");
  write("fs/job/step/memory.max", "max\n");
  write("fs/job/step/memory.swap.max", "max\n");
  EXPECT_EQ(limit(), 3 * kGiB);
  write("fs/job/step/memory.max", std::to_string(2 * kGiB) + "\n");
  write("fs/job/step/memory.swap.max", std::to_string(kGiB / 2) + "\n");
  EXPECT_EQ(limit(), 2 * kGiB) << "the child's memory, the parent's swap (none)";
  write("fs/job/memory.swap.max", std::to_string(kGiB) + "\n");
  EXPECT_EQ(limit(), 2 * kGiB + kGiB / 2) << "the child's memory and swap";
}

TEST_F(CgroupLimitTest, V2SwapWithoutAccountingIsTheMachines) {
  write("proc-cgroup", "0::/job\n");
  write("fs/job/memory.max", std::to_string(kGiB) + "\n");
  EXPECT_EQ(limit(5 * kGiB), 6 * kGiB);
  EXPECT_EQ(limit(), blobrt_kernels::kNoMemoryLimit) << "unknown swap: no limit can be told";
}

TEST_F(CgroupLimitTest, V2NoLimitAnywhere) {
  write("proc-cgroup", "0::/\n");
  write("fs/memory.stat", "anon 0\n");
  EXPECT_EQ(limit(0), blobrt_kernels::kNoMemoryLimit);
}

TEST_F(CgroupLimitTest, V2MemoryAndSwapBindAtDifferentLevels) {
  // The parent allows no swap, the child 1 GiB of memory: 1 GiB in all.
  write("proc-cgroup", "0::/job/step\n");
  write("fs/job/memory.max", "max\n");
  write("fs/job/memory.swap.max", "0\n");
  write("fs/job/step/memory.max", std::to_string(kGiB) + "\n");
  write("fs/job/step/memory.swap.max", "max\n");
  EXPECT_EQ(limit(8 * kGiB), kGiB);
}

TEST_F(CgroupLimitTest, V2OnAHybridSystemIsTheUnifiedMount) {
  write("proc-cgroup", "9:name=systemd:/\n1:cpu:/\n0::/job\n");
  write("fs/unified/cgroup.controllers", "memory\n");
  write("fs/unified/job/memory.max", std::to_string(2 * kGiB) + "\n");
  write("fs/unified/job/memory.swap.max", "0\n");
  EXPECT_EQ(limit(), 2 * kGiB);
}

TEST_F(CgroupLimitTest, V1ReadsTheKernelsHierarchicalLimits) {
  // The memory controller's line wins over the unified one; memory.stat's hierarchical
  // limits (use_hierarchy taken into account by the kernel), not the group's own files.
  write("proc-cgroup", "9:name=systemd:/\n4:cpu,memory:/a/b\n0::/\n");
  write("fs/memory/a/b/memory.limit_in_bytes", "9223372036854771712\n");
  write("fs/memory/a/b/memory.stat", "cache 0\nhierarchical_memory_limit " + std::to_string(2 * kGiB) +
                                         "\nhierarchical_memsw_limit 9223372036854771712\n");
  EXPECT_EQ(limit(kGiB), 3 * kGiB) << "memory limit + the machine's swap, below memsw";
  write("fs/memory/a/b/memory.stat", "hierarchical_memory_limit " + std::to_string(2 * kGiB) +
                                         "\nhierarchical_memsw_limit " + std::to_string(kGiB + kGiB / 2) + "\n");
  EXPECT_EQ(limit(kGiB), kGiB + kGiB / 2) << "memsw binds";
  EXPECT_EQ(limit(), kGiB + kGiB / 2) << "memsw binds whatever the machine's swap";
  write("fs/memory/a/b/memory.stat", "cache 0\nrss 0\n");
  EXPECT_EQ(limit(kGiB), blobrt_kernels::kNoMemoryLimit) << "no hierarchical limits: none is assumed";
}

TEST_F(CgroupLimitTest, APathNotBelowTheMountReadsTheMountedRoot) {
  // A container's own cgroup mounted as the root, /proc still naming the host's path.
  write("proc-cgroup", "0::/docker/0123abcd\n");
  write("fs/memory.max", std::to_string(4 * kGiB) + "\n");
  write("fs/memory.swap.max", "0\n");
  EXPECT_EQ(limit(), 4 * kGiB);
}

TEST_F(CgroupLimitTest, UnreadableOrOddFilesMeanNoLimit) {
  EXPECT_EQ(limit(), blobrt_kernels::kNoMemoryLimit) << "no /proc/self/cgroup";
  write("proc-cgroup", "garbage without colons\n");
  EXPECT_EQ(limit(), blobrt_kernels::kNoMemoryLimit);
  write("proc-cgroup", "0::/job\n");
  write("fs/job/memory.max", "12 GiB\n");
  write("fs/job/memory.swap.max", "\n");
  EXPECT_EQ(limit(0), blobrt_kernels::kNoMemoryLimit);
  write("fs/job/memory.max", "-5\n");
  EXPECT_EQ(limit(0), blobrt_kernels::kNoMemoryLimit);
}

// In a control group limited to `limit` bytes (a container's or a batch job's limit), a host
// buffer of `refused` bytes is refused at once, though the machine has the memory: touched, it
// would meet the group's OOM killer; `granted` bytes (never touched) are still granted. Run in
// a child moved into a new group below this process's own; skipped where groups cannot be
// made (no cgroupfs, no permission, v2's no-internal-process rule).
void expect_refused_in_group(unsigned long long limit, std::size_t refused, std::size_t granted) {
  std::string path;
  bool v2 = false;
  if (!blobrt_kernels::memory_limit_detail::memory_cgroup_path("/proc/self/cgroup", &path, &v2)) {
    GTEST_SKIP() << "no memory control group in /proc/self/cgroup";
  }
  std::string group = (v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory") + path;
  group += (group.back() == '/' ? "" : "/") + std::string("blobrt-exhaustion-") + std::to_string(::getpid());
  if (::mkdir(group.c_str(), 0755) != 0) {
    GTEST_SKIP() << "cannot make a control group " << group << ": " << std::strerror(errno);
  }
  auto put = [&](const char* file, const std::string& value) {
    std::ofstream out(group + "/" + file);
    out << value << std::flush;
    return static_cast<bool>(out);
  };
  const bool limited = put(v2 ? "memory.max" : "memory.limit_in_bytes", std::to_string(limit));
  // Swap too, where the kernel accounts it; where it does not, the group may use the
  // machine's swap besides, and `refused` is beyond the group only on a machine with less.
  const bool swap_limited =
      limited && put(v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes", v2 ? "0" : std::to_string(limit));
  unsigned long long machine_swap = 0;
  blobrt_kernels::machine_memory_and_swap(&machine_swap);
  const bool beyond = swap_limited || refused > limit + machine_swap;
  // The parent reads the limit first, so the child starts with a cached value that is not
  // its group's: what it is granted must come from a fresh read.
  (void)blobrt_kernels::cached_process_memory_limit();
  const pid_t child = limited && beyond ? ::fork() : -1;
  if (child == 0) {
    if (!put("cgroup.procs", std::to_string(::getpid()))) _exit(77);
    void* refused_buffer = blobrt_kernels::allocate_host(refused, 64);
    void* granted_buffer = blobrt_kernels::allocate_host(granted, 64);  // never touched
    const int code = (refused_buffer == nullptr ? 0 : 1) | (granted_buffer != nullptr ? 0 : 2);
    std::free(refused_buffer);
    std::free(granted_buffer);
    _exit(code);
  }
  int status = 0;
  if (child > 0) ::waitpid(child, &status, 0);
  ::rmdir(group.c_str());
  if (!limited) GTEST_SKIP() << "cannot set a memory limit in " << group;
  if (!beyond) GTEST_SKIP() << "swap is not limited in " << group << " and the machine has " << machine_swap << " bytes of it";
  ASSERT_GT(child, 0) << "fork failed";
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status);
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot join the control group " << group;
  EXPECT_EQ(WEXITSTATUS(status) & 1, 0) << refused << " bytes were granted in a group limited to " << limit;
  EXPECT_EQ(WEXITSTATUS(status) & 2, 0) << granted << " bytes (never touched) were refused in a group limited to " << limit;
}

TEST(ExhaustionCgroupTest, AHostBufferBeyondTheCgroupLimitIsRefused) {
  expect_refused_in_group(1ULL << 30, std::size_t(3) << 30, std::size_t(512) << 20);
}

// Below 1 GiB too: a 512 MiB Blob in a 256 MiB group was granted and met the OOM killer at
// its first fill (the guard used to look only from 1 GiB up).
TEST(ExhaustionCgroupTest, ABufferBelowOneGibBeyondASmallLimitIsRefused) {
  expect_refused_in_group(256ULL << 20, std::size_t(512) << 20, std::size_t(128) << 20);
}

// The cached limit is the uncached one (read in the same second, in the same process), and
// the small allocations' view of it is what was read last.
TEST(ProcessMemoryLimitTest, CachedLimitIsTheLimit) {
  const unsigned long long limit = blobrt_kernels::cached_process_memory_limit();
  EXPECT_EQ(limit, blobrt_kernels::process_memory_limit());
  EXPECT_EQ(blobrt_kernels::last_process_memory_limit(), limit);
}

TEST(ProcessMemoryLimitTest, IsAtMostTheMachinesMemoryAndSwap) {
  const unsigned long long machine = blobrt_kernels::machine_memory_and_swap();
  ASSERT_NE(machine, blobrt_kernels::kNoMemoryLimit);
  EXPECT_LE(blobrt_kernels::process_memory_limit(), machine);
  EXPECT_GT(blobrt_kernels::process_memory_limit(), 0ULL);
}

}  // namespace
