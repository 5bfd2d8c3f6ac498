// The BLIS plugin's gemm split (backends/blis/blis_gemm_split.hpp), with a reference gemm
// standing in for BLIS's single-threaded call: the panels' cut, the operands each panel's
// call is handed (every transposition, split by rows and by columns), and that a caller
// whose team cannot help runs every panel itself.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "blis_gemm_split.hpp"

namespace {

using blis_plugin::gemm_panels;
using blis_plugin::GemmPanels;
using blis_plugin::PanelAlign;

// C = alpha op(A) op(B) + beta C, row-major with row strides, as BLIS's call computes it
// (beta 0 ignores C's old values, NaN included).
void reference_gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double alpha, double* a,
                    std::int64_t lda, double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (std::int64_t p = 0; p < k; ++p) sum += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = alpha * sum + (beta == 0 ? 0 : beta * c[i * ldc + j]);
    }
  }
}

// Guards against a lost, doubled or overlapping panel (part of C not computed, or twice)
// and against panel edges inside a register tile of BLIS's kernel (a partial tile in the
// middle of C, which cost 6-23 % on the EPYC).
TEST(BlisGemmSplit, PanelsCoverCOnceWithEdgesOnTiles) {
  const PanelAlign align{12, 32};
  for (int team : {2, 3, 4, 8, 64}) {
    for (std::int64_t m : {1, 20, 50, 64, 500, 501, 4099}) {
      for (std::int64_t n : {1, 25, 64, 500, 800, 4097}) {
        for (std::int64_t k : {1, 64, 500, 800}) {
          const GemmPanels p = gemm_panels(m, n, k, team, align);
          SCOPED_TRACE(testing::Message() << m << "x" << n << "x" << k << " team " << team);
          EXPECT_EQ(p.by_columns, n > m);
          EXPECT_EQ(p.extent, n > m ? n : m);
          EXPECT_GE(p.count, 1);
          EXPECT_LE(p.count, team);
          EXPECT_EQ(p.begin(0), 0);
          EXPECT_EQ(p.begin(p.count), p.extent);
          for (int i = 1; i < p.count; ++i) {
            EXPECT_LT(p.begin(i - 1), p.begin(i)) << "panel " << i - 1 << " is empty";
            EXPECT_EQ(p.begin(i) % (p.by_columns ? align.columns : align.rows), 0) << "edge " << i;
          }
          if (p.count > 1) {
            EXPECT_GE(m * n * k / p.count, blis_plugin::kMinPanelWork);
          }
        }
      }
    }
  }
}

// Guards against splitting work that costs more to share than to do (below 2^20
// multiply-adds, LeNet's first conv layer was slower on two threads) or with no team.
TEST(BlisGemmSplit, SmallGemmsAndOneThreadAreOneCall) {
  EXPECT_EQ(gemm_panels(20, 576, 25, 2, {12, 32}).count, 1);   // LeNet conv1, 288k
  EXPECT_EQ(gemm_panels(64, 10, 500, 2, {12, 32}).count, 1);   // LeNet ip2, 320k
  EXPECT_EQ(gemm_panels(500, 64, 800, 1, {12, 32}).count, 1);  // BLOBRT_NUM_THREADS=1
  EXPECT_EQ(gemm_panels(500, 64, 800, 2, {12, 32}).count, 2);
  EXPECT_EQ(gemm_panels(50, 64, 500, 2, {12, 32}).count, 2);   // LeNet conv2, 1.6M: two bands of 32
  EXPECT_EQ(gemm_panels(8, 4096, 4096, 4, {12, 32}).count, 4);
}

// A ThreadTeam has no destructor (the process's team must not join helpers a fork()ed child
// does not have), so a team made on the stack here is stopped, its helpers joined, before it
// goes: a helper left running read the next team made at the same address and divided by
// its empty job's zero ranges (UBSan, thread_team.hpp's work()).
struct StopsAtScopeEnd {
  blobrt_kernels::ThreadTeam& team;
  ~StopsAtScopeEnd() { team.stop(); }
};

struct Case {
  bool ta, tb;
  std::int64_t m, n, k;
  double beta;
};

// Guards against a panel handed the wrong part of an operand (the offsets differ for each
// transposition and for bands of rows or of columns) or of C: the split gemm must give
// exactly what one call gives, whatever the team's size.
TEST(BlisGemmSplit, EqualsOneCallForEveryTransposition) {
  std::vector<Case> cases;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (double beta : {0.0, 0.5}) {
        cases.push_back({ta, tb, 517, 64, 40, beta});   // by rows, an odd extent
        cases.push_back({ta, tb, 50, 203, 160, beta});  // by columns
        cases.push_back({ta, tb, 97, 131, 120, beta});  // by columns, odd everything
      }
    }
  }
  for (int team_size : {2, 3, 5}) {
    blobrt_kernels::ThreadTeam team(team_size);
    const StopsAtScopeEnd stops{team};
    for (const Case& c : cases) {
      SCOPED_TRACE(testing::Message() << (c.ta ? "T" : "N") << (c.tb ? "T" : "N") << " " << c.m << "x" << c.n << "x"
                                      << c.k << " beta " << c.beta << " team " << team_size);
      std::vector<double> a(c.m * c.k), b(c.k * c.n), want(c.m * c.n), got(c.m * c.n);
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i % 11) - 5;
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(i % 7) * 0.5 - 1.5;
      for (std::size_t i = 0; i < want.size(); ++i) {
        want[i] = got[i] = c.beta == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(i % 5);
      }
      const std::int64_t lda = c.ta ? c.m : c.k, ldb = c.tb ? c.k : c.n;
      ASSERT_GT(gemm_panels(c.m, c.n, c.k, team_size, {4, 8}).count, 1) << "the case must be split";
      reference_gemm(c.ta, c.tb, c.m, c.n, c.k, 1.5, a.data(), lda, b.data(), ldb, c.beta, want.data(), c.n);
      std::atomic<int> calls{0};
      blis_plugin::split_gemm(c.ta, c.tb, c.m, c.n, c.k, 1.5, a.data(), lda, b.data(), ldb, c.beta, got.data(), c.n,
                              team, PanelAlign{4, 8},
                              [&](bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, double al,
                                  double* ap, std::int64_t la, double* bp, std::int64_t lb, double be, double* cp,
                                  std::int64_t lc) {
                                ++calls;
                                reference_gemm(ta, tb, m, n, k, al, ap, la, bp, lb, be, cp, lc);
                              });
      EXPECT_EQ(calls.load(), gemm_panels(c.m, c.n, c.k, team_size, {4, 8}).count);
      for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << "element " << i;
    }
  }
}

// Guards against a gemm that waits for helpers that cannot come (issue 48: threads asked
// for and not granted made a Caffe step many times slower): while another thread holds
// the team, a second caller's split runs every panel itself, and completes.
TEST(BlisGemmSplit, CallerRunsEveryPanelWhenTheTeamIsTaken) {
  blobrt_kernels::ThreadTeam team(4);
  const StopsAtScopeEnd stops{team};
  std::atomic<bool> holding{false}, release{false};
  std::thread holder([&] {
    team.run(2, [](const void* context, std::int64_t) {
      auto* flags = static_cast<std::atomic<bool>* const*>(context);
      flags[0]->store(true);
      while (!flags[1]->load()) std::this_thread::yield();
    }, std::vector<std::atomic<bool>*>{&holding, &release}.data());
  });
  while (!holding.load()) std::this_thread::yield();
  const std::int64_t m = 256, n = 64, k = 128;
  std::vector<double> a(m * k, 1.0), b(k * n, 2.0), c(m * n, 0.0);
  std::mutex mutex;
  std::vector<std::thread::id> callers;
  blis_plugin::split_gemm(false, false, m, n, k, 1.0, a.data(), k, b.data(), n, 0.0, c.data(), n, team,
                          PanelAlign{4, 8},
                          [&](bool ta, bool tb, std::int64_t pm, std::int64_t pn, std::int64_t pk, double al,
                              double* ap, std::int64_t la, double* bp, std::int64_t lb, double be, double* cp,
                              std::int64_t lc) {
                            {
                              std::lock_guard<std::mutex> lock(mutex);
                              callers.push_back(std::this_thread::get_id());
                            }
                            reference_gemm(ta, tb, pm, pn, pk, al, ap, la, bp, lb, be, cp, lc);
                          });
  release.store(true);
  holder.join();
  ASSERT_EQ(callers.size(), 4u);
  for (const std::thread::id& id : callers) EXPECT_EQ(id, std::this_thread::get_id());
  for (double v : c) ASSERT_EQ(v, 2.0 * k);
}

}  // namespace
