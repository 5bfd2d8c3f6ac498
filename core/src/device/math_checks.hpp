// The argument checks of gemm, gemv and elementwise that every device makes before it runs
// one (the built-in host device, and PluginDevice before it calls a plugin), so a bad call
// is the same blobrt::Error everywhere and never reaches a kernel: negative sizes or
// offsets, an unknown precision, transpose or operation code, a missing operand, and
// double precision on a device without fp64 (UnsupportedError, as the level-1 calls give).
#ifndef BLOBRT_MATH_CHECKS_HPP
#define BLOBRT_MATH_CHECKS_HPP

#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>

#include "blobrt/device.hpp"
#include "blobrt/error.hpp"
#include "blobrt_kernels/elementwise.hpp"

namespace blobrt::math_checks {

// "sgemm", "dgemv", "element-wise sqr (double)": the name errors and logs use. Streamed
// into a message only when there is one: the checks below run on every call, and n = 1
// calls must not pay for building a string.
struct Routine {
  const char* operation;  // "gemm", "gemv", or nullptr for the element-wise family
  Precision precision;
  ElementwiseOp op;
};
inline std::ostream& operator<<(std::ostream& s, const Routine& r) {
  if (r.operation) return s << (r.precision == Precision::kFloat64 ? "d" : "s") << r.operation;
  return s << "element-wise " << to_string(r.op) << (r.precision == Precision::kFloat64 ? " (double)" : " (float)");
}
inline std::string routine(Precision precision, const char* operation) {
  std::ostringstream s;
  s << Routine{operation, precision, ElementwiseOp::kSet};
  return s.str();
}
inline std::string routine(Precision precision, ElementwiseOp op) {
  std::ostringstream s;
  s << Routine{nullptr, precision, op};
  return s.str();
}

inline void check_precision(const DeviceDescription& d, Precision precision, const Routine& what) {
  const int code = static_cast<int>(precision);
  if (code != static_cast<int>(Precision::kFloat32) && code != static_cast<int>(Precision::kFloat64)) {
    detail::fail(d.id(), ": ", what, " with unknown precision code ", code);
  }
  if (precision == Precision::kFloat64 && !d.supports_fp64) {
    detail::fail_as<UnsupportedError>(d.id(), " (", d.name, "): ", what,
                                      " refused: the device has no double precision (fp64)");
  }
}

inline void check_transpose(const DeviceDescription& d, Transpose t, const char* name, const Routine& what) {
  const int code = static_cast<int>(t);
  if (code != static_cast<int>(Transpose::kNo) && code != static_cast<int>(Transpose::kYes)) {
    detail::fail(d.id(), ": ", what, " with unknown ", name, " code ", code);
  }
}

inline void check_offsets(const DeviceDescription& d, const Routine& what, std::int64_t a_off, std::int64_t b_off,
                          std::int64_t y_off) {
  if (a_off < 0 || b_off < 0 || y_off < 0) {
    detail::fail(d.id(), ": ", what, " with a negative offset (", a_off, ", ", b_off, ", ", y_off, ")");
  }
}

inline void check_operand(const DeviceDescription& d, const Routine& what, const char* name,
                          ConstDeviceBuffer buffer) {
  if (!buffer) detail::fail(d.id(), ": ", what, " with no buffer for operand ", name);
}

// True when there is anything to compute (m, n > 0); throws for bad arguments.
inline bool check_gemm(const DeviceDescription& d, Precision precision, Transpose trans_a, Transpose trans_b,
                       std::int64_t m, std::int64_t n, std::int64_t k, ConstDeviceBuffer a, std::int64_t a_off,
                       ConstDeviceBuffer b, std::int64_t b_off, ConstDeviceBuffer c, std::int64_t c_off) {
  const Routine what{"gemm", precision, ElementwiseOp::kSet};
  check_precision(d, precision, what);
  check_transpose(d, trans_a, "trans_a", what);
  check_transpose(d, trans_b, "trans_b", what);
  if (m < 0 || n < 0 || k < 0) detail::fail(d.id(), ": ", what, " with negative sizes m=", m, " n=", n, " k=", k);
  check_offsets(d, what, a_off, b_off, c_off);
  if (m == 0 || n == 0) return false;
  check_operand(d, what, "C", c);
  if (k > 0) {
    check_operand(d, what, "A", a);
    check_operand(d, what, "B", b);
  }
  return true;
}

// True when y has elements (m, or n with transposition); throws for bad arguments.
inline bool check_gemv(const DeviceDescription& d, Precision precision, Transpose trans_a, std::int64_t m,
                       std::int64_t n, ConstDeviceBuffer a, std::int64_t a_off, ConstDeviceBuffer x,
                       std::int64_t x_off, ConstDeviceBuffer y, std::int64_t y_off) {
  const Routine what{"gemv", precision, ElementwiseOp::kSet};
  check_precision(d, precision, what);
  check_transpose(d, trans_a, "trans_a", what);
  if (m < 0 || n < 0) detail::fail(d.id(), ": ", what, " with negative sizes m=", m, " n=", n);
  check_offsets(d, what, a_off, x_off, y_off);
  if ((trans_a == Transpose::kYes ? n : m) == 0) return false;
  check_operand(d, what, "y", y);
  if (m > 0 && n > 0) {
    check_operand(d, what, "A", a);
    check_operand(d, what, "x", x);
  }
  return true;
}

// True when n > 0; throws for bad arguments (operands the operation does not read may be null).
inline bool check_elementwise(const DeviceDescription& d, Precision precision, ElementwiseOp op, std::int64_t n,
                              ConstDeviceBuffer a, std::int64_t a_off, ConstDeviceBuffer b, std::int64_t b_off,
                              ConstDeviceBuffer y, std::int64_t y_off) {
  const int code = static_cast<int>(op);
  if (!blobrt_kernels::is_elementwise_op(code)) {
    detail::fail(d.id(), ": unknown element-wise operation code ", code, " (codes are 0 to ", BLOBRT_EW_OP_COUNT - 1,
                 ")");
  }
  const Routine what{nullptr, precision, op};
  check_precision(d, precision, what);
  if (n < 0) detail::fail(d.id(), ": ", what, " with n=", n);
  check_offsets(d, what, a_off, b_off, y_off);
  if (n == 0) return false;
  check_operand(d, what, "y", y);
  if (blobrt_kernels::reads_a(code)) check_operand(d, what, "a", a);
  if (blobrt_kernels::reads_b(code)) check_operand(d, what, "b", b);
  return true;
}

}  // namespace blobrt::math_checks

#endif
