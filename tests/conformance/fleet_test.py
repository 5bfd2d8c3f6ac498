#!/usr/bin/env python3
"""blobrt-conformance --fleet under mpirun: a fleet of ranks with different plugins.

usage: fleet_test.py MPIRUN CONFORMANCE BLIS_DIR BROKEN_MODULE ABI
Rank 0 sees every plugin of the build (BLOBRT_PLUGIN_PATH from the test environment),
rank 1 only BLIS, and in the second run rank 1 only a plugin whose axpy is wrong. Then the
backend jobs get on each rank: a BLOBRT_BACKEND that cannot be used on rank 1, and an
--expect that rank 1 does not meet, each fail the job naming rank 1 and why.
The fleets run the axpy cases (--gtest_filter, which selects what it selects in GoogleTest
mode: checked against --gtest_list_tests); the whole suite runs in GoogleTest mode elsewhere.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

mpirun, conformance, blis_dir, broken_module, abi = sys.argv[1:6]
MPI = [mpirun, "--allow-run-as-root", "--oversubscribe", "--timeout", "240",
       "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"]
failures = []


def check(cond, what, output=""):
    if not cond:
        failures.append(what + ("\n--- output:\n" + output if output else ""))


AXPY = "--gtest_filter=*_axpy_*"


def listed(filter_arg):
    """Per device ("blis:0"), how many cases GoogleTest mode selects by this --gtest_filter."""
    out = subprocess.run([conformance, filter_arg, "--gtest_list_tests"], capture_output=True, text=True,
                         timeout=120).stdout
    counts, suite = {}, ""
    for line in out.splitlines():
        if not line.startswith(" "):
            suite = line.strip()
        elif suite == "AllDevices/Conformance.":
            param = line.split()[0].split("/", 1)[1]  # MatchesHostReference/blis_0_axpy_...
            backend, index = param.split("_")[:2]
            counts[backend + ":" + index] = counts.get(backend + ":" + index, 0) + 1
    return counts


def fleet(rank1_path, *extra, env0=(), env1=(), cases=AXPY):
    """env0/env1: VAR=VALUE settings for rank 0 / rank 1 only; cases: the --gtest_filter."""
    extra = (cases,) + extra if cases else extra
    x0 = [a for v in env0 for a in ("-x", v)]
    x1 = [a for v in env1 for a in ("-x", v)]
    cmd = MPI + ["-np", "1", *x0, conformance, "--fleet", *extra, ":",
                 "-np", "1", "-x", "BLOBRT_PLUGIN_PATH=" + rank1_path, *x1, conformance, "--fleet", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=280)
    return p.returncode, p.stdout, p.stdout + p.stderr


def parse(out):
    return json.loads(out) if out.strip().startswith("{") else {"rows": [], "failed": False}


# 1. A healthy, heterogeneous fleet: exit 0, one row per device and unusable plugin.
code, out, log = fleet(blis_dir, "--json")
check(code == 0, "healthy fleet exits 0, got %d" % code, log)
try:
    report = json.loads(out)
except ValueError as e:
    report = {"rows": [], "failed": True}
    check(False, "--json output parses: %s" % e, log)
rows = report["rows"]
by_rank = {0: [], 1: []}
for r in rows:
    by_rank.setdefault(r["rank"], []).append(r)
check(report["failed"] is False, "healthy fleet: failed is false", out)
check(report.get("filter") == AXPY.split("=", 1)[1], "--json names the filter", out)
rank1 = sorted(r["device"] for r in by_rank[1])
check(rank1 == ["blis:0", "host:0"], "rank 1 sees exactly host and blis, got %s" % rank1, out)
for r in rows:
    if r["device"] == "-":
        check(r["status"] == "skipped" and r["detail"], "an unusable plugin is skipped with its reason: %s" % r, out)
    else:
        check(r["status"] == "passed" and r["passed"] >= 12 and r["failed"] == 0, "device passes: %s" % r, out)
axpy = listed(AXPY)
for r in by_rank[0]:
    if r["device"] != "-":
        check(r["passed"] + r["skipped"] == axpy.get(r["device"]),
              "%s runs the %s cases GoogleTest mode lists for %s: %s" % (r["device"], axpy.get(r["device"]), AXPY, r), out)
rank0 = {r["device"] for r in by_rank[0]}
check({"host:0", "blis:0"} <= rank0, "rank 0 sees host and blis at least, got %s" % sorted(rank0), out)
check(all(r["node"] for r in rows), "every row names its node", out)
# What jobs get on each rank: blobrt's selection there (auto; rank 1 has only BLIS).
check(all(r.get("jobs") == "blis:0" for r in by_rank[1]), "rank 1's jobs get blis:0", out)
check(all(r.get("jobs") and r.get("jobs") != "error" for r in rows), "every row says what jobs get", out)

# 2. The same as a table.
code, out, log = fleet(blis_dir)
check(code == 0 and out.startswith("node  rank  jobs get  backend"), "table mode prints the table", log)
check("rows, 0 failed (rank 0's cases: " + AXPY + ")" in out, "table mode ends with the count of failures and the filter", log)

# 2b. GoogleTest's negative patterns, and a filter that selects nothing (exit 0, as GoogleTest).
negative = "--gtest_filter=*_axpy_*:*_scal_*-*double*:*/host_0_*"
code, out, log = fleet(blis_dir, "--json", cases=negative)
selected = listed(negative)
devices = [r for r in parse(out)["rows"] if r["rank"] == 0 and r["device"] != "-"]
check(len(devices) >= 2, "the negative filter's fleet reports rank 0's devices", log)
for r in devices:
    check(r["passed"] + r["skipped"] == selected.get(r["device"], 0) and r["failed"] == 0,
          "%s with %s: %s" % (r["device"], negative, r), out)
    if r["device"] == "host:0":  # no case selected: skipped, and the device not even opened (no name)
        check(r["status"] == "skipped" and r["name"] == "", "a device with no case selected is not opened: %s" % r)
check(code == 0 and selected.get("host:0") is None and selected.get("blis:0", 0) >= 12, "negative filter", log)
for empty in ("--gtest_filter=no_such_case", "--gtest_filter="):
    code, out, log = fleet(blis_dir, cases=empty)
    check(code == 0 and "no case selected by " + empty + "\n" in out and "passed" not in out,
          "a filter selecting nothing (%s): every device skipped, as GoogleTest runs none" % empty, log)
# GoogleTest's GTEST_FILTER, where no --gtest_filter is given.
code, out, log = fleet(blis_dir, "--json", cases=None, env0=["GTEST_FILTER=*_scal_*"], env1=["GTEST_FILTER=*_scal_*"])
scal = listed("--gtest_filter=*_scal_*")
devices = [r for r in parse(out)["rows"] if r["device"] != "-"]
check(code == 0 and devices and all(r["passed"] + r["skipped"] == scal.get(r["device"]) for r in devices)
      and parse(out).get("filter") == "*_scal_*", "GTEST_FILTER selects the cases where no --gtest_filter is given", log)

# 2c. Any other flag fails the job at once, naming it (GoogleTest's --gtest_repeat is not the fleet's).
code, out, log = fleet(blis_dir, "--gtest_repeat=2")
check(code != 0 and "not '--gtest_repeat=2'" in out and "ok," not in out, "an unknown flag is a usage error", log)

# 3. A rank with a broken plugin: the table says which node, rank and case, and the job fails.
broken = tempfile.mkdtemp(prefix="blobrt-fleet-")
try:
    shutil.copy(broken_module, broken)
    with open(os.path.join(broken, "wrongaxpy.plugin"), "w") as f:
        f.write("name = wrongaxpy\nlibrary = %s\nabi = %s\npriority = 5\n" % (os.path.basename(broken_module), abi))
    code, out, log = fleet(broken, "--json")
    check(code != 0, "a failure on one rank fails the job", log)
    report = json.loads(out) if out.strip().startswith("{") else {"rows": [], "failed": False}
    check(report["failed"] is True, "--json says failed", out)
    bad = [r for r in report["rows"] if r["backend"] == "wrongaxpy"]
    check(len(bad) == 1 and bad[0]["rank"] == 1 and bad[0]["status"] == "failed" and "axpy" in bad[0]["detail"],
          "the broken plugin's row names rank 1 and an axpy case: %s" % bad, out)
finally:
    shutil.rmtree(broken)




# 4. Rank 1's BLOBRT_BACKEND names a backend it cannot use: all its devices pass, but jobs
#    there would fail to start, so the job fails, naming rank 1 and the selection's error.
code, out, log = fleet(blis_dir, "--json", env1=["BLOBRT_BACKEND=bliss"])
check(code != 0, "a rank whose BLOBRT_BACKEND cannot be used fails the job", log)
report = parse(out)
check(report["failed"] is True, "--json says failed (bad BLOBRT_BACKEND)", out)
bad = [r for r in report["rows"] if r["status"] == "failed"]
check(len(bad) == 1 and bad[0]["rank"] == 1 and bad[0]["backend"] == "bliss" and bad[0].get("jobs") == "error"
      and "BLOBRT_BACKEND=bliss" in bad[0]["detail"] and "cannot be used" in bad[0]["detail"],
      "one failed row, rank 1's, naming BLOBRT_BACKEND=bliss and why: %s" % bad, out)
check(all(r.get("jobs") == "error" for r in report["rows"] if r["rank"] == 1), "rank 1's jobs get an error", out)
code, out, log = fleet(blis_dir, env1=["BLOBRT_BACKEND=bliss"])
check(code != 0 and "jobs here get no backend: BLOBRT_BACKEND=bliss" in out,
      "the table names the bad BLOBRT_BACKEND", log)

# 5. --expect blis (say, a CPU partition): rank 1 set to host does not get it and fails the job.
code, out, log = fleet(blis_dir, "--json", "--expect", "blis", env0=["BLOBRT_BACKEND=blis"],
                       env1=["BLOBRT_BACKEND=host"])
check(code != 0, "a rank that does not get the --expect backend fails the job", log)
report = parse(out)
bad = [r for r in report["rows"] if r["status"] == "failed"]
check(len(bad) == 1 and bad[0]["rank"] == 1 and bad[0].get("jobs") == "host:0"
      and "--expect blis: jobs here get host:0 (BLOBRT_BACKEND=host)" in bad[0]["detail"],
      "one failed row, rank 1's, saying it gets host:0 not blis: %s" % bad, out)
# ... and a fleet where every rank gets it stays green (a device id works too).
code, out, log = fleet(blis_dir, "--expect=blis:0", env0=["BLOBRT_BACKEND=blis"])
check(code == 0 and "rows, 0 failed" in out, "--expect met on every rank: exit 0", log)

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("fleet conformance: ok")
