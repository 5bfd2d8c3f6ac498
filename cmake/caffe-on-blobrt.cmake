# Caffe's own CMake build on blobrt, with no Caffe file edited (docs/caffe-on-blobrt.md):
#
#   cmake -S caffe -B build -DCMAKE_PROJECT_Caffe_INCLUDE=<prefix>/lib/.../cmake/blobrt/caffe-on-blobrt.cmake \
#         -DCPU_ONLY=ON ...
#
# CMake includes this file right after Caffe's project(Caffe ...). It finds blobrt's
# `caffe` component here, and at the end of Caffe's top-level CMakeLists (when every
# target exists) it adopts Caffe's `caffe` library: the four files blobrt replaces leave
# its sources (src/caffe/{blob,common,syncedmem}.cpp, util/math_functions.cpp and, in a
# CUDA build, the object nvcc would make of util/math_functions.cu), blobrt-caffe's include
# directory goes ahead of Caffe's include/ (for the library and everything linking it:
# the tools, pycaffe, the tests), and the library links blobrt::caffe. Caffe's own
# sources glob every src/caffe/*.cpp, so its build cannot be told this from its command
# line; its Makefile can, and needs no such file. Where blobrt has libblobrt-dist the
# library also links it and, in a Caffe with its solvers, compiles pycaffe's
# data-parallel entry (blobrt_add_data_parallel_entry below).
include_guard(GLOBAL)
# 3.19 for cmake_language(DEFER), 3.23 for an imported target whose include directory is
# not a system one (blobrtConfig.cmake: -isystem would put it after Caffe's include/).
if(CMAKE_VERSION VERSION_LESS 3.23)
  message(FATAL_ERROR "caffe-on-blobrt.cmake needs CMake 3.23 or later; this is ${CMAKE_VERSION}")
endif()
# Caffe declares cmake_minimum_required(2.8.7); the policies below are this file's own
# (pushed here, popped at the end; the function keeps the ones it was defined under).
cmake_policy(PUSH)
cmake_policy(VERSION 3.23)

find_package(blobrt 1.0 CONFIG REQUIRED COMPONENTS caffe OPTIONAL_COMPONENTS dist
             HINTS "${CMAKE_CURRENT_LIST_DIR}" NO_DEFAULT_PATH)
include("${CMAKE_CURRENT_LIST_DIR}/caffe-portable-gpu.cmake")
include("${CMAKE_CURRENT_LIST_DIR}/caffe-layer-plugin.cmake")

# The one build for every node (docs/caffe-on-blobrt.md): where Caffe's own files build no
# CUDA (-DCPU_ONLY=ON, or no CUDA found), its GPU code is compiled all the same, over
# blobrt: libcaffe links no CUDA or OpenCL library, and GPU mode runs on whichever device
# the node's backend has. OFF gives Caffe's CPU_ONLY build (GPU methods are the CPU code).
option(BLOBRT_CAFFE_PORTABLE "Compile Caffe's GPU code over blobrt where Caffe builds no CUDA" ON)

# Caffe's own CUDA kernels as a plugin for GPU nodes (caffe-layer-plugin.cmake), in a
# portable build: AUTO builds it where a CUDA compiler is found (CUDACXX, PATH, or
# /usr/local/cuda/bin), ON requires one, OFF builds none. Looked for here, at file scope
# (enable_language cannot be called from the function below), where the command line
# asked for Caffe's CPU_ONLY build: without it Caffe's own files find CUDA and build it.
set(BLOBRT_CAFFE_CUDA_LAYERS AUTO CACHE STRING "Build Caffe's CUDA kernels as a Caffe-layers plugin: AUTO, ON or OFF")
set_property(CACHE BLOBRT_CAFFE_CUDA_LAYERS PROPERTY STRINGS AUTO ON OFF)
if(BLOBRT_CAFFE_PORTABLE AND CPU_ONLY AND NOT BLOBRT_CAFFE_CUDA_LAYERS STREQUAL "OFF")
  # (check_language: an nvcc that cannot use this host compiler is then no plugin, not a
  # failed configure.)
  blobrt_caffe_default_cuda_compiler()
  # nvcc's host compiler: Caffe's own C++ compiler.
  if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER AND NOT DEFINED ENV{CUDAHOSTCXX} AND CMAKE_CXX_COMPILER)
    set(ENV{CUDAHOSTCXX} "${CMAKE_CXX_COMPILER}")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
  elseif(BLOBRT_CAFFE_CUDA_LAYERS STREQUAL "ON")
    message(FATAL_ERROR "BLOBRT_CAFFE_CUDA_LAYERS=ON: no working CUDA compiler (set CUDACXX or CMAKE_CUDA_COMPILER)")
  else()
    message(STATUS "blobrt: no Caffe-layers CUDA plugin: no CUDA compiler found (BLOBRT_CAFFE_CUDA_LAYERS=AUTO)")
  endif()
elseif(BLOBRT_CAFFE_CUDA_LAYERS STREQUAL "ON")
  message(FATAL_ERROR "BLOBRT_CAFFE_CUDA_LAYERS=ON needs the portable build: -DCPU_ONLY=ON on the command line "
                      "(and BLOBRT_CAFFE_PORTABLE ON)")
endif()

# target_link_libraries(caffe <scope> ITEMS...) whichever signature Caffe's own files used:
# CMake refuses to mix the keyword form (BVLC Caffe's) with the plain one (SSD's Caffe:
# "The plain signature for target_link_libraries has already been used with the target
# caffe"), so the items go into the properties either form fills: LINK_LIBRARIES, and for
# PUBLIC the link interface as well (INTERFACE_LINK_LIBRARIES; a plain-signature target under
# Caffe's old policies passes all its LINK_LIBRARIES on anyway).
function(blobrt_link_caffe scope)
  foreach(item IN LISTS ARGN)
    set_property(TARGET caffe APPEND PROPERTY LINK_LIBRARIES "${item}")
    if(scope STREQUAL "PUBLIC")
      set_property(TARGET caffe APPEND PROPERTY INTERFACE_LINK_LIBRARIES "${item}")
      # Under Caffe's old policies (CMP0022 OLD: BVLC's cmake_minimum_required(2.8.7)) the
      # keyword form also fills LINK_INTERFACE_LIBRARIES, and that is what the targets
      # linking caffe (the tools) read: without this they link no libblobrt.
      get_target_property(old_interface caffe LINK_INTERFACE_LIBRARIES)
      if(old_interface)
        set_property(TARGET caffe APPEND PROPERTY LINK_INTERFACE_LIBRARIES "${item}")
      endif()
    endif()
  endforeach()
endfunction()

# Every target below `directory` whose include directories have the tree's include/ gets
# `first` ahead of them.
function(blobrt_caffe_headers_first directory first)
  get_property(targets DIRECTORY "${directory}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|STATIC_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      get_target_property(includes ${target} INCLUDE_DIRECTORIES)
      if(includes AND "${CMAKE_SOURCE_DIR}/include" IN_LIST includes)
        target_include_directories(${target} BEFORE PRIVATE ${first})
      endif()
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY "${directory}" PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    blobrt_caffe_headers_first("${subdirectory}" "${first}")
  endforeach()
endfunction()

function(blobrt_adopt_caffe_library)
  if(NOT TARGET caffe)
    message(FATAL_ERROR "caffe-on-blobrt.cmake: this project defines no target 'caffe' (is it a Caffe tree?)")
  endif()
  get_target_property(sources caffe SOURCES)
  set(replaced "/src/caffe/(blob|common|syncedmem)\\.cpp$|/src/caffe/util/math_functions\\.(cpp|cu)$|_generated_math_functions\\.cu\\.o(bj)?$")
  set(left_out "${sources}")
  list(FILTER left_out INCLUDE REGEX "${replaced}")
  list(FILTER sources EXCLUDE REGEX "${replaced}")
  list(LENGTH left_out count)
  if(count EQUAL 0)
    message(FATAL_ERROR "caffe-on-blobrt.cmake: target 'caffe' has none of the files blobrt replaces (src/caffe/blob.cpp ...): not Caffe's layout")
  endif()
  set_property(TARGET caffe PROPERTY SOURCES "${sources}")
  message(STATUS "blobrt: ${count} of Caffe's files replaced by blobrt (${left_out})")

  # Ahead of Caffe's include/ for the library and, through its interface, for everything
  # that links it.
  # The portable build: the GPU half of the tree as C++ (caffe-portable-gpu.cmake), and
  # BLOBRT_CAFFE_PORTABLE for the library and what links it (the tools, pycaffe, the
  # tests), which undoes CPU_ONLY in blobrt-caffe's device_alternate.hpp. A CUDA build
  # (Caffe found CUDA and compiles its .cu files with nvcc) stays one.
  # A tree with CUDA code of its own outside its layers that blobrt-caffe has no portable
  # form of (it has BVLC's im2col.cu and solvers' and SSD's bbox_util.cu) stays Caffe's
  # CPU_ONLY build: its .cpp files would call those functions.
  get_target_property(blobrt_caffe_include blobrt::caffe INTERFACE_INCLUDE_DIRECTORIES)
  if(BLOBRT_CAFFE_PORTABLE AND NOT HAVE_CUDA)
    # The build's id (libcaffe's and its Caffe-layers plugin's) also covers blobrt's version
    # and the library's compile definitions (USE_CUDNN, ... change classes too).
    get_target_property(definitions caffe COMPILE_DEFINITIONS)
    get_target_property(interface_definitions caffe INTERFACE_COMPILE_DEFINITIONS)
    get_directory_property(directory_definitions DIRECTORY "${CMAKE_SOURCE_DIR}" COMPILE_DEFINITIONS)
    set(BLOBRT_CAFFE_BUILD_ID_EXTRA
        "blobrt ${blobrt_VERSION}; ${definitions}; ${interface_definitions}; ${directory_definitions}")
    blobrt_caffe_portable_gpu_sources("${CMAKE_SOURCE_DIR}" "${CMAKE_BINARY_DIR}/blobrt-portable-gpu" gpu_sources
                                      others kernel_layers)
    set(no_form)
    foreach(other IN LISTS others)
      string(REGEX REPLACE "\\.cu$" ".hpp" form "${other}")
      if(NOT EXISTS "${blobrt_caffe_include}/blobrt/caffe/portable/cu/${form}")
        list(APPEND no_form "src/caffe/${other}")
      endif()
    endforeach()
    if(no_form AND BLOBRT_CAFFE_CUDA_LAYERS STREQUAL "ON")
      message(FATAL_ERROR "BLOBRT_CAFFE_CUDA_LAYERS=ON, but this tree is not a portable build: blobrt-caffe has no "
                          "portable form of ${no_form}")
    elseif(no_form)
      message(STATUS "blobrt: not the portable build: blobrt-caffe has no portable form of ${no_form} "
                     "(CUDA functions of this tree's own outside its layers); Caffe's CPU_ONLY build instead")
    else()
      target_sources(caffe PRIVATE ${gpu_sources})
      target_compile_definitions(caffe PUBLIC BLOBRT_CAFFE_PORTABLE)
      message(STATUS "blobrt: portable build: Caffe's GPU mode runs on the active backend's device, "
                     "with no CUDA library linked (-DBLOBRT_CAFFE_PORTABLE=OFF: CPU_ONLY as Caffe's)")
      get_target_property(caffe_type caffe TYPE)
      if(CMAKE_CUDA_COMPILER_LOADED AND kernel_layers AND caffe_type STREQUAL "SHARED_LIBRARY")
        blobrt_caffe_build_id("${CMAKE_SOURCE_DIR}" build_id)
        blobrt_caffe_add_cuda_layer_plugin("${CMAKE_SOURCE_DIR}" "${kernel_layers}" "${build_id}"
                                           "${CMAKE_BINARY_DIR}/blobrt-cuda-layers")
      elseif(CMAKE_CUDA_COMPILER_LOADED AND kernel_layers)
        # A static libcaffe is linked into each program: a plugin beside it would hold a
        # second copy of Caffe.
        message(STATUS "blobrt: no Caffe-layers CUDA plugin: Caffe's library is a ${caffe_type} "
                       "(the plugin needs a shared libcaffe: -DBUILD_SHARED_LIBS=ON)")
      endif()
    endif()
  endif()

  target_include_directories(caffe BEFORE PUBLIC ${blobrt_caffe_include})
  # A tree that puts its include/ on every target with the directory command (SSD's
  # include_directories(${Caffe_INCLUDE_DIR})) has it ahead of what caffe passes on: those
  # targets get blobrt-caffe's directory ahead of it too.
  blobrt_caffe_headers_first("${CMAKE_SOURCE_DIR}" "${blobrt_caffe_include}")
  # blobrt's own headers, which blobrt-caffe's include, for the same targets: a Caffe tree
  # under its old policies (BVLC's cmake_minimum_required(2.8.7)) does not pass on the
  # include directories of what its library links, and blobrt's prefix need not be one
  # the compiler searches by itself.
  get_target_property(blobrt_include blobrt::blobrt INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(caffe SYSTEM PUBLIC ${blobrt_include})
  blobrt_link_caffe(PUBLIC blobrt::caffe)
  # blobrt's headers are C++17. A tree that writes an older standard into CMAKE_CXX_FLAGS
  # (OpenPose's Caffe: -std=c++11) would win over blobrt::caffe's compile feature, which
  # adds no flag where the compiler's default is C++17 already: the library and whatever
  # links it get C++17 of the same dialect after those flags.
  if(CMAKE_CXX_FLAGS MATCHES "-std=(c|gnu)\\+\\+(98|03|0x|11|1y|14)( |$)")
    set(dialect "${CMAKE_MATCH_1}")
    target_compile_options(caffe PUBLIC "$<$<COMPILE_LANGUAGE:CXX>:-std=${dialect}++17>")
    message(STATUS "blobrt: Caffe's CMAKE_CXX_FLAGS ask for -std=${dialect}++${CMAKE_MATCH_2}; "
                   "its library and what links it are compiled as ${dialect}++17 (blobrt's headers need C++17)")
  endif()
  # Where blobrt has libblobrt-dist, Caffe's programs can train across MPI ranks with one
  # line (blobrt/caffe/data_parallel.hpp, docs/dist.md): the library links it for them.
  if(TARGET blobrt::dist)
    blobrt_link_caffe(PUBLIC blobrt::dist)
    message(STATUS "blobrt: Caffe's library links blobrt::dist (blobrt/caffe/data_parallel.hpp)")
    blobrt_add_data_parallel_entry()
  endif()
endfunction()

# pycaffe's form of the line (`blobrt.caffe.data_parallel()`, docs/dist.md): the C entry
# blobrt_caffe_data_parallel compiled into Caffe's library, which pycaffe's extension
# (_caffe.so) links, so Python reaches it through the loaded extension. A static libcaffe
# is linked whole into _caffe (Caffe's Caffe_LINK), so the entry is there too. The entry
# includes Caffe's solver headers and data_parallel.hpp uses the Net's after-backward hook
# (Caffe 1.0): a tree without them builds as before, without the entry.
function(blobrt_add_data_parallel_entry)
  set(tree "${CMAKE_SOURCE_DIR}")
  if(NOT blobrt_CAFFE_DATA_PARALLEL_ENTRY)
    message(STATUS "blobrt: no pycaffe data_parallel() entry: this blobrt install has no data_parallel_entry.cpp")
    return()
  endif()
  foreach(needed src/caffe/solvers/sgd_solver.cpp include/caffe/sgd_solvers.hpp include/caffe/solver_factory.hpp
                 include/caffe/net.hpp)
    if(NOT EXISTS "${tree}/${needed}")
      message(STATUS "blobrt: no pycaffe data_parallel() entry: this Caffe tree has no ${needed}")
      return()
    endif()
  endforeach()
  file(STRINGS "${tree}/include/caffe/net.hpp" after_backward REGEX "add_after_backward")
  if(NOT after_backward)
    message(STATUS "blobrt: no pycaffe data_parallel() entry: this Caffe's Net has no add_after_backward (older than Caffe 1.0)")
    return()
  endif()
  target_sources(caffe PRIVATE "${blobrt_CAFFE_DATA_PARALLEL_ENTRY}")
  blobrt_link_caffe(PRIVATE ${CMAKE_DL_LIBS})  # dladdr/dlopen (libc from glibc 2.34)
  message(STATUS "blobrt: Caffe's library exports blobrt_caffe_data_parallel (pycaffe: blobrt.caffe.data_parallel())")
endfunction()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL blobrt_adopt_caffe_library)
cmake_policy(POP)
