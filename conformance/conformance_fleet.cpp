#include "conformance_fleet.hpp"

#include <fnmatch.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>

#include "blobrt/dist/communicator.hpp"
#include "blobrt/environment.hpp"
#include "blobrt/runtime.hpp"
#include "conformance_checks.hpp"
#include "json_out.hpp"

namespace blobrt::fleet {
namespace {

// Fields are tab-separated and rows newline-separated: neither may appear inside one.
std::string clean(std::string s) {
  for (char& c : s) {
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t end; (end = s.find(sep, start)) != std::string::npos; start = end + 1) {
    parts.push_back(s.substr(start, end - start));
  }
  parts.push_back(s.substr(start));
  return parts;
}

// Whether `name` matches one of the ':'-separated wildcard patterns in `patterns`.
bool matches_any(const std::string& patterns, const std::string& name) {
  for (const std::string& pattern : split(patterns, ':')) {
    // FNM_NOESCAPE: a backslash is itself, as in GoogleTest (test names have none anyway).
    if (!pattern.empty() && fnmatch(pattern.c_str(), name.c_str(), FNM_NOESCAPE) == 0) return true;
  }
  return false;
}

Row check_device(const std::string& node, int rank, const std::string& id, const std::string& filter) {
  Row row;
  row.node = node;
  row.rank = rank;
  row.device = id;
  row.backend = id.substr(0, id.find(':'));
  std::vector<conformance::Case> cases;
  for (const conformance::Case& c : conformance::standard_cases()) {
    if (filter_selects(filter, conformance::kTestPrefix + conformance::param_name(id, c))) cases.push_back(c);
  }
  // A device the filter leaves without a case is not opened, as in GoogleTest mode.
  if (cases.empty()) {
    row.status = "skipped";
    row.detail = "no case selected by --gtest_filter=" + filter;
    return row;
  }
  try {
    std::shared_ptr<Device> device = open_device(id);
    row.name = device->description().name;
    for (const conformance::Case& c : cases) {
      conformance::Result r = conformance::run_case(*device, c);
      if (r.skipped) {
        ++row.skipped;
      } else if (r.passed) {
        ++row.passed;
      } else {
        if (row.failed++ < 3) row.detail += (row.detail.empty() ? "" : "; ") + c.name() + ": " + r.detail;
      }
    }
  } catch (const std::exception& e) {
    ++row.failed;
    row.detail = std::string("cannot open: ") + e.what();
  }
  row.status = row.failed ? "failed" : row.passed ? "passed" : "skipped";
  if (!row.failed && row.skipped) row.detail = std::to_string(row.skipped) + " cases skipped (e.g. no fp64)";
  return row;
}

// The rank's own failed row: jobs here cannot run, or would not get what --expect names.
Row job_row(const std::string& node, int rank, const JobBackend& job, const std::string& expect,
            const std::string& usage_error) {
  Row row;
  row.node = node;
  row.rank = rank;
  const std::string& named = job.id.empty() ? job.spec : job.id;
  row.backend = named.substr(0, named.find(':'));
  row.device = "-";
  row.name = "jobs";
  row.jobs = job.id.empty() ? "error" : job.id;
  if (!usage_error.empty()) {
    row.detail = usage_error;
  } else if (!job.error.empty()) {
    row.detail = "jobs here get no backend: " + job.requested + ": " + job.error;
  } else if (!expect.empty() && !expected(job.id, expect)) {
    row.detail = "--expect " + expect + ": jobs here get " + job.id + " (" + job.requested + ")";
  } else {
    return Row{};
  }
  row.status = "failed";
  row.failed = 1;
  return row;
}

}  // namespace

JobBackend job_backend() {
  JobBackend job;
  const std::optional<std::string> requested = environment::get("BLOBRT_BACKEND");
  const bool given = requested && !requested->empty();
  job.spec = given ? *requested : "auto";
  job.requested = given ? "BLOBRT_BACKEND=" + *requested : "BLOBRT_BACKEND unset: auto";
  try {
    job.id = current_device_id();  // what any program started here would select
  } catch (const std::exception& e) {
    job.error = e.what();
  }
  return job;
}

bool filter_selects(const std::string& filter, const std::string& name) {
  // GoogleTest's reading: positive patterns, then '-' and negative ones. Before a '-' no
  // positive pattern means every test ("-*_gemm_*"); an empty filter selects none.
  const std::size_t dash = filter.find('-');
  const std::string positive = filter.substr(0, dash);
  const std::string negative = dash == std::string::npos ? "" : filter.substr(dash + 1);
  const bool all = positive.empty() && dash != std::string::npos;
  return (all || matches_any(positive, name)) && !matches_any(negative, name);
}

bool expected(const std::string& id, const std::string& expect) {
  if (expect.find(':') != std::string::npos) return id == expect;
  return id.substr(0, id.find(':')) == expect;
}

std::vector<Row> local_rows(const std::string& node, int rank, const std::string& expect,
                            const std::string& usage_error, const std::string& filter) {
  const JobBackend job = job_backend();
  std::vector<Row> rows;
  // A usage error fails the job at once: no case runs under a command line that was not meant.
  if (usage_error.empty()) {
    for (const std::string& id : available_devices()) rows.push_back(check_device(node, rank, id, filter));
  }
  for (const PluginReport& p : inventory().plugins) {
    if (p.usable) continue;
    Row row;
    row.node = node;
    row.rank = rank;
    row.backend = p.name.empty() ? "?" : p.name;
    row.device = "-";
    row.name = p.manifest;
    row.status = "skipped";
    row.detail = p.reason;
    rows.push_back(row);
  }
  Row problem = job_row(node, rank, job, expect, usage_error);
  if (!problem.status.empty()) rows.push_back(problem);
  for (Row& row : rows) row.jobs = job.id.empty() ? "error" : job.id;
  return rows;
}

std::string serialize(const std::vector<Row>& rows) {
  std::ostringstream s;
  for (const Row& r : rows) {
    s << clean(r.node) << '\t' << r.rank << '\t' << clean(r.backend) << '\t' << clean(r.device) << '\t'
      << clean(r.name) << '\t' << r.status << '\t' << r.passed << '\t' << r.failed << '\t' << r.skipped << '\t'
      << clean(r.detail) << '\t' << clean(r.jobs) << '\n';
  }
  return s.str();
}

std::vector<Row> deserialize(const std::string& text) {
  std::vector<Row> rows;
  for (const std::string& line : split(text, '\n')) {
    std::vector<std::string> f = split(line, '\t');
    if (f.size() != 11) continue;
    Row r;
    r.node = f[0];
    r.rank = std::stoi(f[1]);
    r.backend = f[2];
    r.device = f[3];
    r.name = f[4];
    r.status = f[5];
    r.passed = std::stoi(f[6]);
    r.failed = std::stoi(f[7]);
    r.skipped = std::stoi(f[8]);
    r.detail = f[9];
    r.jobs = f[10];
    rows.push_back(r);
  }
  return rows;
}

std::string table(const std::vector<Row>& rows, const std::string& filter) {
  const std::vector<std::string> head = {"node", "rank", "jobs get", "backend", "device", "result", "cases",
                                         "why / first failures"};
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    std::string cases = r.device == "-" ? "-"
                                         : std::to_string(r.passed) + " ok, " + std::to_string(r.failed) + " failed, " +
                                               std::to_string(r.skipped) + " skipped";
    cells.push_back({r.node, std::to_string(r.rank), r.jobs, r.backend, r.device + (r.name.empty() || r.device == "-" ? "" : " (" + r.name + ")"),
                     r.status, cases, r.detail});
  }
  std::vector<std::size_t> width(head.size());
  for (std::size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
  for (const auto& row : cells) {
    for (std::size_t i = 0; i + 1 < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::ostringstream s;
  auto line = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      s << row[i];
      if (i + 1 < row.size()) s << std::string(width[i] - row[i].size() + 2, ' ');
    }
    s << '\n';
  };
  line(head);
  for (const auto& row : cells) line(row);
  int failed = 0, nodes_rows = static_cast<int>(rows.size());
  for (const Row& r : rows) failed += r.status == "failed";
  s << nodes_rows << " rows, " << failed << " failed";
  if (filter != "*") s << " (rank 0's cases: --gtest_filter=" << filter << ")";
  s << '\n';
  return s.str();
}

std::string json(const std::vector<Row>& rows, const std::string& filter) {
  tools::json out = {{"rows", tools::json::array()}, {"failed", false}, {"filter", filter}};
  for (const Row& r : rows) {
    out["failed"] = out["failed"].get<bool>() || r.status == "failed";
    out["rows"].push_back({{"node", r.node}, {"rank", r.rank}, {"backend", r.backend}, {"device", r.device},
                           {"name", r.name}, {"status", r.status}, {"passed", r.passed}, {"failed", r.failed},
                           {"skipped", r.skipped}, {"detail", r.detail}, {"jobs", r.jobs}});
  }
  return tools::dump_json(out) + "\n";
}

int run(int argc, char** argv) {
  bool as_json = false;
  // A usage error becomes a failed row, not an early exit: every rank still takes part in
  // the collectives below, so the job ends instead of waiting for this rank.
  std::string expect, usage_error;
  // GoogleTest's default: GTEST_FILTER from the environment, else every case.
  const std::optional<std::string> from_environment = environment::get("GTEST_FILTER");
  std::string filter = from_environment ? *from_environment : "*";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--fleet") {
      continue;
    } else if (arg == "--json") {
      as_json = true;
    } else if (arg.rfind("--gtest_filter=", 0) == 0) {
      filter = arg.substr(15);
    } else if (arg == "--expect" || arg.rfind("--expect=", 0) == 0) {
      if (arg != "--expect") {
        expect = arg.substr(9);
      } else if (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0) {
        expect = argv[++i];
      }
      if (expect.empty()) usage_error = "--expect needs a backend (e.g. --expect cuda or --expect cuda:0)";
    } else if (usage_error.empty()) {
      // Any other GoogleTest flag would be ignored here: say so rather than run every case.
      usage_error = "--fleet takes --json, --expect and --gtest_filter=PATTERN, not '" + arg + "'";
    }
  }
  dist::MpiSession mpi(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");

  const std::string mine =
      serialize(local_rows(host, rank, usage_error.empty() ? expect : "", usage_error, filter));
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(ranks), offsets(ranks);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < ranks; ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::string all(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);

  int failed = 0;
  if (rank == 0) {
    std::vector<Row> rows = deserialize(all);
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return std::tie(a.node, a.rank) < std::tie(b.node, b.rank);
    });
    for (const Row& r : rows) failed = failed || r.status == "failed";
    std::fputs((as_json ? json(rows, filter) : table(rows, filter)).c_str(), stdout);
    std::fflush(stdout);
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return failed ? 1 : 0;
}

}  // namespace blobrt::fleet
