# Sourced by every CI stage (ci/*.sh): where things are, the stages a stage needs first,
# and where it leaves its JUnit logs. A stage runs alone from a clean clone
# (`bash ci/suite.sh`): what it needs first (deps, the build) runs first, once.
#   BUILD_DIR   the main build directory, relative to the tree (default: build)
#   MESON_ARGS  extra `meson setup` options for it
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-build}"
cd "$root"
# The JUnit logs of every stage land here; tools/build.sh test sums them in one line.
junit_dir="$root/$build-junit"
mkdir -p "$junit_dir"

# The CUDA toolkit is not a Debian package here; meson finds it in /usr/local/cuda.
if [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
  export CUDA_PATH="${CUDA_PATH:-/usr/local/cuda}"
fi

# ccache (installed by stage deps) between the stages that compile the same sources with
# the same flags: build, wheel, outside-in and gpu-bundle are release builds of one tree, and
# meson puts ccache in front of gcc and nvcc when it is on PATH. The cache lives beside the
# build (a fresh clone starts empty, so a run's times are its own). BASEDIR and NOHASHDIR let
# build directories at the same depth share objects: their compile lines then match. Stages
# whose flags nothing else shares (the sanitizers', the fuzzers', Debian's) turn it off.
if [ "${BLOBRT_CI_TESTS:-enabled}" != disabled ]; then
  export CCACHE_DIR="${CCACHE_DIR:-$root/$build-ccache}" CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-6G}"
fi

# Where a stage notes the seconds its compiling took (compiling, below; the outside-in and
# GPU-bundle tests note theirs too): tools/build.sh test prints them beside each stage's time.
export BLOBRT_CI_COMPILE_LOG="${BLOBRT_CI_COMPILE_LOG:-$junit_dir/compile-seconds}"

# Runs CMD and notes its wall time as compile time of the stage STAGE.
compiling() {  # compiling STAGE CMD...
  local stage="$1" start=$SECONDS status=0
  shift
  "$@" || status=$?
  echo "$stage $((SECONDS - start))" >> "$BLOBRT_CI_COMPILE_LOG"
  return "$status"
}

# Runs stage NAME unless this run of the test command (or this stage) already did.
needs() {
  case " ${BLOBRT_CI_DONE:-} " in
    *" $1 "*) return 0 ;;
  esac
  bash "$root/ci/$1.sh"
  export BLOBRT_CI_DONE="${BLOBRT_CI_DONE:-} $1"
}

# Keeps a copy of a JUnit log under the stage's name (meson rewrites testlog.junit.xml
# at every run).
keep_junit() {  # keep_junit FILE NAME
  [ -f "$1" ] && cp "$1" "$junit_dir/$2.junit.xml"
  return 0
}

# A stage run by hand ends with its own count; under tools/build.sh the whole run does.
stage_summary() {  # stage_summary STATUS NAME...
  local status="$1"
  shift
  if [ -z "${BLOBRT_CI_ALL:-}" ]; then
    local logs=()
    for name in "$@"; do
      [ -f "$junit_dir/$name.junit.xml" ] && logs+=("$junit_dir/$name.junit.xml")
    done
    if ((${#logs[@]})); then python3 "$root/tools/test_summary.py" "${logs[@]}" || status=1; fi
  fi
  return "$status"
}

# Debian's libgomp, for LD_PRELOAD where a tool must see it from the start (the sanitizer
# and valgrind stages say why); empty where there is none.
ci_libgomp_preload() {
  local libgomp
  libgomp="$(gcc -print-file-name=libgomp.so.1)"
  if [ -f "$libgomp" ]; then echo "$libgomp${LD_PRELOAD:+:$LD_PRELOAD}"; else echo "${LD_PRELOAD:-}"; fi
}
