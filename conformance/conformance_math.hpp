// The conformance checks of Caffe's math beyond level 1 (gemm, gemv, the element-wise
// family), used by conformance_checks.cpp: cases, their names, and one run.
#ifndef BLOBRT_CONFORMANCE_MATH_HPP
#define BLOBRT_CONFORMANCE_MATH_HPP

#include <string>

#include "conformance_checks.hpp"

namespace blobrt::conformance {

std::string math_case_name(const Case& c);
// Runs a gemm, gemv or element-wise case; may throw (run_case catches).
Result run_math_case(Device& device, const Case& c);

}  // namespace blobrt::conformance

#endif
