// The plugin kit: what every backend would otherwise write again. Header-only C++17 and
// installed with the devel headers, so a plugin, in tree or not, needs nothing from
// libblobrt (see docs/writing-a-plugin.md).
//
//  - table_of<Impl>(name, version) builds the table from a struct of static functions named
//    as the table's fields (plugin_abi.h's BLOBRT_PLUGIN_V1_ENTRIES): every field Impl
//    has is set, with its exact type checked by the compiler, and a missing REQUIRED one is
//    a compile error. BLOBRT_PLUGIN_DEFINE(Impl, name, version) defines the entry point
//    with it. blobrt/plugin_kit_host.hpp's HostMemoryDevice is such a struct for devices
//    whose memory is host memory: derive from it and write only what differs.
//    A plugin whose entry points are not all defined in the struct declares them there with
//    BLOBRT_KIT_ENTRY(allocate) (the type comes from the list) and defines them below it
//    (`int MyGpu::allocate(...) { ... }`). Level 1 written once for
//    both precisions, as templates axpy, dot, asum and scal (members or not), becomes the
//    eight fields with BLOBRT_KIT_LEVEL1_FROM_TEMPLATES in the struct.
//    The optional entries a plugin does not have stay NULL (for gemm, gemv and elementwise
//    the core then runs the call on the host through copies, as it does for a call one of
//    them answers BLOBRT_ERR_UNSUPPORTED). The core checks the math entries' arguments
//    first, so an entry never sees negative sizes or offsets, an unknown precision or
//    transpose, fp64 on a device without it, m = 0, n = 0, k = 0 or alpha = 0 (gemm/gemv),
//    n = 0 (elementwise) or an element-wise code this libblobrt does not know. A code the
//    plugin does not know (one a later minor adds, reaching an older plugin): answer
//    UNSUPPORTED.
//  - new_table() starts a table with struct_size, the ABI version this kit was built with,
//    the name and the version, all entries NULL: what table_of fills.
//  - fail_call() turns a library's failed call into a status and the message
//    "CALL returned NAME (DETAIL)"; a failed allocation becomes BLOBRT_ERR_OUT_OF_MEMORY,
//    which the core throws as blobrt::OutOfMemoryError.
//  - getenv() reads a variable as libblobrt does (blobrt/environment.hpp): "" when unset or
//    when the process is setuid/setgid. A plugin reads its settings only through it.
//  - check_index() answers a device index that is out of range, set_text() fills the
//    fixed-size text fields of blobrt_device_properties, by_precision() names a routine.
#ifndef BLOBRT_PLUGIN_KIT_HPP
#define BLOBRT_PLUGIN_KIT_HPP

#include <cstdarg>
#include <cstddef>
#include <cstdio>

#include <string>
#include <type_traits>

#include "blobrt/environment.hpp"
#include "blobrt/plugin_abi.h"
#include "blobrt/plugin_error.h"

namespace blobrt::plugin_kit {

// A setting from the environment: "" when unset, and always "" in a setuid/setgid process.
inline std::string getenv(const char* name) { return blobrt::environment::get(name).value_or(""); }

inline blobrt_plugin_v1 new_table(const char* name, const char* library_version) {
  blobrt_plugin_v1 table{};
  table.struct_size = sizeof table;
  table.abi_major = BLOBRT_PLUGIN_ABI_MAJOR;
  table.abi_minor = BLOBRT_PLUGIN_ABI_MINOR;
  table.name = name;
  table.library_version = library_version;
  return table;
}

// In a struct for table_of: declares the entry `name` with its exact type from plugin_abi.h's
// list, `BLOBRT_KIT_ENTRY(allocate);`, so a plugin writes an entry's prototype only where it
// defines it (`int MyGpu::allocate(void* context, ...) { ... }`, checked against this).
// BLOBRT_KIT_ENTRY_TYPE(name) is the entry's function type, for a plugin's own declarations
// of functions it then puts in the struct (`BLOBRT_KIT_ENTRY_TYPE(gemm) gemm;`).
#define BLOBRT_KIT_ENTRY_TYPE(name) std::remove_pointer_t<decltype(blobrt_plugin_v1::name)>
#define BLOBRT_KIT_ENTRY(name) static BLOBRT_KIT_ENTRY_TYPE(name) name

// In a struct for table_of: the level-1 fields of both precisions (saxpy ... dscal) from
// the templates axpy, dot, asum and scal that name lookup finds there.
#define BLOBRT_KIT_LEVEL1_FROM_TEMPLATES        \
  static constexpr auto saxpy = axpy<float>;    \
  static constexpr auto daxpy = axpy<double>;   \
  static constexpr auto sdot = dot<float>;      \
  static constexpr auto ddot = dot<double>;     \
  static constexpr auto sasum = asum<float>;    \
  static constexpr auto dasum = asum<double>;   \
  static constexpr auto sscal = scal<float>;    \
  static constexpr auto dscal = scal<double>;

inline int fail_call(blobrt_error* err, bool out_of_memory, const char* call, const char* status_name,
                     const char* detail) {
  return blobrt_fail(err, out_of_memory ? BLOBRT_ERR_OUT_OF_MEMORY : BLOBRT_ERR_FAILED, "%s returned %s (%s)", call,
                     status_name, detail);
}

// BLOBRT_OK when 0 <= index < count; else BLOBRT_ERR_INVALID_ARGUMENT naming both.
inline int check_index(blobrt_error* err, const char* backend, int32_t index, std::size_t count) {
  if (index >= 0 && static_cast<std::size_t>(index) < count) return BLOBRT_OK;
  return blobrt_fail(err, BLOBRT_ERR_INVALID_ARGUMENT, "no %s device %d (found %zu)", backend,
                     static_cast<int>(index), count);
}

// ABI 1.3's device-properties fields: what the device natively is (BLOBRT_NATIVE_*, DLPack's
// numbering, and its index there) and whether handle + byte offset is a handle. Set only
// where the caller's struct has them (a libblobrt older than 1.3 passes a shorter one).
inline void set_native(blobrt_device_properties* out, int32_t native_type, int32_t native_index,
                       bool addressable_handles) {
  if (BLOBRT_STRUCT_HAS(blobrt_device_properties, out, native_type)) out->native_type = native_type;
  if (BLOBRT_STRUCT_HAS(blobrt_device_properties, out, native_index)) out->native_index = native_index;
  if (BLOBRT_STRUCT_HAS(blobrt_device_properties, out, addressable_handles)) {
    out->addressable_handles = addressable_handles ? 1 : 0;
  }
}

template <std::size_t N>
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void set_text(char (&field)[N], const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(field, N, format, args);
  va_end(args);
}

namespace detail {
constexpr bool kRequired_REQUIRED = true;
constexpr bool kRequired_OPTIONAL = false;
// offers_<field><Impl>: whether Impl has a static member named as the field (a function, or
// a constexpr pointer to one).
#define BLOBRT_KIT_DETECT_(presence, since, return_type, name, parameters)        \
  template <class Impl, class = void>                                             \
  struct offers_##name : std::false_type {};                                      \
  template <class Impl>                                                           \
  struct offers_##name<Impl, std::void_t<decltype(Impl::name)>> : std::true_type {};
BLOBRT_PLUGIN_V1_ENTRIES(BLOBRT_KIT_DETECT_)
#undef BLOBRT_KIT_DETECT_
}  // namespace detail

// The table of Impl: each field from Impl's static function of the same name where it has
// one, NULL where not (an OPTIONAL entry); a REQUIRED entry Impl lacks does not compile.
template <class Impl>
blobrt_plugin_v1 table_of(const char* backend, const char* library_version) {
  blobrt_plugin_v1 table = new_table(backend, library_version);
#define BLOBRT_KIT_SET_(presence, since, return_type, name, parameters)                       \
  static_assert(!detail::kRequired_##presence || detail::offers_##name<Impl>::value,          \
                "the plugin lacks the required entry " #name);                                 \
  if constexpr (detail::offers_##name<Impl>::value) table.name = Impl::name;
  BLOBRT_PLUGIN_V1_ENTRIES(BLOBRT_KIT_SET_)
#undef BLOBRT_KIT_SET_
  return table;
}

template <typename T>
constexpr const char* by_precision(const char* single, const char* double_precision) {
  return sizeof(T) == sizeof(float) ? single : double_precision;
}

}  // namespace blobrt::plugin_kit

// Defines the plugin's one exported symbol: the table of Impl (table_of), built once, for
// backend `name` and the library version `version` (an expression giving a std::string or
// a const char*, evaluated once, on the first call).
#define BLOBRT_PLUGIN_DEFINE(Impl, name, version)                                                      \
  extern "C" BLOBRT_PLUGIN_EXPORT const blobrt_plugin_v1* blobrt_plugin_entry_v1(uint32_t host_abi_major) { \
    if (host_abi_major != BLOBRT_PLUGIN_ABI_MAJOR) return nullptr;                                     \
    static const std::string blobrt_library_version_(version);                                         \
    static const blobrt_plugin_v1 blobrt_table_ =                                                      \
        ::blobrt::plugin_kit::table_of<Impl>(name, blobrt_library_version_.c_str());                   \
    return &blobrt_table_;                                                                             \
  }

#endif
