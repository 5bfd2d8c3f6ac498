/* Caffe's element-wise family (the plugin ABI's `elementwise` entry, ABI 1.2): the ONE list
 * of its operation codes, from which every layer's code for them is expanded.
 *
 * From each entry come: the C enum blobrt_elementwise_op and BLOBRT_EW_OP_COUNT
 * (plugin_abi.h), the C++ blobrt::ElementwiseOp (device.hpp), the names errors and logs use,
 * which operands a code reads (blobrt_kernels/elementwise.hpp: reads_a/_b/_y, one place)
 * and so the core's argument checks (core/src/device/math_checks.hpp), the host kernel's
 * dispatch, each backend's dispatch (a code a backend has no kernel for answers
 * BLOBRT_ERR_UNSUPPORTED and the core runs the host kernel), the conformance suite's
 * cases and reference values, and the benchmarks' rows. What is written by hand per code:
 * its host kernel (blobrt_kernels/elementwise.hpp, `ew_<name>`), each backend's fast
 * kernel where it has one, and the Caffe functions it serves
 * (blobrt/caffe/math_functions.hpp). docs/writing-a-plugin.md, "Adding a device
 * operation", is the recipe.
 *
 * An entry: X(CODE, Cxx, name, number, A, B, Y, ALPHA, BETA, HEAVY, FORM, CAFFE, FORMULA)
 *   CODE     the C name's tail: BLOBRT_EW_<CODE>
 *   Cxx      the C++ enumerator's tail: blobrt::ElementwiseOp::k<Cxx>
 *   name     how errors, logs, kernels and benchmarks spell it ("add_scalar")
 *   number   its code: part of the ABI, never changed or reused; a new code takes the next
 *            number (the codes are 0 .. BLOBRT_EW_OP_COUNT - 1, checked below) and a new
 *            ABI minor (plugin_abi.h, BLOBRT_PLUGIN_ABI_MINOR)
 *   A, B, Y  1 where the operation reads a, b, y (y is always written); an operand it does
 *            not read is NULL in a call
 *   ALPHA, BETA  1 where it uses the scalar
 *   HEAVY    1 where an element costs tens of cycles (a libm call: compute-bound, shared
 *            across cores from a smaller n)
 *   FORM     the argument order of the Caffe functions it serves, after N:
 *            Y_ALPHA (N, alpha, y), ALPHA_A_Y, ALPHA_A_BETA_Y, A_ALPHA_Y, A_ALPHA_BETA_Y, A_B_Y,
 *            A_B_ALPHA_Y, A_B_ALPHA_BETA_Y, A_Y
 *   CAFFE    the Caffe functions it serves, each as BLOBRT_EW_CAFFE(function) (a consumer
 *            that wants them defines BLOBRT_EW_CAFFE first); nothing where none
 *   FORMULA  y's new value, as a C expression of a, b, y, alpha, beta (<math.h> names):
 *            the conformance suite's reference, computed in double
 */
#ifndef BLOBRT_ELEMENTWISE_OPERATIONS_H
#define BLOBRT_ELEMENTWISE_OPERATIONS_H

/* clang-format off */
#define BLOBRT_ELEMENTWISE_OPS(X)                                                                    \
  X(SET,        Set,       set,         0, 0, 0, 0, 1, 0, 0, Y_ALPHA,                                 \
    BLOBRT_EW_CAFFE(caffe_set) BLOBRT_EW_CAFFE(caffe_gpu_set),                                      \
    (alpha))                                                                                         \
  X(ADD_SCALAR, AddScalar, add_scalar,  1, 0, 0, 1, 1, 0, 0, Y_ALPHA,                                 \
    BLOBRT_EW_CAFFE(caffe_add_scalar) BLOBRT_EW_CAFFE(caffe_gpu_add_scalar),                        \
    (y + alpha))                                                                                     \
  X(SCALE,      Scale,     scale,       2, 1, 0, 0, 1, 0, 0, ALPHA_A_Y,                               \
    BLOBRT_EW_CAFFE(caffe_cpu_scale) BLOBRT_EW_CAFFE(caffe_gpu_scale),                              \
    (alpha * a))                                                                                     \
  X(AXPBY,      Axpby,     axpby,       3, 1, 0, 1, 1, 1, 0, ALPHA_A_BETA_Y,                          \
    BLOBRT_EW_CAFFE(caffe_cpu_axpby) BLOBRT_EW_CAFFE(caffe_gpu_axpby),                              \
    (alpha * a + beta * y))                                                                          \
  X(ADD,        Add,       add,         4, 1, 1, 0, 0, 0, 0, A_B_Y,                                   \
    BLOBRT_EW_CAFFE(caffe_add) BLOBRT_EW_CAFFE(caffe_gpu_add),                                      \
    (a + b))                                                                                         \
  X(SUB,        Sub,       sub,         5, 1, 1, 0, 0, 0, 0, A_B_Y,                                   \
    BLOBRT_EW_CAFFE(caffe_sub) BLOBRT_EW_CAFFE(caffe_gpu_sub),                                      \
    (a - b))                                                                                         \
  X(MUL,        Mul,       mul,         6, 1, 1, 0, 0, 0, 0, A_B_Y,                                   \
    BLOBRT_EW_CAFFE(caffe_mul) BLOBRT_EW_CAFFE(caffe_gpu_mul),                                      \
    (a * b))                                                                                         \
  X(DIV,        Div,       div,         7, 1, 1, 0, 0, 0, 0, A_B_Y,                                   \
    BLOBRT_EW_CAFFE(caffe_div) BLOBRT_EW_CAFFE(caffe_gpu_div),                                      \
    (a / b))                                                                                         \
  X(POWX,       Powx,      powx,        8, 1, 0, 0, 1, 0, 1, A_ALPHA_Y,                               \
    BLOBRT_EW_CAFFE(caffe_powx) BLOBRT_EW_CAFFE(caffe_gpu_powx),                                    \
    (pow(a, alpha)))                                                                                 \
  X(SQR,        Sqr,       sqr,         9, 1, 0, 0, 0, 0, 0, A_Y,                                     \
    BLOBRT_EW_CAFFE(caffe_sqr),                                                                     \
    (a * a))                                                                                         \
  X(SQRT,       Sqrt,      sqrt,       10, 1, 0, 0, 0, 0, 0, A_Y,                                     \
    BLOBRT_EW_CAFFE(caffe_sqrt) BLOBRT_EW_CAFFE(caffe_gpu_sqrt),                                    \
    (sqrt(a)))                                                                                       \
  X(EXP,        Exp,       exp,        11, 1, 0, 0, 0, 0, 1, A_Y,                                     \
    BLOBRT_EW_CAFFE(caffe_exp) BLOBRT_EW_CAFFE(caffe_gpu_exp),                                      \
    (exp(a)))                                                                                        \
  X(LOG,        Log,       log,        12, 1, 0, 0, 0, 0, 1, A_Y,                                     \
    BLOBRT_EW_CAFFE(caffe_log) BLOBRT_EW_CAFFE(caffe_gpu_log),                                      \
    (log(a)))                                                                                        \
  X(ABS,        Abs,       abs,        13, 1, 0, 0, 0, 0, 0, A_Y,                                     \
    BLOBRT_EW_CAFFE(caffe_abs) BLOBRT_EW_CAFFE(caffe_gpu_abs)                                       \
    BLOBRT_EW_CAFFE(caffe_cpu_fabs) BLOBRT_EW_CAFFE(caffe_gpu_fabs),                                \
    (fabs(a)))                                                                                       \
  X(SIGN,       Sign,      sign,       14, 1, 0, 0, 0, 0, 0, A_Y,                                     \
    BLOBRT_EW_CAFFE(caffe_cpu_sign) BLOBRT_EW_CAFFE(caffe_gpu_sign),                                \
    ((0 < a) - (a < 0)))                                                                             \
  X(SGNBIT,     Sgnbit,    sgnbit,     15, 1, 0, 0, 0, 0, 0, A_Y,                                     \
    BLOBRT_EW_CAFFE(caffe_cpu_sgnbit) BLOBRT_EW_CAFFE(caffe_gpu_sgnbit),                            \
    (signbit(a) ? 1 : 0))                                                                            \
  /* ABI 1.5: the activations of Caffe's neuron layers, as their GPU code computes them      \
   * (the layers' glue: blobrt/caffe/portable/layers/); a backward code's a is the layer's \
   * bottom (ReLU) or top (Sigmoid, TanH) data, b the top's diff, y the bottom's diff. */      \
  X(RELU,       Relu,      relu,       16, 1, 0, 0, 1, 0, 0, A_ALPHA_Y,                               \
    ,                                                                                               \
    (a > 0 ? a : a * alpha))                                                                         \
  X(RELU_BACKWARD, ReluBackward, relu_backward, 17, 1, 1, 0, 1, 0, 0, A_B_ALPHA_Y,                  \
    ,                                                                                               \
    (b * ((a > 0) + (a <= 0) * alpha)))                                                              \
  X(SIGMOID,    Sigmoid,   sigmoid,    18, 1, 0, 0, 0, 0, 1, A_Y,                                     \
    ,                                                                                               \
    (0.5 * tanh(0.5 * a) + 0.5))                                                                     \
  X(SIGMOID_BACKWARD, SigmoidBackward, sigmoid_backward, 19, 1, 1, 0, 0, 0, 0, A_B_Y,               \
    ,                                                                                               \
    (b * a * (1 - a)))                                                                               \
  X(TANH,       Tanh,      tanh,       20, 1, 0, 0, 0, 0, 1, A_Y,                                     \
    ,                                                                                               \
    (tanh(a)))                                                                                       \
  X(TANH_BACKWARD, TanhBackward, tanh_backward, 21, 1, 1, 0, 0, 0, 0, A_B_Y,                        \
    ,                                                                                               \
    (b * (1 - a * a)))                                                                               \
  /* ABI 1.7: the other element-wise neuron layers' kernels (elu_layer.cu, bnll_layer.cu,   \
   * threshold_layer.cu, clip_layer.cu), as those kernels compute them; a backward code's a \
   * is the layer's bottom data, b the top's diff, but ELU's backward reads the top's data  \
   * (the .cu's top + alpha; the bottom's sign is the top's for alpha >= 0, so it also runs  \
   * in place). BNLL's backward clamps at Caffe's kBNLL_THRESHOLD, 50. Clip is fmin/fmax as  \
   * CUDA's min/max (a NaN bottom gives the maximum, Caffe's CPU code the minimum). */        \
  X(ELU,        Elu,       elu,        22, 1, 0, 0, 1, 0, 1, A_ALPHA_Y,                               \
    ,                                                                                               \
    (a > 0 ? a : alpha * (exp(a) - 1)))                                                              \
  X(ELU_BACKWARD, EluBackward, elu_backward, 23, 1, 1, 0, 1, 0, 0, A_B_ALPHA_Y,                     \
    ,                                                                                               \
    (a > 0 ? b : b * (a + alpha)))                                                                   \
  X(BNLL,       Bnll,      bnll,       24, 1, 0, 0, 0, 0, 1, A_Y,                                     \
    ,                                                                                               \
    (a > 0 ? a + log(1 + exp(-a)) : log(1 + exp(a))))                                                \
  X(BNLL_BACKWARD, BnllBackward, bnll_backward, 25, 1, 1, 0, 0, 0, 1, A_B_Y,                        \
    ,                                                                                               \
    (b * exp(fmin(a, 50)) / (exp(fmin(a, 50)) + 1)))                                                 \
  X(THRESHOLD,  Threshold, threshold,  26, 1, 0, 0, 1, 0, 0, A_ALPHA_Y,                               \
    ,                                                                                               \
    (a > alpha ? 1 : 0))                                                                             \
  X(CLIP,       Clip,      clip,       27, 1, 0, 0, 1, 1, 0, A_ALPHA_BETA_Y,                          \
    ,                                                                                               \
    (fmax(alpha, fmin(a, beta))))                                                                    \
  X(CLIP_BACKWARD, ClipBackward, clip_backward, 28, 1, 1, 0, 1, 1, 0, A_B_ALPHA_BETA_Y,             \
    ,                                                                                               \
    (b * (a >= alpha && a <= beta)))                                                                 \
  /* ABI 1.7: Eltwise MAX (eltwise_layer.cu's MaxForward and MaxBackward) with its mask in   \
   * the element type: max_step is one bottom's step of the running maximum (a the maximum   \
   * so far, b the next bottom: a tie takes b, as the .cu does), argmax_step the mask's step   \
   * before it (y the mask, alpha the next bottom's index), mask_select the gradient of the   \
   * bottom whose index is alpha (0 + b: a -0 gradient becomes +0, as the .cu's sum). */      \
  X(MAX_STEP,   MaxStep,   max_step,   29, 1, 1, 0, 0, 0, 0, A_B_Y,                                   \
    ,                                                                                               \
    (a > b ? a : b))                                                                                 \
  X(ARGMAX_STEP, ArgmaxStep, argmax_step, 30, 1, 1, 1, 1, 0, 0, A_B_ALPHA_Y,                        \
    ,                                                                                               \
    (a > b ? y : alpha))                                                                             \
  X(MASK_SELECT, MaskSelect, mask_select, 31, 1, 1, 0, 1, 0, 0, A_B_ALPHA_Y,                        \
    ,                                                                                               \
    (a == alpha ? 0 + b : 0))                                                                        \
  /* ABI 1.7: b where a is positive, else y as it is (PReLU's x > 0 ? x : x * slope, with y   \
   * holding x * slope, and its gradient's dy : dy * slope). */                                \
  X(POSITIVE_SELECT, PositiveSelect, positive_select, 32, 1, 1, 1, 0, 0, 0, A_B_Y,                 \
    ,                                                                                               \
    (a > 0 ? b : y))                                                                                 \
  /* ABI 1.9: SigmoidCrossEntropyLoss (sigmoid_cross_entropy_loss_layer.cu): the per-element  \
   * log-likelihood of its forward kernel (a the input, b the target: the negated loss, which  \
   * Caffe sums with asum), and zero_where_label, y cleared where the label a names alpha     \
   * (Caffe's static_cast<int>(label) == ignore_label: trunc for every label an int holds). */ \
  X(SIGMOID_CROSS_ENTROPY, SigmoidCrossEntropy, sigmoid_cross_entropy, 33, 1, 1, 0, 0, 0, 1, A_B_Y, \
    ,                                                                                               \
    (a * (b - (a >= 0)) - log(1 + exp(a - 2 * a * (a >= 0)))))                                       \
  X(ZERO_WHERE_LABEL, ZeroWhereLabel, zero_where_label, 34, 1, 0, 1, 1, 0, 0, A_ALPHA_Y,            \
    ,                                                                                               \
    (trunc(a) == alpha ? 0 : y))                                                                     \
  /* ABI 1.11: Fast R-CNN's SmoothL1Loss (py-faster-rcnn's smooth_L1_loss_layer.cu, whose CPU   \
   * code is NOT_IMPLEMENTED), alpha its sigma^2: the loss of each difference a, quadratic     \
   * below 1 / alpha and linear above, and its derivative (the sign beyond 1 / alpha). */       \
  X(SMOOTH_L1,  SmoothL1,  smooth_l1,  35, 1, 0, 0, 1, 0, 0, A_ALPHA_Y,                               \
    ,                                                                                               \
    (fabs(a) < 1 / alpha ? 0.5 * a * a * alpha : fabs(a) - 0.5 / alpha))                             \
  X(SMOOTH_L1_BACKWARD, SmoothL1Backward, smooth_l1_backward, 36, 1, 0, 0, 1, 0, 0, A_ALPHA_Y,      \
    ,                                                                                               \
    (fabs(a) < 1 / alpha ? alpha * a : (0 < a) - (a < 0)))
/* clang-format on */

/* The enum: BLOBRT_EW_<CODE> = number, and BLOBRT_EW_OP_COUNT, the number of entries. */
#define BLOBRT_EW_ENUMERATOR_(CODE, Cxx, name, number, ...) BLOBRT_EW_##CODE = number,
#define BLOBRT_EW_PLUS_ONE_(...) +1
enum blobrt_elementwise_op {
  BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_ENUMERATOR_)
  BLOBRT_EW_OP_COUNT = 0 BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_PLUS_ONE_) /* codes are < this; later minors may add more */
};

/* The codes are exactly 0 .. BLOBRT_EW_OP_COUNT - 1, each once: the sum of 2^number over
 * the entries is 2^count - 1 only then (the codes index tables of BLOBRT_EW_OP_COUNT). */
#define BLOBRT_EW_BIT_(CODE, Cxx, name, number, ...) +(1ull << (number))
#if defined(__cplusplus)
static_assert(BLOBRT_EW_OP_COUNT < 64 && (0 BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_BIT_)) == (1ull << BLOBRT_EW_OP_COUNT) - 1,
              "element-wise codes are 0 .. BLOBRT_EW_OP_COUNT - 1, each once");
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(BLOBRT_EW_OP_COUNT < 64 && (0 BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_BIT_)) == (1ull << BLOBRT_EW_OP_COUNT) - 1,
               "element-wise codes are 0 .. BLOBRT_EW_OP_COUNT - 1, each once");
#else
typedef char blobrt_ew_codes_are_dense[(0 BLOBRT_ELEMENTWISE_OPS(BLOBRT_EW_BIT_)) == (1ull << BLOBRT_EW_OP_COUNT) - 1 ? 1 : -1];
#endif

#endif /* BLOBRT_ELEMENTWISE_OPERATIONS_H */
