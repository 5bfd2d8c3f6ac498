// The argument checks every device makes before it runs one of Caffe's math operations
// (the built-in host device, PluginDevice before it calls a plugin, the host path), written
// once for every operation of blobrt/math_operations.h's list: each parameter is checked by
// its kind (a precision, a transpose or an element-wise code it does not know, a negative
// size or offset, double precision on a device without fp64), each buffer by the extent
// the operation's semantics give it (blobrt_kernels/math_operation.hpp). So a bad call is
// the same blobrt::Error everywhere and never reaches a kernel.
#ifndef BLOBRT_MATH_CHECKS_HPP
#define BLOBRT_MATH_CHECKS_HPP

#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>

#include "blobrt/device.hpp"
#include "blobrt/error.hpp"
#include "blobrt_kernels/math_kernels.hpp"

namespace blobrt::math {

using blobrt_kernels::MathArgs;
using blobrt_kernels::MathOp;
using blobrt_kernels::MathSemantics;
using blobrt_kernels::ParameterKind;

// MathArgs<MathOp::op> from the Device interface's values of `parameters` (the names in
// scope): each converted to its C type.
#define BLOBRT_DEVICE_TO_C_(kind, name) , static_cast<BLOBRT_MATH_C_TYPE_##kind>(name)
#define BLOBRT_MATH_ARGS_FROM_DEVICE(op, parameters) \
  ::blobrt::math::MathArgs<::blobrt::math::MathOp::op> { BLOBRT_MATH_LIST(parameters, BLOBRT_DEVICE_TO_C_) }

// "sgemm", "element-wise sqr (float)": streamed into a message only when there is one (the
// checks run on every call; an n = 1 call must not pay for a string).
template <MathOp Op>
struct Routine {
  const MathArgs<Op>& args;
};
template <MathOp Op>
std::ostream& operator<<(std::ostream& s, const Routine<Op>& r) {
  MathSemantics<Op>::routine(s, r.args);
  return s;
}

template <MathOp Op>
std::string describe_routine(const MathArgs<Op>& args) {
  std::ostringstream s;
  s << Routine<Op>{args};
  return s.str();
}

// The parameters of one kind, " m=2 n=-3" (for the message about them).
template <MathOp Op>
std::string values_of(const MathArgs<Op>& args, ParameterKind wanted) {
  std::ostringstream s;
  args.for_each([&](ParameterKind kind, const char* name, auto value) {
    if (kind == wanted) s << ' ' << name << '=' << value;
  });
  return s.str();
}

// Out of line, cold: a level-1 call with a precision code that is neither float nor double;
// double precision on a device without fp64 (UnsupportedError), for level 1 and the math
// operations alike.
[[noreturn]] void fail_unknown_precision(const DeviceDescription& d, Precision precision, const char* routine);
[[noreturn]] void fail_no_fp64(const DeviceDescription& d, const char* routine);

// The routine, its sizes and its transpositions, "sgemm m=2 n=3 k=4 trans_a": what a
// failed call names.
template <MathOp Op>
std::string describe(const MathArgs<Op>& args) {
  std::ostringstream s;
  s << Routine<Op>{args} << values_of(args, ParameterKind::kSIZE);
  args.for_each([&](ParameterKind kind, const char* name, auto value) {
    if constexpr (std::is_integral_v<decltype(value)>) {
      if (kind == ParameterKind::kTRANSPOSE && value == BLOBRT_TRANS) s << ' ' << name;
    }
  });
  return s.str();
}


// An operation code it does not know: before anything else (the routine's own name needs it).
inline void check_codes(const DeviceDescription& d, ParameterKind kind, std::int64_t code) {
  if (kind == ParameterKind::kEW_OP && !blobrt_kernels::is_elementwise_op(static_cast<int>(code))) {
    detail::fail(d.id(), ": unknown element-wise operation code ", code, " (codes are 0 to ", BLOBRT_EW_OP_COUNT - 1,
                 ")");
  }
}

// The slow half of check(), out of line: finds the first bad argument, in this order,
// and throws: an operation code, the precision, a transpose code, negative sizes,
// negative offsets, what the operation's own invalid() refuses, a missing buffer (the
// output's first).
template <MathOp Op>
[[noreturn]] __attribute__((noinline, cold)) void fail_check(const DeviceDescription& d, const MathArgs<Op>& args) {
  const Routine<Op> what{args};
  args.for_each([&](ParameterKind kind, const char*, auto value) {
    if constexpr (std::is_integral_v<decltype(value)>) check_codes(d, kind, value);
  });
  bool negative_size = false, negative_offset = false;
  args.for_each([&](ParameterKind kind, const char* name, auto value) {
    if constexpr (std::is_integral_v<decltype(value)>) {
      const std::int64_t code = value;
      if (kind == ParameterKind::kPRECISION) {
        if (code != BLOBRT_FLOAT32 && code != BLOBRT_FLOAT64) {
          detail::fail(d.id(), ": ", what, " with unknown precision code ", code);
        }
        if (code == BLOBRT_FLOAT64 && !d.supports_fp64) {
          std::ostringstream routine;
          routine << what;
          fail_no_fp64(d, routine.str().c_str());  // worded once, as level 1's refusal
        }
      } else if (kind == ParameterKind::kTRANSPOSE && code != BLOBRT_NO_TRANS && code != BLOBRT_TRANS) {
        detail::fail(d.id(), ": ", what, " with unknown ", name, " code ", code);
      }
      negative_size |= kind == ParameterKind::kSIZE && code < 0;
      negative_offset |= kind == ParameterKind::kOFFSET && code < 0;
    }
  });
  if (negative_size) detail::fail(d.id(), ": ", what, " with negative sizes", values_of(args, ParameterKind::kSIZE));
  if (negative_offset) {
    detail::fail(d.id(), ": ", what, " with a negative offset", values_of(args, ParameterKind::kOFFSET));
  }
  if (const char* why = blobrt_kernels::invalid_arguments(args)) {
    detail::fail(d.id(), ": ", what, values_of(args, ParameterKind::kSIZE), ": ", why);
  }
  const auto operands = MathSemantics<Op>::operands(args);
  const blobrt_kernels::Operand& output = blobrt_kernels::output_of(operands);
  if (!output.buffer) detail::fail(d.id(), ": ", what, " with no buffer for operand ", output.name);
  for (const blobrt_kernels::Operand& o : operands) {
    if (o.count > 0 && !o.buffer) detail::fail(d.id(), ": ", what, " with no buffer for operand ", o.name);
  }
  detail::fail(d.id(), ": ", what, ": the argument checks disagree with themselves");  // unreachable
}

// True when the call has anything to compute (its output has elements); throws
// blobrt::Error (UnsupportedError for fp64 on a device without it) for bad arguments. The
// path of a good call is compares only; fail_check says what is wrong.
template <MathOp Op>
__attribute__((always_inline)) inline bool check(const DeviceDescription& d, const MathArgs<Op>& args) {
  bool bad = false;
  args.for_each([&](ParameterKind kind, const char*, auto value) {
    if constexpr (std::is_integral_v<decltype(value)>) {
      switch (kind) {
        case ParameterKind::kEW_OP: bad |= !blobrt_kernels::is_elementwise_op(static_cast<int>(value)); break;
        case ParameterKind::kPRECISION:
          bad |= (value != BLOBRT_FLOAT32 && value != BLOBRT_FLOAT64) || (value == BLOBRT_FLOAT64 && !d.supports_fp64);
          break;
        case ParameterKind::kTRANSPOSE: bad |= value != BLOBRT_NO_TRANS && value != BLOBRT_TRANS; break;
        case ParameterKind::kSIZE:
        case ParameterKind::kOFFSET: bad |= value < 0; break;
        default: break;
      }
    }
  });
  if (__builtin_expect(bad, 0)) fail_check(d, args);
  if (__builtin_expect(blobrt_kernels::invalid_arguments(args) != nullptr, 0)) fail_check(d, args);
  const auto operands = MathSemantics<Op>::operands(args);
  if (blobrt_kernels::output_of(operands).count == 0) return false;
  for (const blobrt_kernels::Operand& o : operands) {
    if (__builtin_expect(o.count > 0 && !o.buffer, 0)) fail_check(d, args);
  }
  return true;
}

// Throws unless the device has double precision: the core refuses fp64 for level 1 as
// check() does for the math operations, so no plugin entry sees a precision its device
// lacks (plugin_abi.h).
inline void require_fp64(const DeviceDescription& d, const char* routine) {
  if (__builtin_expect(!d.supports_fp64, 0)) fail_no_fp64(d, routine);
}

// Whether a level-1 call (axpy, dot, asum, scal) is in double precision; throws for a
// precision code that is neither, and for double on a device without it.
inline bool is_double(const DeviceDescription& d, Precision precision, const char* routine) {
  if (__builtin_expect(precision == Precision::kFloat32, 1)) return false;
  if (precision != Precision::kFloat64) fail_unknown_precision(d, precision, routine);
  require_fp64(d, routine);
  return true;
}

}  // namespace blobrt::math

#endif
