// Kernels of Python scalar, string and list ops: the arithmetic of `int` and `float`
// values as Python defines it (floor division and modulo signs, half-to-even
// rounding, math-module domain errors), list indexing and slicing, and strings.
// Integer arithmetic is checked: TSL ints are 64-bit, so where Python would grow a
// bigint TSL raises "integer overflow" instead of wrapping silently.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/py_equal.h"

namespace tsl {
namespace {

// ---- int ------------------------------------------------------------------------------

int64_t add_int(int64_t a, int64_t b) {
  int64_t r;
  TSL_CHECK(!__builtin_add_overflow(a, b, &r), "integer overflow in ", a, " + ", b);
  return r;
}
int64_t sub_int(int64_t a, int64_t b) {
  int64_t r;
  TSL_CHECK(!__builtin_sub_overflow(a, b, &r), "integer overflow in ", a, " - ", b);
  return r;
}
int64_t mul_int(int64_t a, int64_t b) {
  int64_t r;
  TSL_CHECK(!__builtin_mul_overflow(a, b, &r), "integer overflow in ", a, " * ", b);
  return r;
}
int64_t neg_int(int64_t a) { return sub_int(0, a); }

// Python's // and %: the quotient rounds toward negative infinity and the
// remainder takes the sign of the divisor.
int64_t floor_divide_int(int64_t a, int64_t b) {
  TSL_CHECK(b != 0, "integer division or modulo by zero");
  TSL_CHECK(!(a == std::numeric_limits<int64_t>::min() && b == -1), "integer overflow in ", a,
            " // ", b);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t remainder_int(int64_t a, int64_t b) {
  TSL_CHECK(b != 0, "integer division or modulo by zero");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t pow_int(int64_t a, int64_t b) {
  TSL_CHECK(b >= 0, "integer ", a, " to the negative power ", b,
            " is not an int: write it with a float (", a, ".0 ** ", b, ")");
  int64_t result = 1;
  int64_t base = a;
  while (b > 0) {
    if (b & 1) TSL_CHECK(!__builtin_mul_overflow(result, base, &result), "integer overflow in ** ");
    b >>= 1;
    if (b > 0) TSL_CHECK(!__builtin_mul_overflow(base, base, &base), "integer overflow in **");
  }
  return result;
}

int64_t abs_int(int64_t a) { return a < 0 ? neg_int(a) : a; }
int64_t min_int(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t max_int(int64_t a, int64_t b) { return a < b ? b : a; }

// ---- float ----------------------------------------------------------------------------

double add_float(double a, double b) { return a + b; }
double sub_float(double a, double b) { return a - b; }
double mul_float(double a, double b) { return a * b; }
double neg_float(double a) { return -a; }
double div_float(double a, double b) {
  TSL_CHECK(b != 0.0, "float division by zero");
  return a / b;
}
double floor_divide_float(double a, double b) {
  TSL_CHECK(b != 0.0, "float floor division by zero");
  return std::floor(a / b);
}
double remainder_float(double a, double b) {
  TSL_CHECK(b != 0.0, "float modulo by zero");
  double r = std::fmod(a, b);
  if (r != 0.0 && ((r < 0) != (b < 0))) r += b;
  // Python gives the remainder the divisor's sign even when it is zero.
  if (r == 0.0) r = std::copysign(0.0, b);
  return r;
}
double pow_float(double a, double b) {
  TSL_CHECK(!(a == 0.0 && b < 0.0), "0.0 cannot be raised to a negative power");
  double r = std::pow(a, b);
  TSL_CHECK(!(a < 0.0 && std::floor(b) != b && std::isfinite(b)),
            "a negative number cannot be raised to a fractional power (", a, " ** ", b, ")");
  return r;
}
double abs_float(double a) { return std::fabs(a); }
double min_float(double a, double b) { return b < a ? b : a; }
double max_float(double a, double b) { return a < b ? b : a; }

// The int of a float, refusing what has no int value (as Python's int() does).
int64_t checked_to_int(double v) {
  TSL_CHECK(!std::isnan(v), "cannot convert float NaN to integer");
  TSL_CHECK(!std::isinf(v), "cannot convert float infinity to integer");
  TSL_CHECK(v >= -9223372036854775808.0 && v < 9223372036854775808.0, "float ", v,
            " is too large to convert to a 64-bit int");
  return static_cast<int64_t>(v);
}

int64_t round_float(double a) { return checked_to_int(std::nearbyint(a)); }  // half to even

// Python's round(a, n): the exact binary value of a rounded to n decimals (half to
// even), read back as the nearest double. glibc's printf rounds the exact value
// correctly, as CPython's dtoa does.
double round_ndigits(double a, int64_t ndigits) {
  if (!std::isfinite(a) || ndigits > 323) return a;
  if (ndigits < 0) {
    if (ndigits < -308) return std::copysign(0.0, a);
    double scale = std::pow(10.0, static_cast<double>(-ndigits));
    return std::nearbyint(a / scale) * scale;
  }
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(ndigits), a);
  return std::strtod(buf, nullptr);
}
int64_t floor_float(double a) { return checked_to_int(std::floor(a)); }
int64_t ceil_float(double a) { return checked_to_int(std::ceil(a)); }

// math.* with Python's "math domain error" / "math range error" checks.
double math_result(double r, bool domain_ok) {
  TSL_CHECK(domain_ok, "math domain error");
  TSL_CHECK(!std::isinf(r), "math range error");
  return r;
}
double exp_float(double a) { return std::isinf(a) ? std::exp(a) : math_result(std::exp(a), true); }
double log_float(double a) { return math_result(std::log(a), a > 0); }
double log2_float(double a) { return math_result(std::log2(a), a > 0); }
double log10_float(double a) { return math_result(std::log10(a), a > 0); }
double log_base_float(double a, double base) {
  TSL_CHECK(a > 0 && base > 0 && base != 1.0, "math domain error");
  return std::log(a) / std::log(base);
}
double log1p_float(double a) { return math_result(std::log1p(a), a > -1); }
double expm1_float(double a) {
  return std::isinf(a) ? std::expm1(a) : math_result(std::expm1(a), true);
}
double sqrt_float(double a) { return std::isinf(a) ? a : math_result(std::sqrt(a), a >= 0); }
double sin_float(double a) { return math_result(std::sin(a), !std::isinf(a)); }
double cos_float(double a) { return math_result(std::cos(a), !std::isinf(a)); }
double tan_float(double a) { return math_result(std::tan(a), !std::isinf(a)); }
double asin_float(double a) {
  return math_result(std::asin(a), std::isnan(a) || std::fabs(a) <= 1);
}
double acos_float(double a) {
  return math_result(std::acos(a), std::isnan(a) || std::fabs(a) <= 1);
}
double atan_float(double a) { return std::atan(a); }
double atan2_float(double a, double b) { return std::atan2(a, b); }
double sinh_float(double a) { return std::isinf(a) ? a : math_result(std::sinh(a), true); }
double cosh_float(double a) {
  return std::isinf(a) ? std::fabs(a) : math_result(std::cosh(a), true);
}
double tanh_float(double a) { return std::tanh(a); }
double erf_float(double a) { return std::erf(a); }
double fabs_float(double a) { return std::fabs(a); }
bool isnan_float(double a) { return std::isnan(a); }
bool isinf_float(double a) { return std::isinf(a); }
bool isfinite_float(double a) { return std::isfinite(a); }

// ---- comparisons ----------------------------------------------------------------------

template <typename T>
bool eq(T a, T b) {
  return a == b;
}
template <typename T>
bool ne(T a, T b) {
  return a != b;
}
template <typename T>
bool lt(T a, T b) {
  return a < b;
}
template <typename T>
bool le(T a, T b) {
  return a <= b;
}
template <typename T>
bool gt(T a, T b) {
  return a > b;
}
template <typename T>
bool ge(T a, T b) {
  return a >= b;
}
bool not_bool(bool a) { return !a; }

// `a is b`: None is None; tensors, lists and objects by identity; plain values by
// value (Python interns small ints and bools, and TSL has no boxed numbers).
bool is_same_object(const IValue& a, const IValue& b) {
  if (a.tag() != b.tag()) return false;
  switch (a.tag()) {
    case IValue::Tag::None:
      return true;
    case IValue::Tag::Bool:
      return a.to_bool() == b.to_bool();
    case IValue::Tag::Int:
      return a.to_int() == b.to_int();
    case IValue::Tag::Double:
      return a.to_double() == b.to_double();
    case IValue::Tag::DType:
      return a.to_dtype() == b.to_dtype();
    case IValue::Tag::Device:
      return a.to_device() == b.to_device();
    case IValue::Tag::Str:
      return a.to_str() == b.to_str();
    case IValue::Tag::Tensor:
      return a.tensor_impl() == b.tensor_impl();
    case IValue::Tag::List:
      return &a.to_list() == &b.to_list();
    case IValue::Tag::Tuple:
      return &a.to_tuple() == &b.to_tuple();
    case IValue::Tag::Dict:
      return &a.to_dict() == &b.to_dict();
    case IValue::Tag::Object:
      return &a.to_object() == &b.to_object();
  }
  return false;
}
bool is(IValue a, IValue b) { return is_same_object(a, b); }

bool is_not(IValue a, IValue b) { return !is_same_object(a, b); }

// ---- conversions ----------------------------------------------------------------------

double float_of_int(int64_t a) { return static_cast<double>(a); }
double float_of_bool(bool a) { return a ? 1.0 : 0.0; }
int64_t int_of_float(double a) { return checked_to_int(a); }
int64_t int_of_bool(bool a) { return a ? 1 : 0; }
bool bool_of_int(int64_t a) { return a != 0; }
bool bool_of_float(double a) { return a != 0.0; }

std::string strip(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\n\r\f\v");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\n\r\f\v");
  return s.substr(b, e - b + 1);
}

int64_t int_of_str(std::string s) {
  std::string t = strip(s);
  std::string digits;
  for (size_t i = 0; i < t.size(); ++i) {
    // Python allows single underscores between digits.
    if (t[i] == '_' && i > 0 && i + 1 < t.size() &&
        std::isdigit(static_cast<unsigned char>(t[i - 1])) &&
        std::isdigit(static_cast<unsigned char>(t[i + 1]))) {
      continue;
    }
    digits += t[i];
  }
  size_t start = (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) ? 1 : 0;
  bool ok = digits.size() > start;
  for (size_t i = start; i < digits.size(); ++i)
    ok = ok && std::isdigit(static_cast<unsigned char>(digits[i]));
  TSL_CHECK(ok, "invalid literal for int() with base 10: ", IValue(s).repr());
  errno = 0;
  long long v = std::strtoll(digits.c_str(), nullptr, 10);
  TSL_CHECK(errno != ERANGE, "int() of ", IValue(s).repr(), " does not fit in 64 bits");
  return v;
}

double float_of_str(std::string s) {
  std::string t = strip(s);
  std::string lower;
  for (char c : t) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string body =
      (!lower.empty() && (lower[0] == '+' || lower[0] == '-')) ? lower.substr(1) : lower;
  double sign = (!lower.empty() && lower[0] == '-') ? -1.0 : 1.0;
  if (body == "inf" || body == "infinity") return sign * std::numeric_limits<double>::infinity();
  if (body == "nan") return std::numeric_limits<double>::quiet_NaN();
  bool ok = !t.empty();
  for (char c : body)
    ok = ok && (std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == '+' ||
                c == '-');
  char* end = nullptr;
  double v = ok ? std::strtod(t.c_str(), &end) : 0.0;
  TSL_CHECK(ok && end == t.c_str() + t.size(),
            "could not convert string to float: ", IValue(s).repr());
  return v;
}

// float(t), int(t), bool(t) of a one-element tensor.
double float_of_tensor(Tensor t) { return t.item().to_double(); }
int64_t int_of_tensor(Tensor t) {
  Scalar s = t.item();
  return s.is_floating() ? checked_to_int(s.to_double()) : s.to_int();
}
bool bool_of_tensor(Tensor t) {
  TSL_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  return t.item().to_bool();
}

std::string str_of(IValue v) { return v.str(); }

// ---- strings --------------------------------------------------------------------------

std::string add_str(std::string a, std::string b) { return a + b; }

// Code points of a UTF-8 string (Python's len counts characters, not bytes).
int64_t len_str(std::string s) {
  int64_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// ---- lists ----------------------------------------------------------------------------

const std::vector<IValue>& elements_of(const IValue& v) {
  return v.is_tuple() ? v.to_tuple() : v.to_list().elements;
}

bool sequence_equal(const std::vector<IValue>& a, const std::vector<IValue>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!py_equal(a[i], b[i])) return false;
  }
  return true;
}

bool eq_seq(IValue a, IValue b) { return py_equal(a, b); }
bool ne_seq(IValue a, IValue b) { return !py_equal(a, b); }
bool contains_seq(IValue seq, IValue item) {
  for (const IValue& e : elements_of(seq)) {
    if (py_equal(e, item)) return true;
  }
  return false;
}
bool contains_str(std::string s, std::string part) { return s.find(part) != std::string::npos; }

void len_list(KernelArgs& a) {
  a.out(0) = IValue(static_cast<int64_t>(elements_of(a.in(0)).size()));
}

void getitem_list(KernelArgs& a) {
  const std::vector<IValue>& elems = elements_of(a.in(0));
  int64_t n = static_cast<int64_t>(elems.size());
  int64_t i = a.in(1).to_int();
  int64_t k = i < 0 ? i + n : i;
  TSL_CHECK(k >= 0 && k < n, "list index ", i, " out of range for a list of length ", n);
  a.out(0) = elems[static_cast<size_t>(k)];
}

// Python's slice.indices(): clamps start and stop for the step's direction.
void slice_bounds(int64_t n, const IValue& start_v, const IValue& end_v, int64_t step,
                  int64_t& start, int64_t& end) {
  TSL_CHECK(step != 0, "slice step cannot be zero");
  int64_t lower = step > 0 ? 0 : -1;
  int64_t upper = step > 0 ? n : n - 1;
  auto clamp = [&](const IValue& v, int64_t dflt) {
    if (v.is_none()) return dflt;
    int64_t x = v.to_int();
    if (x < 0) {
      x += n;
      return x < lower ? lower : x;
    }
    return x > upper ? upper : x;
  };
  start = clamp(start_v, step > 0 ? lower : upper);
  end = clamp(end_v, step > 0 ? upper : lower);
}

void slice_list(KernelArgs& a) {
  const std::vector<IValue>& elems = elements_of(a.in(0));
  int64_t step = a.in(3).to_int();
  int64_t start, end;
  slice_bounds(static_cast<int64_t>(elems.size()), a.in(1), a.in(2), step, start, end);
  std::vector<IValue> out;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) out.push_back(elems[i]);
  IValue sliced = IValue::list(std::move(out));
  // x.shape[1:] is a torch.Size too.
  if (a.in(0).is_list()) sliced.to_list().torch_size = a.in(0).to_list().torch_size;
  a.out(0) = std::move(sliced);
}

void setitem_list(KernelArgs& a) {
  std::vector<IValue>& elems = a.in(0).to_list().elements;
  int64_t n = static_cast<int64_t>(elems.size());
  int64_t i = a.in(1).to_int();
  int64_t k = i < 0 ? i + n : i;
  TSL_CHECK(k >= 0 && k < n, "list assignment index ", i, " out of range for a list of length ", n);
  elems[static_cast<size_t>(k)] = a.in(2);
  if (a.num_outputs() > 0) a.out(0) = IValue();
}

void append_list(KernelArgs& a) {
  a.in(0).to_list().elements.push_back(a.in(1));
  if (a.num_outputs() > 0) a.out(0) = IValue();
}

void add_list(KernelArgs& a) {
  std::vector<IValue> out = elements_of(a.in(0));
  const std::vector<IValue>& more = elements_of(a.in(1));
  out.insert(out.end(), more.begin(), more.end());
  a.out(0) = IValue::list(std::move(out));
}

void range_list(KernelArgs& a) {
  int64_t start = a.in(0).to_int(), end = a.in(1).to_int(), step = a.in(2).to_int();
  TSL_CHECK(step != 0, "range() arg 3 must not be zero");
  std::vector<IValue> out;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) out.emplace_back(i);
  a.out(0) = IValue::list(std::move(out));
}

template <typename T, bool Max>
T extreme_of(const std::vector<IValue>& elems, const char* name) {
  TSL_CHECK(!elems.empty(), name, "() arg is an empty sequence");
  T best = 0;
  for (size_t i = 0; i < elems.size(); ++i) {
    T v;
    if constexpr (std::is_same_v<T, double>)
      v = elems[i].to_double();
    else
      v = elems[i].to_int();
    if (i == 0 || (Max ? best < v : v < best)) best = v;
  }
  return best;
}

void min_int_list(KernelArgs& a) {
  a.out(0) = IValue(extreme_of<int64_t, false>(elements_of(a.in(0)), "min"));
}
void max_int_list(KernelArgs& a) {
  a.out(0) = IValue(extreme_of<int64_t, true>(elements_of(a.in(0)), "max"));
}
void min_float_list(KernelArgs& a) {
  a.out(0) = IValue(extreme_of<double, false>(elements_of(a.in(0)), "min"));
}
void max_float_list(KernelArgs& a) {
  a.out(0) = IValue(extreme_of<double, true>(elements_of(a.in(0)), "max"));
}

void sum_int_list(KernelArgs& a) {
  int64_t s = 0;
  for (const IValue& v : elements_of(a.in(0))) s = add_int(s, v.to_int());
  a.out(0) = IValue(s);
}
void sum_float_list(KernelArgs& a) {
  double s = 0;
  for (const IValue& v : elements_of(a.in(0))) s += v.to_double();
  a.out(0) = IValue(s);
}

// Python's sorted() and list.sort(): a stable sort by `<`, which with reverse=True
// keeps equal elements in their order too (Python sorts as if each comparison were
// reversed). Strings compare by code point, which is their UTF-8 byte order.
template <typename T>
std::vector<IValue> sorted_elements(std::vector<IValue> v, bool reverse) {
  auto key = [](const IValue& x) -> decltype(auto) {
    if constexpr (std::is_same_v<T, std::string>)
      return x.to_str();
    else if constexpr (std::is_same_v<T, double>)
      return x.to_double();
    else
      return x.to_int();
  };
  std::stable_sort(v.begin(), v.end(), [&](const IValue& a, const IValue& b) {
    return reverse ? key(b) < key(a) : key(a) < key(b);
  });
  return v;
}

template <typename T>
void sorted_list(KernelArgs& a) {
  a.out(0) = IValue::list(sorted_elements<T>(elements_of(a.in(0)), a.in(1).to_bool()));
}

template <typename T>
void sort_list(KernelArgs& a) {
  ListImpl& l = a.in(0).to_list();
  l.elements = sorted_elements<T>(std::move(l.elements), a.in(1).to_bool());
}

// Python's sum(tensors) is 0 + t0 + t1 + ...: the result is a new tensor even for one
// element, and the int 0 never widens the tensors' dtype.
void sum_tensor_list(KernelArgs& a) {
  const std::vector<IValue>& elems = elements_of(a.in(0));
  IValue acc(int64_t{0});
  if (elems.empty()) {
    a.out(0) = IValue(Tensor::scalar(Scalar(int64_t{0}), DType::Int64));
    return;
  }
  acc = call_op(OpId::add, {elems[0], acc, IValue(Scalar(int64_t{1}))})[0];
  for (size_t i = 1; i < elems.size(); ++i) {
    acc = call_op(OpId::add, {acc, elems[i], IValue(Scalar(int64_t{1}))})[0];
  }
  a.out(0) = std::move(acc);
}

// ---- time and devices -----------------------------------------------------------------

double perf_counter() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}
double time_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Note [Progress lines]
// `for x in progress(xs)` reports on stderr, as tqdm does: on a terminal one line
// redrawn at most ten times a second (desc, percentage, a bar, count, elapsed time,
// time left, rate); elsewhere (a log, a pipe) a plain line at each tenth of the way.
// The end prints the final line. Handles are per loop run; a loop left early (break,
// return, an error) leaves its state for the process, a few bytes.
struct ProgressState {
  int64_t total = 0;
  std::string desc;
  double start = 0, last_draw = -1;
  int64_t last_tenth = 0;  // a plain line from the first tenth on
  bool tty = false;
};

std::mutex& progress_mutex() {
  static std::mutex m;
  return m;
}
std::map<int64_t, ProgressState>& progress_states() {
  static std::map<int64_t, ProgressState> states;
  return states;
}

std::string clock_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto s = static_cast<int64_t>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  }
  return buf;
}

void draw_progress(ProgressState& p, int64_t done, double now, bool final) {
  double elapsed = now - p.start;
  double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  double left = rate > 0 ? static_cast<double>(p.total - done) / rate : -1;
  std::string line = p.desc.empty() ? "" : p.desc + ": ";
  char buf[160];
  if (p.total > 0) {
    int64_t pct = done * 100 / p.total;
    constexpr int kWidth = 20;
    int64_t filled = done * kWidth / p.total;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, ' ');
    std::snprintf(buf, sizeof buf, "%3lld%%|%s| %lld/%lld [%s<%s, %.2f it/s]",
                  static_cast<long long>(pct), bar.c_str(), static_cast<long long>(done),
                  static_cast<long long>(p.total), clock_text(elapsed).c_str(),
                  clock_text(left).c_str(), rate);
  } else {
    std::snprintf(buf, sizeof buf, "%lld [%s, %.2f it/s]", static_cast<long long>(done),
                  clock_text(elapsed).c_str(), rate);
  }
  line += buf;
  if (p.tty) {
    std::fprintf(stderr, "\r%s\033[K%s", line.c_str(), final ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

int64_t progress_start(int64_t total, std::string desc) {
  static int64_t next = 1;
  std::lock_guard<std::mutex> lock(progress_mutex());
  ProgressState p;
  p.total = total < 0 ? 0 : total;
  p.desc = std::move(desc);
  p.start = perf_counter();
  p.tty = ::isatty(STDERR_FILENO) != 0;
  int64_t h = next++;
  progress_states()[h] = std::move(p);
  return h;
}

void progress_step(int64_t handle, int64_t done) {
  std::lock_guard<std::mutex> lock(progress_mutex());
  auto it = progress_states().find(handle);
  if (it == progress_states().end()) return;
  ProgressState& p = it->second;
  double now = perf_counter();
  if (p.tty) {
    if (now - p.last_draw < 0.1) return;
    p.last_draw = now;
    draw_progress(p, done, now, false);
    return;
  }
  int64_t tenth = p.total > 0 ? done * 10 / p.total : -1;
  if (done == 0 || tenth <= p.last_tenth) return;
  p.last_tenth = tenth;
  draw_progress(p, done, now, false);
}

void progress_end(int64_t handle) {
  std::lock_guard<std::mutex> lock(progress_mutex());
  auto it = progress_states().find(handle);
  if (it == progress_states().end()) return;
  draw_progress(it->second, it->second.total, perf_counter(), true);
  progress_states().erase(it);
}

// os.path.exists: false for a path that cannot be examined, as Python's.
bool path_exists(std::string path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec) && !ec;
}

}  // namespace

bool py_equal(const IValue& a, const IValue& b) {
  auto number = [](const IValue& v) { return v.is_int() || v.is_double() || v.is_bool(); };
  auto as_double = [](const IValue& v) {
    return v.is_bool()  ? (v.to_bool() ? 1.0 : 0.0)
           : v.is_int() ? double(v.to_int())
                        : v.to_double();
  };
  if (number(a) && number(b)) {
    if (a.is_double() || b.is_double()) return as_double(a) == as_double(b);
    return (a.is_bool() ? int64_t(a.to_bool()) : a.to_int()) ==
           (b.is_bool() ? int64_t(b.to_bool()) : b.to_int());
  }
  bool a_seq = a.is_list() || a.is_tuple(), b_seq = b.is_list() || b.is_tuple();
  if (a_seq && b_seq) return sequence_equal(elements_of(a), elements_of(b));
  if (a.is_tensor() || b.is_tensor()) {
    IValue eq = call_op(OpId::eq, {a, b}).at(0);
    const Tensor& t = eq.to_tensor();
    TSL_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
    return call_op(OpId::Bool_Tensor, {eq}).at(0).to_bool();
  }
  if (a.is_dict() && b.is_dict()) {
    // The same keys with equal values, in any order.
    const DictImpl& x = a.to_dict();
    const DictImpl& y = b.to_dict();
    if (x.size() != y.size()) return false;
    for (const auto& [key, value] : x.entries()) {
      const IValue* other = y.find(key);
      if (!other || !py_equal(value, *other)) return false;
    }
    return true;
  }
  if (a.tag() != b.tag()) return false;
  return is_same_object(a, b);
}

void register_scalar_kernels() {
  TSL_REGISTER_GENERIC(add_int, add_int);
  TSL_REGISTER_GENERIC(sub_int, sub_int);
  TSL_REGISTER_GENERIC(mul_int, mul_int);
  TSL_REGISTER_GENERIC(neg_int, neg_int);
  TSL_REGISTER_GENERIC(floor_divide_int, floor_divide_int);
  TSL_REGISTER_GENERIC(remainder_int, remainder_int);
  TSL_REGISTER_GENERIC(pow_int, pow_int);
  TSL_REGISTER_GENERIC(abs_int, abs_int);
  TSL_REGISTER_GENERIC(min_int, min_int);
  TSL_REGISTER_GENERIC(max_int, max_int);
  TSL_REGISTER_GENERIC(add_float, add_float);
  TSL_REGISTER_GENERIC(sub_float, sub_float);
  TSL_REGISTER_GENERIC(mul_float, mul_float);
  TSL_REGISTER_GENERIC(neg_float, neg_float);
  TSL_REGISTER_GENERIC(div_float, div_float);
  TSL_REGISTER_GENERIC(floor_divide_float, floor_divide_float);
  TSL_REGISTER_GENERIC(remainder_float, remainder_float);
  TSL_REGISTER_GENERIC(pow_float, pow_float);
  TSL_REGISTER_GENERIC(abs_float, abs_float);
  TSL_REGISTER_GENERIC(fabs_float, fabs_float);
  TSL_REGISTER_GENERIC(min_float, min_float);
  TSL_REGISTER_GENERIC(max_float, max_float);
  TSL_REGISTER_GENERIC(round_float, round_float);
  TSL_REGISTER_GENERIC(round_ndigits, round_ndigits);
  TSL_REGISTER_GENERIC(floor_float, floor_float);
  TSL_REGISTER_GENERIC(ceil_float, ceil_float);
  TSL_REGISTER_GENERIC(exp_float, exp_float);
  TSL_REGISTER_GENERIC(log_float, log_float);
  TSL_REGISTER_GENERIC(log_base_float, log_base_float);
  TSL_REGISTER_GENERIC(log2_float, log2_float);
  TSL_REGISTER_GENERIC(log10_float, log10_float);
  TSL_REGISTER_GENERIC(log1p_float, log1p_float);
  TSL_REGISTER_GENERIC(expm1_float, expm1_float);
  TSL_REGISTER_GENERIC(sqrt_float, sqrt_float);
  TSL_REGISTER_GENERIC(sin_float, sin_float);
  TSL_REGISTER_GENERIC(cos_float, cos_float);
  TSL_REGISTER_GENERIC(tan_float, tan_float);
  TSL_REGISTER_GENERIC(asin_float, asin_float);
  TSL_REGISTER_GENERIC(acos_float, acos_float);
  TSL_REGISTER_GENERIC(atan_float, atan_float);
  TSL_REGISTER_GENERIC(atan2_float, atan2_float);
  TSL_REGISTER_GENERIC(sinh_float, sinh_float);
  TSL_REGISTER_GENERIC(cosh_float, cosh_float);
  TSL_REGISTER_GENERIC(tanh_float, tanh_float);
  TSL_REGISTER_GENERIC(erf_float, erf_float);
  TSL_REGISTER_GENERIC(isnan_float, isnan_float);
  TSL_REGISTER_GENERIC(isinf_float, isinf_float);
  TSL_REGISTER_GENERIC(isfinite_float, isfinite_float);

  TSL_REGISTER_GENERIC(eq_int, eq<int64_t>);
  TSL_REGISTER_GENERIC(ne_int, ne<int64_t>);
  TSL_REGISTER_GENERIC(lt_int, lt<int64_t>);
  TSL_REGISTER_GENERIC(le_int, le<int64_t>);
  TSL_REGISTER_GENERIC(gt_int, gt<int64_t>);
  TSL_REGISTER_GENERIC(ge_int, ge<int64_t>);
  TSL_REGISTER_GENERIC(eq_float, eq<double>);
  TSL_REGISTER_GENERIC(ne_float, ne<double>);
  TSL_REGISTER_GENERIC(lt_float, lt<double>);
  TSL_REGISTER_GENERIC(le_float, le<double>);
  TSL_REGISTER_GENERIC(gt_float, gt<double>);
  TSL_REGISTER_GENERIC(ge_float, ge<double>);
  TSL_REGISTER_GENERIC(eq_bool, eq<bool>);
  TSL_REGISTER_GENERIC(ne_bool, ne<bool>);
  TSL_REGISTER_GENERIC(eq_str, eq<std::string>);
  TSL_REGISTER_GENERIC(ne_str, ne<std::string>);
  TSL_REGISTER_GENERIC(not_bool, not_bool);
  TSL_REGISTER_GENERIC(is, is);
  TSL_REGISTER_GENERIC(eq_seq, eq_seq);
  TSL_REGISTER_GENERIC(ne_seq, ne_seq);
  TSL_REGISTER_GENERIC(contains_seq, contains_seq);
  TSL_REGISTER_GENERIC(contains_str, contains_str);
  TSL_REGISTER_GENERIC(is_not, is_not);

  TSL_REGISTER_GENERIC(Float_int, float_of_int);
  TSL_REGISTER_GENERIC(Float_bool, float_of_bool);
  TSL_REGISTER_GENERIC(Float_str, float_of_str);
  TSL_REGISTER_GENERIC(Float_Tensor, float_of_tensor);
  TSL_REGISTER_GENERIC(Int_float, int_of_float);
  TSL_REGISTER_GENERIC(Int_bool, int_of_bool);
  TSL_REGISTER_GENERIC(Int_str, int_of_str);
  TSL_REGISTER_GENERIC(Int_Tensor, int_of_tensor);
  TSL_REGISTER_GENERIC(Bool_int, bool_of_int);
  TSL_REGISTER_GENERIC(Bool_float, bool_of_float);
  TSL_REGISTER_GENERIC(Bool_Tensor, bool_of_tensor);
  TSL_REGISTER_GENERIC(Str, str_of);
  TSL_REGISTER_GENERIC(add_str, add_str);
  TSL_REGISTER_GENERIC(len_str, len_str);

  TSL_REGISTER_GENERIC_RAW(len_list, len_list);
  TSL_REGISTER_GENERIC_RAW(getitem_list, getitem_list);
  TSL_REGISTER_GENERIC_RAW(setitem_list, setitem_list);
  TSL_REGISTER_GENERIC_RAW(slice_list, slice_list);
  TSL_REGISTER_GENERIC_RAW(append_list, append_list);
  TSL_REGISTER_GENERIC_RAW(add_list, add_list);
  TSL_REGISTER_GENERIC_RAW(range_list, range_list);
  TSL_REGISTER_GENERIC_RAW(min_int_list, min_int_list);
  TSL_REGISTER_GENERIC_RAW(max_int_list, max_int_list);
  TSL_REGISTER_GENERIC_RAW(min_float_list, min_float_list);
  TSL_REGISTER_GENERIC_RAW(max_float_list, max_float_list);
  TSL_REGISTER_GENERIC_RAW(sum_int_list, sum_int_list);
  TSL_REGISTER_GENERIC_RAW(sorted_int, sorted_list<int64_t>);
  TSL_REGISTER_GENERIC_RAW(sorted_float, sorted_list<double>);
  TSL_REGISTER_GENERIC_RAW(sorted_str, sorted_list<std::string>);
  TSL_REGISTER_GENERIC_RAW(sort_int_list, sort_list<int64_t>);
  TSL_REGISTER_GENERIC_RAW(sort_float_list, sort_list<double>);
  TSL_REGISTER_GENERIC_RAW(sort_str_list, sort_list<std::string>);
  TSL_REGISTER_GENERIC_RAW(sum_float_list, sum_float_list);
  TSL_REGISTER_GENERIC_RAW(sum_tensor_list, sum_tensor_list);

  TSL_REGISTER_GENERIC(perf_counter, perf_counter);
  TSL_REGISTER_GENERIC(path_exists, path_exists);
  TSL_REGISTER_GENERIC(progress_start, progress_start);
  TSL_REGISTER_GENERIC(progress_step, progress_step);
  TSL_REGISTER_GENERIC(progress_end, progress_end);
  TSL_REGISTER_GENERIC(time, time_now);
}

}  // namespace tsl
