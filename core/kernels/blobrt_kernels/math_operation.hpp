// Caffe's math operations (blobrt/math_operations.h) as C++ values: one argument struct per
// operation, expanded from the list, and what every layer does with one without knowing
// which operation it is (visit its parameters, run it on host memory).
//
// What is particular to an operation is its MathSemantics<Op>, written next to its host
// kernel (gemm.hpp has gemm's and gemv's, elementwise.hpp the element-wise family's):
//   static std::array<Operand, N> operands(const MathArgs<Op>&);
//       its buffers in parameter order: how many elements of each it touches from the
//       offset (0: the buffer is not used and may be NULL), which it reads, which it writes
//       (exactly one: the OUTPUT parameter);
//   static bool only_scales(const MathArgs<Op>&, double* beta);
//       true (and beta set) when the call reduces to output = beta * output (gemm, gemv
//       with k = 0 or alpha = 0): the core does that itself and plugins never see it;
//   template <class T> static bool run(const MathArgs<Op>&, T* const* operands);
//       the host kernel on pointers to each operand's first element; false for a code it
//       does not know;
//   static void routine(std::ostream&, const MathArgs<Op>&);
//       the name errors use: "sgemm", "element-wise sqr (float)";
// and, where the kinds' own checks (no negative size ...) do not say what a valid call is:
//   static const char* invalid(const MathArgs<Op>&);
//       nullptr for a call it computes, else why not ("the stride must be at least 1"):
//       the core refuses such a call before operands() is asked (im2col.hpp).
// Header-only: libblobrt, the plugin kit's host-memory device and plugins use it alike.
#ifndef BLOBRT_KERNELS_MATH_OPERATION_HPP
#define BLOBRT_KERNELS_MATH_OPERATION_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "blobrt/plugin_abi.h"
#include "blobrt/plugin_error.h"

namespace blobrt_kernels {

enum class MathOp {
#define BLOBRT_MATH_ENUMERATOR_(X, since, name, parameters) name,
  BLOBRT_MATH_OPERATIONS(BLOBRT_MATH_ENUMERATOR_, ~)
#undef BLOBRT_MATH_ENUMERATOR_
};
#define BLOBRT_MATH_COUNT_(X, since, name, parameters) +1
constexpr int kMathOpCount = 0 BLOBRT_MATH_OPERATIONS(BLOBRT_MATH_COUNT_, ~);
#undef BLOBRT_MATH_COUNT_

// What a parameter is: blobrt/math_operations.h's kinds, each with a k in front (kINPUT),
// so that a program's own macro named INPUT or SIZE cannot touch them.
enum class ParameterKind { kPRECISION, kTRANSPOSE, kEW_OP, kSIZE, kOFFSET, kSCALAR, kINPUT, kOUTPUT };

// MathArgs<Op>: the operation's parameters as fields of their C types, named and ordered as
// in the list; for_each(f) calls f(ParameterKind, "name", value) for each, in order.
template <MathOp>
struct MathArgs;
#define BLOBRT_MATH_FIELD_(kind, name) BLOBRT_MATH_C_TYPE_##kind name;
#define BLOBRT_MATH_VISIT_(kind, name) f(ParameterKind::k##kind, #name, name);
#define BLOBRT_MATH_ARGS_(X, since, op, parameters)       \
  template <>                                           \
  struct MathArgs<MathOp::op> {                         \
    static constexpr MathOp kOp = MathOp::op;           \
    static constexpr const char* kName = #op;           \
    parameters(BLOBRT_MATH_FIELD_)                      \
    template <class F>                                  \
    void for_each(F&& f) const {                        \
      parameters(BLOBRT_MATH_VISIT_)                    \
    }                                                   \
  };
BLOBRT_MATH_OPERATIONS(BLOBRT_MATH_ARGS_, ~)
#undef BLOBRT_MATH_ARGS_
#undef BLOBRT_MATH_VISIT_
#undef BLOBRT_MATH_FIELD_

// One buffer of a call (see MathSemantics above).
struct Operand {
  const char* name;  // as errors name it: "A", "x", "y"
  const void* buffer;
  std::int64_t offset;
  std::int64_t count;  // elements touched from offset; 0: not used
  bool read;
  bool written;
};

template <MathOp>
struct MathSemantics;

// MathSemantics<Op>::invalid(args) where the operation has one, else nullptr.
template <MathOp Op, class = void>
struct HasInvalid : std::false_type {};
template <MathOp Op>
struct HasInvalid<Op, std::void_t<decltype(MathSemantics<Op>::invalid(std::declval<const MathArgs<Op>&>()))>>
    : std::true_type {};
template <MathOp Op>
const char* invalid_arguments(const MathArgs<Op>& args) {
  if constexpr (HasInvalid<Op>::value) {
    return MathSemantics<Op>::invalid(args);
  } else {
    (void)args;
    return nullptr;
  }
}

// The operand a call writes.
template <std::size_t N>
const Operand& output_of(const std::array<Operand, N>& operands) {
  for (const Operand& o : operands) {
    if (o.written) return o;
  }
  return operands[N - 1];  // unreachable: every operation has an OUTPUT
}

// Runs a checked call on host memory, in place: every buffer is a host pointer (the
// host device, the kit's host-memory devices). BLOBRT_ERR_UNSUPPORTED for an operation
// code the kernels do not know.
template <MathOp Op>
#if defined(__GNUC__)
__attribute__((always_inline))  // a call on a few elements costs about as much as the call itself
#endif
inline int run_in_place(const MathArgs<Op>& args, blobrt_error* err) {
  using Semantics = MathSemantics<Op>;
  const auto operands = Semantics::operands(args);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    std::array<T*, std::tuple_size<decltype(operands)>::value> pointers{};
    for (std::size_t i = 0; i < operands.size(); ++i) {
      T* base = static_cast<T*>(const_cast<void*>(operands[i].buffer));
      pointers[i] = base && operands[i].count > 0 ? base + operands[i].offset : nullptr;
    }
    return Semantics::template run<T>(args, pointers.data());
  };
  const bool known = args.precision == BLOBRT_FLOAT64 ? run(0.0) : run(0.0f);
  if (known) return BLOBRT_OK;
  if (err) {
    return blobrt_fail(err, BLOBRT_ERR_UNSUPPORTED, "%s: an operation code these kernels do not know", MathArgs<Op>::kName);
  }
  return BLOBRT_ERR_UNSUPPORTED;
}

}  // namespace blobrt_kernels

#endif
