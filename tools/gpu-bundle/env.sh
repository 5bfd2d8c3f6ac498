# Source this to use the bundle by hand: `. DIR/env.sh; blobrt info`.
# It points blobrt at the bundle's plugins and scanner (the paths baked into libblobrt are
# those of the machine that built it) and finds the NVIDIA libraries the node provides.
blobrt_bundle="$(CDPATH='' cd "$(dirname "${BASH_SOURCE[0]:-$0}")" && pwd)"

# Prints the directory holding NAME: the dynamic linker's cache first, then the places
# CUDA installs and Python wheels (nvidia-cublas, nvidia-cuda-runtime, nvidia-nccl-cu13)
# put it.
blobrt_find_lib() {
  local found d
  # No reader here leaves its pipe early: under a caller's pipefail, the writer's SIGPIPE
  # would read as a failure.
  found=$(ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n && /x86-64/ && !seen {print $NF; seen = 1}')
  if [ -z "$found" ]; then
    for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-*/lib64 \
             /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
      [ -e "$d/$1" ] && { found="$d/$1"; break; }
    done
  fi
  if [ -z "$found" ] && [ "${2:-}" != optional ]; then
    found=$(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name "$1" -print -quit 2>/dev/null)
  fi
  [ -n "$found" ] && dirname "$found"
}

blobrt_libs="$blobrt_bundle/lib:$blobrt_bundle/lib/deps"
# The bundle's libstdc++ only where the node's own lacks a symbol version the bundle needs.
blobrt_cxx_needed=$(cat "$blobrt_bundle/lib/cxx/GLIBCXX_NEEDED" 2>/dev/null)
blobrt_sys_cxx=$(ldconfig -p 2>/dev/null | awk '$1 == "libstdc++.so.6" && /x86-64/ && !seen {print $NF; seen = 1}')
if [ -z "$blobrt_sys_cxx" ] || { [ -n "$blobrt_cxx_needed" ] && ! grep -qa "$blobrt_cxx_needed" "$blobrt_sys_cxx"; }; then
  blobrt_libs="$blobrt_libs:$blobrt_bundle/lib/cxx"
fi
# libnccl: the NCCL part (test_nccl_part) needs it, blobrt-bench-cuda reports its version;
# a node may lack it, so it is looked for where NCCL installs (its wheel: under a Python's
# site-packages), not on the whole disk.
blobrt_nccl_wheel=$(python3 -c 'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "lib"))' 2>/dev/null || true)
for blobrt_lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  blobrt_dir=""
  if [ "$blobrt_lib" = libnccl.so.2 ]; then
    blobrt_dir=$(blobrt_find_lib "$blobrt_lib" optional) ||
      { [ -e "$blobrt_nccl_wheel/$blobrt_lib" ] && blobrt_dir="$blobrt_nccl_wheel"; }
  else
    blobrt_dir=$(blobrt_find_lib "$blobrt_lib")
  fi
  [ -n "$blobrt_dir" ] && case ":$blobrt_libs:" in
    *":$blobrt_dir:"*) ;;
    *) blobrt_libs="$blobrt_libs:$blobrt_dir" ;;
  esac
done
export LD_LIBRARY_PATH="$blobrt_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$blobrt_bundle/bin:$PATH"
export BLOBRT_PLUGIN_SYSTEM_PATH="$blobrt_bundle/lib/blobrt/plugins.d"
export BLOBRT_PLUGIN_SCANNER="$blobrt_bundle/libexec/blobrt-plugin-scanner"
# What a user's shell keeps: the exports above, nothing else of this file's.
unset blobrt_bundle blobrt_libs blobrt_cxx_needed blobrt_sys_cxx blobrt_lib blobrt_dir blobrt_nccl_wheel
unset -f blobrt_find_lib
