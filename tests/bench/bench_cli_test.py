#!/usr/bin/env python3
"""The benchmark drivers' command lines (benchmarks/bench_cli.hpp): --help (ours, then
Google Benchmark's flags) exits 0 and documents the exit codes, --version names blobrt's
version, an unknown option or flag exits 2 with one line naming it, a filter that selects
nothing exits 1 saying so, and a run on a tiny filter says on stderr how many benchmarks
match and (where runs last a minimum time) the estimated time, while stdout stays the
clean JSON that tools/bench.sh reads; tools/bench_report.py and benchmarks/team_report.py
still read blobrt-bench's smoke run.

usage: bench_cli_test.py VERSION BENCH_REPORT TEAM_REPORT [DRIVER FILTER SMOKE]...
  FILTER: a filter that selects one benchmark; SMOKE: 1 if the driver has --blobrt_smoke.
  The first driver is blobrt-bench.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

version, bench_report, team_report, rest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
drivers = [rest[i:i + 3] for i in range(0, len(rest), 3)]
failures = []


def run(exe, *args):
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)


def check(ok, what, p):
    if not ok:
        failures.append("%s\n  rc=%d\n  stdout: %s\n  stderr: %s" % (what, p.returncode, p.stdout[-2000:], p.stderr[-2000:]))


def usage_error(exe, name, args, named):
    p = run(exe, *args)
    lines = p.stderr.splitlines()
    check(p.returncode == 2 and lines and named in lines[0] and p.stdout == "",
          "%s %s: exit 2, first line names %s" % (name, " ".join(args), named), p)


for exe, tiny_filter, smoke in drivers:
    name = os.path.basename(exe)
    smoke_args = ["--blobrt_smoke"] if smoke == "1" else []

    p = run(exe, "--help")
    check(p.returncode == 0 and "Exit codes:" in p.stdout and "2 usage error" in p.stdout
          and "--benchmark_filter" in p.stdout and ("--blobrt_smoke" in p.stdout) == (smoke == "1")
          and p.stdout.index("Exit codes:") < p.stdout.index("--benchmark_filter"),
          "%s --help: ours, exit codes, then Google Benchmark's flags" % name, p)
    p = run(exe, "--version")
    check(p.returncode == 0 and p.stdout.strip() == "%s %s" % (name, version), "%s --version" % name, p)

    usage_error(exe, name, ["--bogus"], "--bogus")
    usage_error(exe, name, ["stray"], "stray")
    usage_error(exe, name, ["--benchmark_bogus=1"], "--benchmark_bogus")
    if smoke == "1":
        usage_error(exe, name, ["--blobrt_smoke=maybe"], "--blobrt_smoke")

    p = run(exe, *smoke_args, "--benchmark_filter=^no/such/benchmark$")
    check(p.returncode == 1 and "no benchmark matches the filter '^no/such/benchmark$'" in p.stderr,
          "%s: a filter that selects nothing exits 1 saying so" % name, p)

    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out.json")
        # blobrt-bench-dist's report is the console's, whatever the format (tools/bench-dist.sh reads it)
        stdout_json = name != "blobrt-bench-dist"
        p = run(exe, *smoke_args, "--benchmark_filter=" + tiny_filter, "--benchmark_min_time=0.01",
                "--benchmark_out=" + out, "--benchmark_out_format=json",
                *(["--benchmark_format=json"] if stdout_json else []))
        plan = re.search(r"^%s: 1 benchmark matches the filter '%s', (\d+) runs? with repetitions; (.*)$"
                         % (re.escape(name), re.escape(tiny_filter)), p.stderr, re.M)
        check(p.returncode == 0 and plan is not None and "benchmark matches" not in p.stdout,
              "%s: the plan line on stderr only" % name, p)
        if plan and name != "blobrt-bench-dist":  # its runs have a fixed number of iterations
            check(plan.group(2).startswith("estimated time ") and "an estimate" in plan.group(2),
                  "%s: the plan line estimates the time" % name, p)
        for what, text in [("--benchmark_out", open(out).read() if os.path.exists(out) else "")] + \
                          ([("stdout", p.stdout)] if stdout_json else []):
            try:
                results = json.loads(text)["benchmarks"]
                check(len(results) >= 1 and results[0]["name"].startswith(tiny_filter.strip("^$")),
                      "%s: %s is the JSON of the selected benchmark" % (name, what), p)
            except (ValueError, KeyError) as e:
                check(False, "%s: %s is JSON (%s)" % (name, what, e), p)


def check_reports(blobrt_bench):
    """The report scripts on a smoke run of the benchmarks they tabulate."""
    with tempfile.TemporaryDirectory() as d:
        out, md = os.path.join(d, "smoke.json"), os.path.join(d, "report.md")
        p = run(blobrt_bench, "--blobrt_smoke", "--benchmark_filter=^(probe|device|math|team)/",
                "--benchmark_min_time=0.001", "--benchmark_out=" + out, "--benchmark_out_format=json")
        check(p.returncode == 0, "blobrt-bench smoke run for the reports", p)
        p = subprocess.run([sys.executable, bench_report, out, md], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0 and os.path.exists(md) and "### Level-1 operations" in open(md).read(),
              "tools/bench_report.py reads the smoke run", p)
        # exit 1 = the team missed its target, which smoke sizes on a loaded machine may do
        p = subprocess.run([sys.executable, team_report, out], capture_output=True, text=True, timeout=120)
        check(p.returncode in (0, 1) and "| op | n | one thread (us)" in p.stdout and "worst loaded / one" in p.stdout,
              "benchmarks/team_report.py reads the smoke run", p)
        p = subprocess.run([sys.executable, team_report], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and "results" in p.stderr, "team_report.py without its file: exit 2 naming it", p)


check_reports(drivers[0][0])
if failures:
    sys.exit("FAILED:\n" + "\n".join(failures))
print("benchmark drivers: %d, --help, --version, usage errors, no match, plan line and clean JSON each"
      % len(drivers))
