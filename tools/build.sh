#!/usr/bin/env bash
# One command from a fresh Debian 12 machine (as root) to a working blobrt:
#   tools/build.sh demo   install dependencies, build, show `blobrt info`, run the Caffe demo
#   tools/build.sh test   the CI stages in order (ci/stages: what CI runs), each one that still
#                         fits the run's budget, one closing line
# Each stage is ci/NAME.sh and runs alone as well. BUILD_DIR (default: build) and
# MESON_ARGS (extra `meson setup` options) may be set.
set -euo pipefail

mode="${1:-demo}"
root="$(cd "$(dirname "$0")/.." && pwd)"
case "$mode" in
  demo)
    # The quick start: no tests built, no test tools installed.
    BLOBRT_CI_TESTS=disabled exec bash "$root/ci/build.sh" ;;
  test) ;;
  *) echo "usage: tools/build.sh demo|test" >&2; exit 2 ;;
esac

build="${BUILD_DIR:-build}"
junit_dir="$root/$build-junit"
rm -rf "$junit_dir"
export BLOBRT_CI_ALL=1 BLOBRT_CI_DONE=""
mkdir -p "$junit_dir"
status=0
timings=()
# Each stage notes the seconds it spent compiling in a file of its own (ci/lib.sh), printed
# with its time. Whatever is noted while the stage runs is the stage's, under any label: a
# build run inside another stage (the clean root's `tools/build.sh demo`) notes itself as
# `build`, and was once counted into the build stage's time.
compile_log() { echo "$junit_dir/compile-seconds-$1"; }
compile_seconds() {  # compile_seconds STAGE: the seconds noted during STAGE, summed
  awk '{ s += $2 } END { print s + 0 }' "$(compile_log "$1")" 2>/dev/null || echo 0
}
# Read first: a stage's programs (mpirun, apt) must not read the rest of the list as input.
mapfile -t lines < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$root/ci/stages")
# CI ends a run at 90 minutes and lands nothing then. The run has a budget of 70
# (BLOBRT_CI_BUDGET_S, seconds): a stage starts only if it can still end within it, by its
# least time (ci/stages); otherwise it is reported as skipped, with the times, and the run
# ends green or red on what ran. A stage that runs past its least time can take the run past
# the budget; the 20 minutes to CI's limit are the margin for that.
budget="${BLOBRT_CI_BUDGET_S:-4200}"
[[ "$budget" =~ ^[0-9]+$ ]] || { echo "BLOBRT_CI_BUDGET_S=$budget: expected a number of seconds" >&2; exit 2; }
for line in "${lines[@]}"; do
  read -r stage least _ <<< "$line"
  [[ "${least:-}" =~ ^[0-9]+$ ]] || { echo "ci/stages: '$line': expected NAME LEAST_SECONDS" >&2; exit 2; }
  start=$SECONDS
  if ((SECONDS + least > budget)); then
    echo "== stage $stage skipped: $SECONDS s into the run, and it takes at least $least s; the budget is $budget s (BLOBRT_CI_BUDGET_S). Run it alone: bash ci/$stage.sh"
    timings+=("$(printf '%-11s %7s' "$stage" skipped)")
    # A run without the build and the suite has tested nothing: it fails, and without the
    # dependencies or the build nothing after them can run.
    case "$stage" in deps|build|suite) status=1; echo "== a run without stage $stage fails" ;; esac
    case "$stage" in deps|build) break ;; esac
    continue
  fi
  if ! BLOBRT_CI_COMPILE_LOG="$(compile_log "$stage")" bash "$root/ci/$stage.sh" < /dev/null; then
    status=1
    echo "== stage $stage failed"
    # Without its dependencies or its build nothing after it can run.
    case "$stage" in deps|build) break ;; esac
  fi
  took=$((SECONDS - start))
  compiled="$(compile_seconds "$stage")"
  timings+=("$(printf '%-11s %5d s  %5d s %5d s' "$stage" "$took" "$compiled" $((took - compiled)))")
  BLOBRT_CI_DONE="$BLOBRT_CI_DONE $stage"
done

echo "== stage times (compile: configuring, compiling and packaging; run: the rest)"
printf '  %-11s %7s  %7s %7s\n' stage total compile run
printf '  %s\n' "${timings[@]}"
echo "  the run: $SECONDS s of its $budget s budget"
shopt -s nullglob
python3 "$root/tools/test_summary.py" "$junit_dir"/*.junit.xml || status=1
exit "$status"
