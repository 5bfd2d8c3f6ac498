# The GPU half of a Caffe tree for the portable build (docs/caffe-on-blobrt.md, "One build
# for every node"): one C++ source per .cu file of the tree's src/caffe, written into a
# folder of the build's, so that a Caffe library built with no nvcc and no CUDA library
# has every GPU method and GPU function Caffe's .cpp files call:
#  - a .cu with no kernel (Convolution's, InnerProduct's: only caffe_gpu_* calls) is
#    included as it is, compiled as C++: Caffe's own code, on the device through blobrt;
#  - a .cu whose kernels belong to layers (INSTANTIATE_LAYER_GPU_FUNCS/_FORWARD/_BACKWARD)
#    becomes those layers' GPU methods over blobrt/caffe/portable/gpu_methods.hpp: the
#    implementation the device's backend registered, else the layer's CPU code;
#  - any other .cu (im2col's, the solvers' updates) is blobrt-caffe's portable form of it,
#    <blobrt/caffe/portable/cu/PATH.hpp>, where blobrt-caffe has one; where it has none the
#    source says so at compile time (#pragma message), and a .cpp calling its functions
#    will not link.
# Skipped: util/math_functions.cu (blobrt's math), test_*.cu, cuDNN's (cudnn_*.cu).
#
# Caffe's CMake build: caffe-on-blobrt.cmake includes this file and calls
# blobrt_caffe_portable_gpu_sources(). Caffe's Makefile (or any other build): as a script,
#   cmake -DCAFFE_ROOT=<tree> -DOUTPUT_DIR=<tree>/blobrt-portable-gpu -P caffe-portable-gpu.cmake
# then compile OUTPUT_DIR's .cpp files with the library's other sources.

# Writes `text` to `path` unless it holds that text already (its time stamp kept: nothing
# rebuilds).
function(blobrt_caffe_write_if_changed path text)
  set(old "")
  if(EXISTS "${path}")
    file(READ "${path}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${path}" "${text}")
  endif()
endfunction()

# The id of a Caffe tree's build in `out_var`: a hash of its headers and caffe.proto, the
# layer classes' declarations, which a Caffe-layers plugin must have been compiled with
# (blobrt/caffe/portable/layer_plugin.hpp), and of BLOBRT_CAFFE_BUILD_ID_EXTRA where set
# (caffe-on-blobrt.cmake: blobrt's version and the library's compile definitions).
function(blobrt_caffe_build_id root out_var)
  file(GLOB_RECURSE declarations RELATIVE "${root}" "${root}/include/*.hpp" "${root}/include/*.h"
       "${root}/include/*.cuh" "${root}/src/caffe/proto/*.proto")
  list(SORT declarations)
  set(all "")
  foreach(declaration IN LISTS declarations)
    file(SHA256 "${root}/${declaration}" hash)
    string(APPEND all "${declaration} ${hash}\n")
  endforeach()
  string(SHA256 id "${all}${BLOBRT_CAFFE_BUILD_ID_EXTRA}")
  string(SUBSTRING "${id}" 0 16 id)
  set(${out_var} "${id}" PARENT_SCOPE)
endfunction()

# Caffe's Makefile route: what its COMMON_FLAGS (as make prints them: `make
# --eval='print-%: ; @echo $($*)' print-COMMON_FLAGS`) say of the library's compiles. In
# `definitions_var` the -D flags, sorted, without -D; in `includes_var` the -I and -isystem
# directories, in order, made absolute against the tree `root` (make runs there), those
# that do not exist left out as the compiler leaves them out.
function(blobrt_caffe_makefile_flags root flags definitions_var includes_var)
  separate_arguments(words UNIX_COMMAND "${flags}")
  set(definitions)
  set(includes)
  set(pending "")  # "-D" or "-I" (also for -isystem) when the value is the next word
  foreach(word IN LISTS words)
    set(kind "${pending}")
    set(value "${word}")
    set(pending "")
    if(kind STREQUAL "")
      if(word STREQUAL "-D")
        set(pending "-D")
      elseif(word STREQUAL "-I" OR word STREQUAL "-isystem")
        set(pending "-I")
      elseif(word MATCHES "^-[DI].")
        string(SUBSTRING "${word}" 0 2 kind)
        string(SUBSTRING "${word}" 2 -1 value)
      endif()
    endif()
    if(kind STREQUAL "-D")
      list(APPEND definitions "${value}")
    elseif(kind STREQUAL "-I")
      get_filename_component(value "${value}" ABSOLUTE BASE_DIR "${root}")
      if(IS_DIRECTORY "${value}")
        list(APPEND includes "${value}")
      endif()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES definitions)
  list(SORT definitions)
  list(REMOVE_DUPLICATES includes)
  set(${definitions_var} "${definitions}" PARENT_SCOPE)
  set(${includes_var} "${includes}" PARENT_SCOPE)
endfunction()

# The Makefile route's part of the build id (BLOBRT_CAFFE_BUILD_ID_EXTRA), the same in the
# generator run as a script and in caffe-layers-cuda/: blobrt's version and the library's
# compile definitions, as caffe-on-blobrt.cmake's covers them in a CMake build.
function(blobrt_caffe_makefile_build_id_extra version definitions out_var)
  set(${out_var} "blobrt ${version}; Caffe's Makefile; ${definitions}" PARENT_SCOPE)
endfunction()

# Writes the sources for the tree `root` into `output_dir`; the list of them in `out_var`,
# and in `others_var` the .cu files (relative to src/caffe) that are neither a layer's nor
# Caffe's own, whose portable form blobrt-caffe may lack. With a fifth argument, the layer
# .cu files with kernels in that variable, each as "PATH|CLASS|FUNCS" (or FORWARD or
# BACKWARD), for a Caffe-layers plugin (caffe-layer-plugin.cmake). One more source says
# where libcaffe finds such plugins (layer_plugins_folder.cpp, with the tree's build id).
# A source whose text did not change keeps its time stamp (nothing rebuilds).
function(blobrt_caffe_portable_gpu_sources root output_dir out_var others_var)
  set(kernel_layers)
  file(GLOB_RECURSE cu_files RELATIVE "${root}/src/caffe" "${root}/src/caffe/*.cu")
  list(SORT cu_files)
  if(NOT CMAKE_SCRIPT_MODE_FILE)
    # In a configure (caffe-on-blobrt.cmake): a .cu changed (a kernel added) configures again.
    list(TRANSFORM cu_files PREPEND "${root}/src/caffe/" OUTPUT_VARIABLE cu_paths)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${cu_paths})
  endif()
  file(MAKE_DIRECTORY "${output_dir}")
  set(sources)
  set(native 0)
  set(dispatched 0)
  set(replaced 0)
  set(others)
  foreach(rel IN LISTS cu_files)
    get_filename_component(name "${rel}" NAME)
    if(name MATCHES "^(test_|cudnn_)" OR rel STREQUAL "util/math_functions.cu")
      continue()
    endif()
    set(path "${root}/src/caffe/${rel}")
    file(READ "${path}" text)
    set(out "// Generated by blobrt's caffe-portable-gpu.cmake from src/caffe/${rel}: do not edit.\n")
    if(NOT text MATCHES "__global__|<<<")
      # No kernel: Caffe's own code, as C++.
      string(APPEND out "#include \"${path}\"\n")
      math(EXPR native "${native} + 1")
    else()
      set(instantiation_regex "INSTANTIATE_LAYER_GPU_(FUNCS|FORWARD|BACKWARD)\\([ \t]*([A-Za-z0-9_]+)[ \t]*\\)")
      string(REGEX MATCHALL "${instantiation_regex}" instantiations "${text}")
      if(instantiations)
        # The .cu's own includes (the layer's header among them) with the conditionals
        # around them, less CUDA's headers; lines, so that a commented-out one stays out.
        file(STRINGS "${path}" directives REGEX "^[ \t]*#[ \t]*(include|if|ifdef|ifndef|elif|else|endif)([ \t<\"]|$)")
        set(cuda_header "[<\"](thrust/|cub/|cuda[A-Za-z0-9_]*\\.h|cublas[A-Za-z0-9_]*\\.h|curand[A-Za-z0-9_]*\\.h|cudnn[A-Za-z0-9_]*\\.h|device_functions\\.h|math_constants\\.h|[^>\"]*\\.cuh[>\"])")
        foreach(directive IN LISTS directives)
          if(NOT (directive MATCHES "#[ \t]*include" AND directive MATCHES "${cuda_header}"))
            string(APPEND out "${directive}\n")
          endif()
        endforeach()
        string(APPEND out "#include <blobrt/caffe/portable/gpu_methods.hpp>\n\nnamespace caffe {\n")
        foreach(instantiation IN LISTS instantiations)
          string(REGEX REPLACE "${instantiation_regex}" "\\1;\\2" parts "${instantiation}")
          list(GET parts 0 what)
          list(GET parts 1 class)
          list(APPEND kernel_layers "${path}|${class}|${what}")
          if(what STREQUAL "FUNCS")
            string(APPEND out "BLOBRT_CAFFE_GPU_METHODS(${class});\n")
          else()
            string(APPEND out "BLOBRT_CAFFE_GPU_${what}(${class});\n")
          endif()
        endforeach()
        # Other GPU members the .cu instantiates (LRN's CrossChannelForward_gpu): only
        # Caffe's .cu GPU methods call them, but the class declares them; they run the
        # CPU code, as Caffe's CPU_ONLY stubs for them would.
        string(REGEX MATCHALL "template void [A-Za-z0-9_]+<float>::[A-Za-z0-9_]+_gpu\\([^;]*" helpers "${text}")
        foreach(helper IN LISTS helpers)
          string(REGEX MATCH "template void ([A-Za-z0-9_]+)<float>::([A-Za-z0-9_]+)_gpu" _ "${helper}")
          set(class "${CMAKE_MATCH_1}")
          set(function "${CMAKE_MATCH_2}")
          if(NOT function MATCHES "^(Forward|Backward)$")
            if(helper MATCHES "bool")
              string(APPEND out "BLOBRT_CAFFE_GPU_HELPER_BACKWARD(${class}, ${function});\n")
            else()
              string(APPEND out "BLOBRT_CAFFE_GPU_HELPER_FORWARD(${class}, ${function});\n")
            endif()
          endif()
        endforeach()
        string(APPEND out "}  // namespace caffe\n")
        # blobrt's own GPU methods for the layer, in its device operations, where blobrt-caffe
        # has them (blobrt/caffe/portable/layers/): used on devices no backend registered the
        # layer for.
        string(REGEX REPLACE "\\.cu$" ".hpp" glue "blobrt/caffe/portable/${rel}")
        string(APPEND out "#if __has_include(<${glue}>)\n#include <${glue}>\n#endif\n")
        math(EXPR dispatched "${dispatched} + 1")
      else()
        string(REGEX REPLACE "\\.cu$" ".hpp" header "blobrt/caffe/portable/cu/${rel}")
        string(APPEND out "#if __has_include(<${header}>)\n#include <${header}>\n#else\n"
                          "#pragma message(\"blobrt-caffe has no portable form of src/caffe/${rel}: "
                          "its functions are not defined here\")\n#endif\n")
        math(EXPR replaced "${replaced} + 1")
        list(APPEND others "${rel}")
      endif()
    endif()
    string(REPLACE "/" "_" flat "${rel}")
    set(source "${output_dir}/${flat}.cpp")
    blobrt_caffe_write_if_changed("${source}" "${out}")
    list(APPEND sources "${source}")
  endforeach()
  blobrt_caffe_build_id("${root}" build_id)
  set(source "${output_dir}/layer_plugins_folder.cpp")
  string(CONCAT text
    "// Generated by blobrt's caffe-portable-gpu.cmake: where this libcaffe finds Caffe-layers plugins.\n"
    "#include <blobrt/caffe/portable/layer_plugin.hpp>\n"
    "BLOBRT_CAFFE_LAYER_PLUGINS_BESIDE_THIS_LIBRARY(\"blobrt-caffe-layers\", \"${build_id}\")\n")
  blobrt_caffe_write_if_changed("${source}" "${text}")
  list(APPEND sources "${source}")
  set(${others_var} "${others}" PARENT_SCOPE)
  if(ARGC GREATER 4)
    set(${ARGV4} "${kernel_layers}" PARENT_SCOPE)
  endif()
  message(STATUS "blobrt: the GPU half of ${root}: ${native} .cu files without kernels compiled as C++, "
                 "${dispatched} layers' kernels dispatched to the device's backend or the CPU code, "
                 "${replaced} others by blobrt-caffe's portable form of each, where it has one (${others})")
  set(${out_var} "${sources}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT CAFFE_ROOT OR NOT OUTPUT_DIR)
    message(FATAL_ERROR "usage: cmake -DCAFFE_ROOT=<Caffe tree> -DOUTPUT_DIR=<folder> "
                        "[-DCAFFE_COMMON_FLAGS=<the Makefile's COMMON_FLAGS>] -P ${CMAKE_CURRENT_LIST_FILE}")
  endif()
  get_filename_component(root "${CAFFE_ROOT}" ABSOLUTE)
  get_filename_component(output "${OUTPUT_DIR}" ABSOLUTE)
  if(NOT EXISTS "${root}/src/caffe")
    message(FATAL_ERROR "caffe-portable-gpu.cmake: ${root} has no src/caffe: not a Caffe tree")
  endif()
  # The build id (libcaffe's, which a Caffe-layers plugin must carry too) also covers
  # blobrt's version, from the package file installed beside this one, and the -D flags of
  # CAFFE_COMMON_FLAGS, where given.
  include("${CMAKE_CURRENT_LIST_DIR}/blobrtConfigVersion.cmake" OPTIONAL)
  blobrt_caffe_makefile_flags("${root}" "${CAFFE_COMMON_FLAGS}" definitions includes)
  blobrt_caffe_makefile_build_id_extra("${PACKAGE_VERSION}" "${definitions}" BLOBRT_CAFFE_BUILD_ID_EXTRA)
  blobrt_caffe_portable_gpu_sources("${root}" "${output}" generated others)
endif()
