#!/usr/bin/env python3
"""Runs a libFuzzer target on a copy of its seed corpus (libFuzzer adds what it finds to
the first corpus directory; the repository's seeds stay as they are).
usage: run_fuzzer.py FUZZER SEED_DIR RUNS [extra libFuzzer flags...]"""
import shutil
import subprocess
import sys
import tempfile

fuzzer, seeds, runs, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
with tempfile.TemporaryDirectory() as corpus:
    shutil.copytree(seeds, corpus, dirs_exist_ok=True)
    result = subprocess.run([fuzzer, f"-runs={runs}", "-max_len=4096", "-print_final_stats=1", *extra, corpus])
sys.exit(result.returncode)
