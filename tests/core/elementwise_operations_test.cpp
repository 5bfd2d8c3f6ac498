// The recipe of blobrt/elementwise_operations.h held whole: every code of the list has a
// name, a host kernel that computes the list's formula (what the conformance suite takes
// as its reference) reading only the operands the list says, the Caffe functions the list
// names computing the same; every plugin answers every code of the list, either OK having
// written y as the formula says or BLOBRT_ERR_UNSUPPORTED, never OK with y untouched, and
// refuses a code outside the list. And the plugin ABI's minor is defined in one place.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "blobrt/caffe_compat.hpp"
#include "blobrt/elementwise_operations.h"
#include "blobrt/plugin_abi.h"
#include "blobrt/runtime.hpp"
#include "blobrt/version.hpp"
#include "blobrt_kernels/elementwise.hpp"

namespace {

// One entry of the list, as the test reads it.
struct Entry {
  int code;
  const char* code_name;  // "SET"
  const char* name;       // "set"
  bool a, b, y;
};
#define ENTRY_(CODE, Cxx, name, number, A, B, Y, ...) {number, #CODE, #name, A != 0, B != 0, Y != 0},
const std::vector<Entry> kEntries = {BLOBRT_ELEMENTWISE_OPS(ENTRY_)};
#undef ENTRY_

// The list's formula of a code, in double: the conformance suite's reference.
double formula(int code, double a, double b, double y, double alpha, double beta) {
  using std::exp, std::fabs, std::log, std::pow, std::signbit, std::sqrt;
  switch (code) {
#define FORMULA_(CODE, Cxx, name, number, A, B, Y, ALPHA, BETA, HEAVY, FORM, CAFFE, FORMULA) \
  case BLOBRT_EW_##CODE: return static_cast<double>(FORMULA);
    BLOBRT_ELEMENTWISE_OPS(FORMULA_)
#undef FORMULA_
  }
  (void)a, (void)b, (void)y, (void)alpha, (void)beta;
  ADD_FAILURE() << "no formula for code " << code;
  return 0;
}

constexpr double kAlpha = 1.5, kBeta = -0.25;
// The alpha a code runs with here: kAlpha, but a label zero_where_label meets in a (its
// labels 0.25 to 3.24 truncate to 0 to 3; 1.5 would name none and leave y as it was).
double alpha_of(int code) { return code == BLOBRT_EW_ZERO_WHERE_LABEL ? 1.0 : kAlpha; }

// Operands on every code's domain (log, sqrt and powx need a > 0; div b away from 0),
// with values that tell the operands apart.
template <typename T>
struct Operands {
  explicit Operands(std::size_t n) : a(n), b(n), y(n) {
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<T>(0.25 + 0.01 * static_cast<double>(i % 300));
      b[i] = static_cast<T>(0.5 + 0.003 * static_cast<double>(i % 500));
      y[i] = static_cast<T>(-1.0 + 0.007 * static_cast<double>(i % 250));
    }
  }
  std::vector<T> a, b, y;
};

// y's new value against the formula: a few ulps (libm's pow, exp, log) of the result.
template <typename T>
void expect_formula(const Entry& e, const Operands<T>& in, const std::vector<T>& got, const std::string& where) {
  const double eps = std::numeric_limits<T>::epsilon();
  int shown = 0;
  for (std::size_t i = 0; i < got.size() && shown < 3; ++i) {
    const double ref = static_cast<T>(formula(e.code, in.a[i], in.b[i], in.y[i], static_cast<T>(alpha_of(e.code)),
                                              static_cast<T>(kBeta)));
    double tol = 16 * eps * std::fabs(ref) + std::numeric_limits<T>::min();
    if (e.code == BLOBRT_EW_SIGMOID_CROSS_ENTROPY) {
      // A difference of terms up to |a| (|b| + 1) and log 2 that may cancel: absolute in them.
      tol += 16 * eps * (1 + std::fabs(in.a[i]) * (std::fabs(in.b[i]) + 1));
    }
    if (!(std::fabs(got[i] - ref) <= tol)) {
      ADD_FAILURE() << where << ": " << e.name << " y[" << i << "] is " << got[i] << ", the list's formula gives "
                    << ref << " (a=" << in.a[i] << ", b=" << in.b[i] << ", y=" << in.y[i] << ")";
      ++shown;
    }
  }
}

// Every code has its C name, its C++ enumerator, and one name that errors, logs, OpenCL's
// kernels and the benchmarks use: a code added without a name would print "unknown".
TEST(ElementwiseOperations, EveryCodeIsNamedOnce) {
  ASSERT_EQ(kEntries.size(), static_cast<std::size_t>(BLOBRT_EW_OP_COUNT));
  for (std::size_t i = 0; i < kEntries.size(); ++i) {
    const Entry& e = kEntries[i];
    EXPECT_EQ(e.code, static_cast<int>(i)) << e.code_name << ": the list gives its codes in order, from 0";
    EXPECT_STRNE(e.name, "");
    EXPECT_STREQ(blobrt_kernels::elementwise_op_name(e.code), e.name);
    EXPECT_STREQ(blobrt::to_string(static_cast<blobrt::ElementwiseOp>(e.code)), e.name);
    for (std::size_t j = 0; j < i; ++j) EXPECT_STRNE(kEntries[j].name, e.name) << "two codes named alike";
    EXPECT_EQ(blobrt_kernels::reads_a(e.code), e.a) << e.name;
    EXPECT_EQ(blobrt_kernels::reads_b(e.code), e.b) << e.name;
    EXPECT_EQ(blobrt_kernels::reads_y(e.code), e.y) << e.name;
  }
  EXPECT_STREQ(blobrt_kernels::elementwise_op_name(BLOBRT_EW_OP_COUNT), "unknown");
  EXPECT_STREQ(blobrt_kernels::elementwise_op_name(-1), "unknown");
  EXPECT_FALSE(blobrt_kernels::is_elementwise_op(BLOBRT_EW_OP_COUNT));
}

// The operand flags agree with the formula: what it computes changes with an operand the
// list says the code reads (values of either sign: sign and sgnbit), never with another.
// The comparing codes (threshold, clip, max_step, mask_select ...) depend on an operand only
// on some side of a comparison, so each operand is varied over a grid of points and scalars.
TEST(ElementwiseOperations, FormulaReadsOnlyTheListedOperands) {
  auto differ = [](double x, double y) { return !(x == y) && !(std::isnan(x) && std::isnan(y)); };
  const double probes[] = {-2.5, -0.0, 0.75, 1.0, 1.25, 3.0};
  const double scalars[][2] = {{kAlpha, kBeta}, {1.0, 1.25}, {-0.5, 2.0}};
  for (const Entry& e : kEntries) {
    EXPECT_TRUE(std::isfinite(formula(e.code, 0.75, 1.25, 0.5, kAlpha, kBeta))) << e.name;
    bool a_matters = false, b_matters = false, y_matters = false;
    for (const auto& scalar : scalars) {
      const auto f = [&](double a, double b, double y) { return formula(e.code, a, b, y, scalar[0], scalar[1]); };
      for (double a : probes) {
        for (double b : probes) {
          for (double y : {0.5, -1.75}) {
            const double ref = f(a, b, y);
            for (double other : probes) {
              a_matters = a_matters || differ(f(other, b, y), ref);
              b_matters = b_matters || differ(f(a, other, y), ref);
              y_matters = y_matters || differ(f(a, b, other), ref);
            }
          }
        }
      }
    }
    EXPECT_EQ(a_matters, e.a) << e.name << " and a";
    EXPECT_EQ(b_matters, e.b) << e.name << " and b";
    EXPECT_EQ(y_matters, e.y) << e.name << " and y";
  }
}

// Each code's host kernel (blobrt_kernels: what the host device, the CPU plugins and the
// core's host path for any other device run) computes the list's formula, serially and
// split across cores, with the operands the code does not read passed as NULL.
template <typename T>
void host_kernels_compute_the_formula() {
  for (const Entry& e : kEntries) {
    for (std::size_t n : {std::size_t{1}, std::size_t{37}, std::size_t{1} << 18}) {
      Operands<T> in(n);
      std::vector<T> y = in.y;
      ASSERT_TRUE(blobrt_kernels::elementwise<T>(e.code, static_cast<std::int64_t>(n), static_cast<T>(alpha_of(e.code)),
                                                 static_cast<T>(kBeta), e.a ? in.a.data() : nullptr,
                                                 e.b ? in.b.data() : nullptr, y.data()))
          << e.name << " has no host kernel";
      expect_formula(e, in, y, std::string("host kernel, n = ") + std::to_string(n));
    }
  }
  std::vector<T> y(4, T(7));
  EXPECT_FALSE(blobrt_kernels::elementwise<T>(BLOBRT_EW_OP_COUNT, 4, 0, 0, y.data(), y.data(), y.data()));
  EXPECT_FALSE(blobrt_kernels::elementwise<T>(-1, 4, 0, 0, y.data(), y.data(), y.data()));
  EXPECT_EQ(y, std::vector<T>(4, T(7))) << "an unknown code wrote y";
}
TEST(ElementwiseOperations, HostKernelsComputeTheFormulaFloat) { host_kernels_compute_the_formula<float>(); }
TEST(ElementwiseOperations, HostKernelsComputeTheFormulaDouble) { host_kernels_compute_the_formula<double>(); }

// Every Caffe function the list names exists with the argument order the entry's FORM
// says (it does not compile otherwise) and computes the formula: caffe_* on the host,
// caffe_gpu_* on the host device made current.
using Form_Y_ALPHA = void (*)(int, float, float*);
using Form_ALPHA_A_Y = void (*)(int, float, const float*, float*);
using Form_ALPHA_A_BETA_Y = void (*)(int, float, const float*, float, float*);
using Form_A_ALPHA_Y = void (*)(int, const float*, float, float*);
using Form_A_B_Y = void (*)(int, const float*, const float*, float*);
using Form_A_B_ALPHA_Y = void (*)(int, const float*, const float*, float, float*);  // no Caffe function has it yet
using Form_A_ALPHA_BETA_Y = void (*)(int, const float*, float, float, float*);         // nor this
using Form_A_B_ALPHA_BETA_Y = void (*)(int, const float*, const float*, float, float, float*);  // nor this
using Form_A_Y = void (*)(int, const float*, float*);
void call(Form_Y_ALPHA f, int n, Operands<float>&, std::vector<float>& y) { f(n, static_cast<float>(kAlpha), y.data()); }
void call(Form_ALPHA_A_Y f, int n, Operands<float>& in, std::vector<float>& y) {
  f(n, static_cast<float>(kAlpha), in.a.data(), y.data());
}
void call(Form_ALPHA_A_BETA_Y f, int n, Operands<float>& in, std::vector<float>& y) {
  f(n, static_cast<float>(kAlpha), in.a.data(), static_cast<float>(kBeta), y.data());
}
void call(Form_A_ALPHA_Y f, int n, Operands<float>& in, std::vector<float>& y) {
  f(n, in.a.data(), static_cast<float>(kAlpha), y.data());
}
void call(Form_A_B_Y f, int n, Operands<float>& in, std::vector<float>& y) { f(n, in.a.data(), in.b.data(), y.data()); }
void call(Form_A_Y f, int n, Operands<float>& in, std::vector<float>& y) { f(n, in.a.data(), y.data()); }

TEST(ElementwiseOperations, CaffeFunctionsComputeTheFormula) {
  blobrt::DeviceGuard host("host:0");
  int functions = 0;
  auto check = [&](const Entry& e, const char* function, auto f) {
    const int n = 1000;
    Operands<float> in(n);
    std::vector<float> y = in.y;
    call(f, n, in, y);
    expect_formula(e, in, y, function);
    ++functions;
  };
#define BLOBRT_EW_CAFFE(function) check(e, #function, static_cast<Form>(&::caffe::function<float>));
#define CAFFE_(CODE, Cxx, name, number, A, B, Y, ALPHA, BETA, HEAVY, FORM, CAFFE, FORMULA)      \
  {                                                                                              \
    using Form [[maybe_unused]] = Form_##FORM;  /* a code without Caffe functions: unused */      \
    [[maybe_unused]] const Entry& e = kEntries[number];                                          \
    const int before = functions;                                                                \
    CAFFE                                                                                        \
    /* ABI 1.2's codes (0 to 15) are Caffe's math functions: each serves at least one. */        \
    if (number < 16) EXPECT_GT(functions, before) << #name << " names no Caffe function";        \
  }
  BLOBRT_ELEMENTWISE_OPS(CAFFE_)
#undef CAFFE_
#undef BLOBRT_EW_CAFFE
}

// The plugins of this build (BLOBRT_PLUGIN_PATH), each loaded on its own: its table.
struct Plugin {
  std::string path;
  void* library = nullptr;
  const blobrt_plugin_v1* table = nullptr;
};
std::vector<Plugin> plugins() {
  std::vector<Plugin> found;
  const char* search = std::getenv("BLOBRT_PLUGIN_PATH");
  std::stringstream dirs(search ? search : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string file = entry.path().string();
      if (entry.path().extension() != ".so") continue;
      Plugin p{file};
      p.library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!p.library) {  // a library this machine lacks (the loader skips such a plugin too)
        std::cout << "not checked: " << file << ": " << dlerror() << "\n";
        continue;
      }
      auto entry_fn = reinterpret_cast<blobrt_plugin_entry_fn>(dlsym(p.library, BLOBRT_PLUGIN_ENTRY_SYMBOL));
      if (!entry_fn) continue;  // not a plugin
      p.table = entry_fn(BLOBRT_PLUGIN_ABI_MAJOR);
      if (p.table) found.push_back(p);
    }
  }
  return found;
}

// One call of a plugin's elementwise entry on device 0 with n elements: the status, and y
// as it is afterwards (read back whatever the status). y starts as a sentinel.
template <typename T>
int call_plugin(const blobrt_plugin_v1* t, void* context, int code, const Operands<T>& in, std::vector<T>* y,
                std::string* message) {
  const std::size_t n = in.a.size(), bytes = n * sizeof(T);
  blobrt_error err{};
  void *a = nullptr, *b = nullptr, *yb = nullptr;
  EXPECT_EQ(t->allocate(context, bytes, &a, &err), BLOBRT_OK) << err.message;
  EXPECT_EQ(t->allocate(context, bytes, &b, &err), BLOBRT_OK) << err.message;
  EXPECT_EQ(t->allocate(context, bytes, &yb, &err), BLOBRT_OK) << err.message;
  EXPECT_EQ(t->copy_to_device(context, in.a.data(), a, 0, bytes, &err), BLOBRT_OK) << err.message;
  EXPECT_EQ(t->copy_to_device(context, in.b.data(), b, 0, bytes, &err), BLOBRT_OK) << err.message;
  EXPECT_EQ(t->copy_to_device(context, y->data(), yb, 0, bytes, &err), BLOBRT_OK) << err.message;
  const bool known = blobrt_kernels::is_elementwise_op(code);
  err.message[0] = '\0';
  const int status = t->elementwise(context, sizeof(T) == 8 ? BLOBRT_FLOAT64 : BLOBRT_FLOAT32, code,
                                    static_cast<std::int64_t>(n), alpha_of(code), kBeta,
                                    !known || blobrt_kernels::reads_a(code) ? a : nullptr, 0,
                                    !known || blobrt_kernels::reads_b(code) ? b : nullptr, 0, yb, 0, &err);
  *message = err.message;
  EXPECT_EQ(t->synchronize(context, &err), BLOBRT_OK) << err.message;
  EXPECT_EQ(t->copy_to_host(context, yb, 0, y->data(), bytes, &err), BLOBRT_OK) << err.message;
  t->release(context, a);
  t->release(context, b);
  t->release(context, yb);
  return status;
}

template <typename T>
void plugin_answers_every_code(const Plugin& p, void* context, std::size_t n) {
  const std::string where = p.path + " (" + (sizeof(T) == 8 ? "double" : "float") + ", n = " + std::to_string(n) + ")";
  const Operands<T> in(n);
  for (const Entry& e : kEntries) {
    // y starts as the operation's input where it reads y, else as a sentinel it must overwrite.
    std::vector<T> y = e.y ? in.y : std::vector<T>(n, std::numeric_limits<T>::quiet_NaN());
    std::string message;
    const int status = call_plugin<T>(p.table, context, e.code, in, &y, &message);
    if (status == BLOBRT_ERR_UNSUPPORTED) continue;  // the core runs the host kernel
    ASSERT_EQ(status, BLOBRT_OK) << where << ": " << e.name << ": " << message;
    expect_formula(e, in, y, where + " answered OK");
  }
  for (int code : {int{BLOBRT_EW_OP_COUNT}, BLOBRT_EW_OP_COUNT + 1000, -1}) {
    std::vector<T> y(n, T(3));
    std::string message;
    const int status = call_plugin<T>(p.table, context, code, in, &y, &message);
    EXPECT_TRUE(status == BLOBRT_ERR_UNSUPPORTED || status == BLOBRT_ERR_INVALID_ARGUMENT)
        << where << ": code " << code << " answered " << status << " " << message;
    EXPECT_NE(message, "") << where << ": code " << code << " refused without a word";
    EXPECT_EQ(y, std::vector<T>(n, T(3))) << where << ": code " << code << " wrote y";
  }
}

TEST(ElementwiseOperations, EveryPluginAnswersEveryCode) {
  const std::vector<Plugin> found = plugins();
  ASSERT_FALSE(found.empty()) << "no plugin in BLOBRT_PLUGIN_PATH";
  int checked = 0;
  for (const Plugin& p : found) {
    if (!BLOBRT_PLUGIN_OFFERS(p.table, elementwise)) {
      std::cout << "not checked: " << p.path << ": no elementwise entry (the core's host path runs every code)\n";
      continue;
    }
    blobrt_error err{};
    int32_t count = 0;
    if (p.table->device_count(&count, &err) != BLOBRT_OK || count == 0) {  // CUDA without a GPU
      std::cout << "not checked: " << p.path << ": no device (" << err.message << ")\n";
      continue;
    }
    blobrt_device_properties props{};
    props.struct_size = sizeof props;
    ASSERT_EQ(p.table->device_properties(0, &props, &err), BLOBRT_OK) << p.path << ": " << err.message;
    void* context = nullptr;
    ASSERT_EQ(p.table->open_device(0, &context, &err), BLOBRT_OK) << p.path << ": " << err.message;
    // A few elements, and more than the OpenCL plugin's host path takes (32 Ki).
    for (std::size_t n : {std::size_t{7}, std::size_t{40000}}) {
      plugin_answers_every_code<float>(p, context, n);
      if (props.supports_fp64) plugin_answers_every_code<double>(p, context, n);
    }
    p.table->close_device(context);
    std::cout << "checked: " << p.path << " (" << props.name << ")\n";
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no plugin with elementwise and a device";
}

// The plugin ABI version is written once: plugin_abi.h defines it, meson reads it from
// there (version.hpp, manifests and packages take meson's), and no other file restates it.
TEST(ElementwiseOperations, AbiMinorIsDefinedOnce) {
  static_assert(BLOBRT_VERSION_PLUGIN_ABI_MINOR == BLOBRT_PLUGIN_ABI_MINOR, "meson's minor is the header's");
  static_assert(BLOBRT_VERSION_PLUGIN_ABI_MAJOR == BLOBRT_PLUGIN_ABI_MAJOR, "meson's major is the header's");
  namespace fs = std::filesystem;
  const fs::path root = BLOBRT_TEST_SOURCE_ROOT;
  // A C/C++ definition anywhere; a meson, Python or TOML assignment at a line's start.
  const std::regex defined(R"(#\s*define\s+BLOBRT_PLUGIN_ABI_MINOR\s+[0-9])");
  const std::regex assigned(R"(^\s*abi_minor\s*=\s*[0-9])");
  int files = 0, definitions = 0;
  for (const char* top : {"meson.build", "core", "backends", "blobrt-dist", "python", "cli", "packaging", "tools"}) {
    std::vector<fs::path> paths;
    if (fs::is_regular_file(root / top)) {
      paths.push_back(root / top);
    } else {
      for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (entry.path().filename() == "meson.build" || ext == ".h" || ext == ".hpp" ||
                                        ext == ".cpp" || ext == ".cu" || ext == ".in" || ext == ".py" || ext == ".toml")) {
          paths.push_back(entry.path());
        }
      }
    }
    for (const fs::path& path : paths) {
      std::ifstream file(path);
      const bool code = path.extension() != ".build" && path.extension() != ".py" && path.extension() != ".toml";
      ++files;
      int line_number = 0;
      for (std::string line; std::getline(file, line);) {
        ++line_number;
        if (std::regex_search(line, defined)) {
          ++definitions;
          EXPECT_EQ(path, root / "core/include/blobrt/plugin_abi.h")
              << path << ":" << line_number << " defines the plugin ABI minor again: " << line;
        }
        if (!code && std::regex_search(line, assigned)) {
          ADD_FAILURE() << path << ":" << line_number << " restates the plugin ABI minor (" << line
                        << "): read it from plugin_abi.h";
        }
      }
    }
  }
  EXPECT_EQ(definitions, 1) << "plugin_abi.h defines BLOBRT_PLUGIN_ABI_MINOR, once";
  EXPECT_GT(files, 50);
}

}  // namespace
