// A small work-sharing team for level-1 kernels that never waits for a thread that is
// not running. A job is a number of chunks, dealt out in one contiguous range per team
// member (the caller's is the first). Each member works through its own range from the
// front, then takes chunks from the back of the others' ranges; so when another process
// holds a core (an MPI rank, a data loader) the caller simply does more chunks itself,
// and on a quiet machine each thread touches the same part of the vectors every call
// (which stays in its core's cache, as with a static split). The caller waits only for
// chunks a helper has already claimed.
//
// Each range is one atomic word (epoch, next, end), claimed by compare-and-swap: a
// successful claim is a chunk of the job that epoch names, and that job cannot finish
// before the chunk is done, so its description (fn, context) is valid to read; a late
// helper finds every range of a finished job empty and touches nothing (the epoch keeps
// an old word from passing for a new one). Only one job runs at a time: a second caller
// that finds the team busy does its work on its own thread instead of queueing.
//
// Helpers spin for a short while after a job (back-to-back calls then cost no system
// call), then sleep on a futex, so an idle team takes no CPU from its neighbours. A
// helper that claimed a chunk and was then descheduled (its core taken by another
// process) makes the caller wait; when such a wait is much longer than a chunk takes,
// the team runs jobs on the caller alone for a while (20 ms; doubling, up to 1 s, while
// stalls follow soon after each such spell), which keeps a loaded machine at about
// one-thread speed.
//
// Helpers block every signal. The team is never destroyed; at exit() its owner stops the
// helpers and joins them (stop()), so that no thread of ours is left when exit handlers
// registered before the team's run: LeakSanitizer's exit check reads every thread's
// dynamic TLS, and a thread that predates a library dlopen'ed later (a plugin's BLAS) has
// a dynamic TLS vector that check trips over.
#ifndef BLOBRT_KERNELS_THREAD_TEAM_HPP
#define BLOBRT_KERNELS_THREAD_TEAM_HPP

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace blobrt_kernels {

namespace team_detail {

inline void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
inline void futex_wake(std::atomic<std::uint32_t>* word, int count) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

inline std::int64_t now_ns() {
  timespec t;
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace team_detail

class ThreadTeam {
 public:
  using ChunkFn = void (*)(const void* context, std::int64_t chunk);
  // A job has at most this many chunks (a range word's fields are 16 bits).
  static constexpr int kMaxJobChunks = 0xffff;
  // Ranges a job is dealt into: at most one per member, at most one per chunk.
  static constexpr int kMaxRanges = 64;

  explicit ThreadTeam(int size) : size_(size < 1 ? 1 : size) {}
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  // Threads (the caller included) that share a job; helpers are started on first use.
  int size() const { return size_.load(std::memory_order_relaxed); }
  void set_size(int size) { size_.store(size < 1 ? 1 : size, std::memory_order_relaxed); }
  // Helper threads running now (fewer than size() - 1 if the system refused some).
  int helpers_started() const { return started_.load(std::memory_order_acquire); }

  // Ends the helpers and joins them (for exit(): see the top of the file). Jobs after it
  // run on the caller. Not in a fork()ed child, where the helpers do not exist.
  void stop() {
    if (stopping_.exchange(true, std::memory_order_seq_cst)) return;
    // Take the team, so no job is in flight: wait for one another thread may be running.
    while (busy_.exchange(true, std::memory_order_acquire)) team_detail::cpu_relax();
    wake_.fetch_add(1, std::memory_order_seq_cst);
    team_detail::futex_wake(&wake_, kMaxRanges);
    const int have = started_.load(std::memory_order_acquire);
    for (int i = 0; i < have; ++i) ::pthread_join(threads_[i], nullptr);
    started_.store(0, std::memory_order_release);
    refused_ = true;  // no new helpers; busy_ stays taken: every later job is the caller's
  }

  // fn(context, c) for every c in [0, chunks), each exactly once; returns when all are done.
  void run(int chunks, ChunkFn fn, const void* context) {
    if (chunks <= 1 || size() <= 1 || !start_job()) {
      for (int c = 0; c < chunks; ++c) fn(context, c);
      return;
    }
    job_fn_ = fn;
    job_context_ = context;
    done_.store(0, std::memory_order_relaxed);
    epoch_ = epoch_ + 1 == 0 ? 1 : epoch_ + 1;  // 0 is "no job yet" for the helpers
    int members = size() < kMaxRanges ? size() : kMaxRanges;
    int ranges = members < chunks ? members : chunks;
    for (int r = 0; r < ranges; ++r) {
      std::uint64_t begin = std::uint64_t(chunks) * r / ranges, end = std::uint64_t(chunks) * (r + 1) / ranges;
      ranges_[r].word.store(std::uint64_t(epoch_) << 32 | begin << 16 | end, std::memory_order_release);
    }
    job_.store(std::uint64_t(epoch_) << 32 | std::uint64_t(ranges), std::memory_order_seq_cst);
    // Helpers that went to sleep are woken; the call does not wait for them to arrive.
    int sleeping = sleepers_.load(std::memory_order_seq_cst);
    if (sleeping > 0) {
      wake_.fetch_add(1, std::memory_order_seq_cst);
      team_detail::futex_wake(&wake_, sleeping < ranges - 1 ? sleeping : ranges - 1);
    }
    const std::int64_t start = team_detail::now_ns();
    const std::uint32_t mine = work(0, ranges, fn, context);
    const std::uint32_t helpers_owe = static_cast<std::uint32_t>(chunks) - mine;
    if (done_.load(std::memory_order_acquire) < helpers_owe) wait_for_helpers(helpers_owe, start, mine);
    busy_.store(false, std::memory_order_release);
  }

 private:
  // Runs chunks as member `member` of a job dealt into `ranges` ranges: its own range
  // from the front, then the others' from the back. Returns how many it ran.
  std::uint32_t work(int member, int ranges, ChunkFn fn, const void* context) {
    std::uint32_t ran = 0, chunk;
    const int home = member % ranges;
    while (claim(ranges_[home].word, false, &chunk)) {
      fn(context, chunk);
      ++ran;
    }
    for (int step = 1; step < ranges; ++step) {
      std::atomic<std::uint64_t>& word = ranges_[(home + step) % ranges].word;
      while (claim(word, true, &chunk)) {
        fn(context, chunk);
        ++ran;
      }
    }
    return ran;
  }

  // One chunk of a range word (epoch, next, end), from its front or its back.
  static bool claim(std::atomic<std::uint64_t>& word, bool from_back, std::uint32_t* chunk) {
    std::uint64_t w = word.load(std::memory_order_acquire);
    for (;;) {
      std::uint32_t next = (w >> 16) & 0xffff, end = w & 0xffff;
      if (next >= end) return false;
      std::uint64_t taken = from_back ? w - 1 : w + (std::uint64_t(1) << 16);
      if (word.compare_exchange_weak(w, taken, std::memory_order_acq_rel, std::memory_order_acquire)) {
        *chunk = from_back ? end - 1 : next;
        return true;
      }
    }
  }

  // Stall handling (see the top of the file).
  static constexpr std::int64_t kHelperSpinNs = 50000;
  static constexpr std::int64_t kCallerSpinNs = 20000;
  static constexpr std::int64_t kStallSlackNs = 100000;
  static constexpr std::int64_t kSerialFirstNs = 20000000;
  static constexpr std::int64_t kSerialMostNs = 1000000000;

  // Takes the team for one job: false if another thread holds it, the team is in a
  // serial spell after a stall, or no helper could be started.
  bool start_job() {
    if (busy_.exchange(true, std::memory_order_acquire)) return false;
    std::int64_t until = serial_until_ns_.load(std::memory_order_relaxed);
    bool ok = until == 0 || team_detail::now_ns() >= until;
    if (ok) ok = start_helpers(size() - 1) > 0;
    if (!ok) busy_.store(false, std::memory_order_release);
    return ok;
  }

  // Starts helpers until `want` run; once the system refuses one (RLIMIT_NPROC, a cgroup's
  // pids.max, no memory for a stack) no more are tried. Returns how many run.
  int start_helpers(int want) {
    int have = started_.load(std::memory_order_relaxed);
    if (want > kMaxRanges - 1) want = kMaxRanges - 1;
    if (have >= want || refused_) return have;
    sigset_t all, previous;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &previous);  // inherited by the helpers
    pthread_attr_t attr;
    ::pthread_attr_init(&attr);
    while (have < want) {
      auto* start = new Start{this, have};
      pthread_t& thread = threads_[have];
      if (::pthread_create(&thread, &attr, &ThreadTeam::helper_entry, start) != 0) {
        delete start;
        refused_ = true;
        break;
      }
      ::pthread_setname_np(thread, "blobrt-team");
      started_.store(++have, std::memory_order_release);
    }
    ::pthread_attr_destroy(&attr);
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return have;
  }

  // The caller has no chunk left to claim: wait for those helpers still run, spinning
  // briefly, then asleep (so that a helper waiting for a core can be given this one).
  void wait_for_helpers(std::uint32_t owed, std::int64_t start, std::uint32_t mine) {
    const std::int64_t idle = team_detail::now_ns();
    int spins = 0;
    while (done_.load(std::memory_order_acquire) < owed) {
      if (++spins % 64 == 0 && team_detail::now_ns() - idle > kCallerSpinNs) {
        waiting_.store(1, std::memory_order_seq_cst);
        std::uint32_t done = done_.load(std::memory_order_seq_cst);
        if (done < owed) team_detail::futex_wait(&done_, done);
      }
      team_detail::cpu_relax();
    }
    waiting_.store(0, std::memory_order_relaxed);
    // A wait far longer than the caller's own chunks took means a helper was
    // descheduled in the middle of one.
    const std::int64_t end = team_detail::now_ns();
    const std::int64_t per_chunk = mine > 0 ? (idle - start) / mine : 0;
    if (end - idle > kStallSlackNs + 4 * per_chunk) {
      // A stall soon after the last serial spell ended (a core that stays taken) makes
      // the next spell twice as long; a stall out of the blue (an interrupt, a short
      // job elsewhere) starts again from the shortest.
      std::int64_t last_end = serial_until_ns_.load(std::memory_order_relaxed);
      bool soon = last_end != 0 && end - last_end < 2 * serial_spell_ns_;
      serial_spell_ns_ = soon ? (2 * serial_spell_ns_ < kSerialMostNs ? 2 * serial_spell_ns_ : kSerialMostNs)
                              : kSerialFirstNs;
      serial_until_ns_.store(end + serial_spell_ns_, std::memory_order_relaxed);
    }
  }

  struct Start {
    ThreadTeam* team;
    int index;
  };
  static void* helper_entry(void* arg) {
    Start start = *static_cast<Start*>(arg);
    delete static_cast<Start*>(arg);
    start.team->helper_loop(start.index);
    return nullptr;
  }

  // A helper's chunks run through job_fn_ and job_context_, read after each claim: the
  // claim may belong to a newer job than the one this helper set out to help with, and
  // is then that job's chunk (each range word knows its own bounds).
  static void run_current(const void* self, std::int64_t chunk) {
    const ThreadTeam& team = *static_cast<const ThreadTeam*>(self);
    team.job_fn_(team.job_context_, chunk);
    const_cast<ThreadTeam&>(team).chunk_done();
  }
  void chunk_done() {
    done_.fetch_add(1, std::memory_order_seq_cst);
    if (waiting_.load(std::memory_order_seq_cst)) team_detail::futex_wake(&done_, 1);
  }

  void helper_loop(int index) {
    std::uint32_t seen = 0;  // the last job this helper found nothing left in
    std::int64_t idle_since = team_detail::now_ns();
    int spins = 0;
    for (;;) {
      if (stopping_.load(std::memory_order_acquire)) return;
      std::uint64_t job = job_.load(std::memory_order_acquire);
      bool wanted = index + 1 < size();
      if (wanted && std::uint32_t(job >> 32) != seen) {
        work(index + 1, static_cast<int>(job & 0xffff), &ThreadTeam::run_current, this);
        seen = std::uint32_t(job >> 32);
        idle_since = team_detail::now_ns();
        continue;
      }
      if (++spins % 64 != 0 || (wanted && team_detail::now_ns() - idle_since < kHelperSpinNs)) {
        team_detail::cpu_relax();
        continue;
      }
      // Asleep until a job is published. The caller stores job_ and then reads
      // sleepers_; this helper counts itself in sleepers_ and then reads job_: one of
      // the two sees the other (both sequentially consistent).
      std::uint32_t ticket = wake_.load(std::memory_order_seq_cst);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      job = job_.load(std::memory_order_seq_cst);
      if ((std::uint32_t(job >> 32) == seen || index + 1 >= size()) && !stopping_.load(std::memory_order_seq_cst)) {
        team_detail::futex_wait(&wake_, ticket);
      }
      sleepers_.fetch_sub(1, std::memory_order_seq_cst);
      idle_since = team_detail::now_ns();
    }
  }

  std::atomic<int> size_;
  std::atomic<int> started_{0};
  std::atomic<bool> stopping_{false};
  pthread_t threads_[kMaxRanges] = {};  // the helpers, for stop()
  bool refused_ = false;  // written under busy_
  // The job, written by the caller holding busy_ before it stores the range words.
  ChunkFn job_fn_ = nullptr;
  const void* job_context_ = nullptr;
  std::uint32_t epoch_ = 0;
  std::int64_t serial_spell_ns_ = 0;
  std::atomic<std::int64_t> serial_until_ns_{0};
  std::atomic<bool> busy_{false};
  // Each on a cache line of its own: a member's claims write its range's word, every
  // finished chunk of a helper done_.
  alignas(64) std::atomic<std::uint64_t> job_{0};  // (epoch, ranges) of the latest job
  struct alignas(64) Range {
    std::atomic<std::uint64_t> word{0};
  };
  Range ranges_[kMaxRanges];
  alignas(64) std::atomic<std::uint32_t> done_{0};
  std::atomic<std::uint32_t> waiting_{0};
  alignas(64) std::atomic<std::uint32_t> wake_{0};
  std::atomic<int> sleepers_{0};
};

}  // namespace blobrt_kernels

#endif
