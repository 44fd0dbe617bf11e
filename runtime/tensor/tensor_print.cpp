// Tensor printing, a line-by-line port of PyTorch 1.13's torch/_tensor_str.py: one
// formatter per tensor chooses fixed, integer or scientific notation and a shared
// width from the elements that will be shown, rows wrap at the line width, large
// tensors are summarised with `...`, and the dtype / device / autograd suffixes follow.
#include "runtime/tensor/tensor_print.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace tsl {
namespace {

// Python's '{:.Nf}' and '{:.Ne}' of a double. printf rounds the exact binary value
// half-to-even as Python does; only nan (printf may write "-nan") and inf need care.
std::string format_double(double v, int precision, char conversion) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char fmt[8] = {'%', '.', '*', conversion, '\0'};
  int n = std::snprintf(nullptr, 0, fmt, precision, v);
  std::string out(static_cast<size_t>(n), '\0');
  std::snprintf(out.data(), out.size() + 1, fmt, precision, v);
  return out;
}

std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// The elements of a CPU tensor, read by element offset whatever the dtype.
struct ElementReader {
  const char* base;
  DType dtype;

  double as_double(int64_t offset) const {
    switch (dtype) {
      case DType::Float32:
        return static_cast<const float*>(ptr())[offset];
      case DType::Float64:
        return static_cast<const double*>(ptr())[offset];
      case DType::Int64:
        return static_cast<double>(static_cast<const int64_t*>(ptr())[offset]);
      case DType::Bool:
        return static_cast<const bool*>(ptr())[offset] ? 1.0 : 0.0;
    }
    return 0.0;
  }
  // str() of the element as a Python number (ints and bools).
  std::string as_python_str(int64_t offset) const {
    if (dtype == DType::Bool) return static_cast<const bool*>(ptr())[offset] ? "True" : "False";
    return std::to_string(static_cast<const int64_t*>(ptr())[offset]);
  }
  const void* ptr() const { return base; }
};

// _Formatter: decides the notation and the common width of every shown element.
class Formatter {
 public:
  explicit Formatter(const PrintOptions& options) : opts_(options) {}

  // Folds in the non-floating elements' text widths.
  void add_text_width(size_t width) { max_width_ = std::max(max_width_, width); }

  // Chooses the floating notation from all shown elements (any order).
  void choose_float_notation(const std::vector<double>& values) {
    std::vector<double> finite;
    for (double v : values) {
      if (std::isfinite(v) && v != 0.0) finite.push_back(v);
    }
    if (!finite.empty()) choose_from_nonzero_finite(finite);
    if (opts_.sci_mode >= 0) sci_mode_ = opts_.sci_mode == 1;
  }

  size_t width() const { return max_width_; }

  std::string format_float(double v) const {
    std::string text;
    if (sci_mode_) {
      text = format_double(v, opts_.precision, 'e');
    } else if (int_mode_) {
      text = format_double(v, 0, 'f');
      if (std::isfinite(v)) text += ".";
    } else {
      text = format_double(v, opts_.precision, 'f');
    }
    return pad_left(text, max_width_);
  }
  std::string format_text(const std::string& text) const { return pad_left(text, max_width_); }

 private:
  void choose_from_nonzero_finite(const std::vector<double>& values) {
    double min_abs = std::numeric_limits<double>::infinity();
    double max_abs = 0.0;
    for (double v : values) {
      min_abs = std::min(min_abs, std::fabs(v));
      max_abs = std::max(max_abs, std::fabs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    double ratio = max_abs / min_abs;
    if (int_mode_) {
      sci_mode_ = ratio > 1000.0 || max_abs > 1.0e8;
    } else {
      sci_mode_ = ratio > 1000.0 || max_abs > 1.0e8 || min_abs < 1.0e-4;
    }
    for (double v : values) {
      size_t width;
      if (sci_mode_)
        width = format_double(v, opts_.precision, 'e').size();
      else if (int_mode_)
        width = format_double(v, 0, 'f').size() + 1;
      else
        width = format_double(v, opts_.precision, 'f').size();
      max_width_ = std::max(max_width_, width);
    }
  }

  const PrintOptions& opts_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t max_width_ = 1;
};

// _tensor_str and its helpers over a CPU tensor's strided elements.
class TensorPrinter {
 public:
  TensorPrinter(const Tensor& cpu, const PrintOptions& options)
      : t_(cpu),
        reader_{static_cast<const char*>(cpu.raw_data()), cpu.dtype()},
        opts_(options),
        summarize_(cpu.numel() > options.threshold),
        formatter_(options) {
    build_formatter();
  }

  std::string str(int64_t indent) const { return tensor_str(0, 0, indent); }

 private:
  // The indices of dim `d` that are shown: all of them, or the edge items at each
  // end when summarising.
  bool elides(int64_t d) const { return summarize_ && t_.sizes()[d] > 2 * opts_.edgeitems; }
  std::vector<int64_t> shown_indices(int64_t d) const {
    int64_t n = t_.sizes()[d];
    std::vector<int64_t> out;
    if (!elides(d)) {
      for (int64_t i = 0; i < n; ++i) out.push_back(i);
      return out;
    }
    for (int64_t i = 0; i < opts_.edgeitems; ++i) out.push_back(i);
    for (int64_t i = n - opts_.edgeitems; i < n; ++i) out.push_back(i);
    return out;
  }

  // Calls fn(offset) for every shown element (get_summarized_data's elements).
  template <typename Fn>
  void for_each_shown(int64_t d, int64_t offset, Fn&& fn) const {
    if (d == t_.dim()) {
      fn(offset);
      return;
    }
    for (int64_t i : shown_indices(d)) for_each_shown(d + 1, offset + i * t_.strides()[d], fn);
  }

  void build_formatter() {
    if (is_floating(t_.dtype())) {
      std::vector<double> values;
      for_each_shown(0, 0, [&](int64_t o) { values.push_back(reader_.as_double(o)); });
      formatter_.choose_float_notation(values);
    } else {
      for_each_shown(
          0, 0, [&](int64_t o) { formatter_.add_text_width(reader_.as_python_str(o).size()); });
    }
  }

  std::string element(int64_t offset) const {
    if (is_floating(t_.dtype())) return formatter_.format_float(reader_.as_double(offset));
    return formatter_.format_text(reader_.as_python_str(offset));
  }

  // _vector_str: the elements of the last dim, as many per line as fit.
  std::string vector_str(int64_t d, int64_t offset, int64_t indent) const {
    double element_length = static_cast<double>(formatter_.width() + 2);
    int64_t per_line = std::max<int64_t>(
        1, static_cast<int64_t>(
               std::floor(static_cast<double>(opts_.linewidth - indent) / element_length)));
    std::vector<std::string> data;
    std::vector<int64_t> shown = shown_indices(d);
    for (size_t k = 0; k < shown.size(); ++k) {
      if (elides(d) && static_cast<int64_t>(k) == opts_.edgeitems) data.push_back(" ...");
      data.push_back(element(offset + shown[k] * t_.strides()[d]));
    }
    if (elides(d) && opts_.edgeitems == 0) data.push_back(" ...");
    std::string out = "[";
    for (size_t i = 0; i < data.size(); ++i) {
      if (i > 0) {
        bool new_line = static_cast<int64_t>(i) % per_line == 0;
        out += new_line ? ",\n" + std::string(static_cast<size_t>(indent + 1), ' ') : ", ";
      }
      out += data[i];
    }
    return out + "]";
  }

  // _tensor_str_with_formatter over dims d.. starting at element `offset`.
  std::string tensor_str(int64_t d, int64_t offset, int64_t indent) const {
    int64_t remaining = t_.dim() - d;
    if (remaining == 0) return element(offset);
    if (remaining == 1) return vector_str(d, offset, indent);
    std::vector<std::string> slices;
    std::vector<int64_t> shown = shown_indices(d);
    for (size_t k = 0; k < shown.size(); ++k) {
      if (elides(d) && static_cast<int64_t>(k) == opts_.edgeitems) slices.push_back("...");
      slices.push_back(tensor_str(d + 1, offset + shown[k] * t_.strides()[d], indent + 1));
    }
    if (elides(d) && opts_.edgeitems == 0) slices.push_back("...");
    std::string separator = "," + std::string(static_cast<size_t>(remaining - 1), '\n') +
                            std::string(static_cast<size_t>(indent + 1), ' ');
    std::string out = "[";
    for (size_t i = 0; i < slices.size(); ++i) {
      if (i > 0) out += separator;
      out += slices[i];
    }
    return out + "]";
  }

  const Tensor& t_;
  ElementReader reader_;
  const PrintOptions& opts_;
  bool summarize_;
  Formatter formatter_;
};

// Python's str(tuple(shape)): "(0, 3)", "(0,)".
std::string python_tuple(std::span<const int64_t> sizes) {
  std::string out = "(";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(sizes[i]);
  }
  if (sizes.size() == 1) out += ",";
  return out + ")";
}

// _add_suffixes: ", suffix" on the same line while it fits in the line width.
std::string add_suffixes(const std::string& tensor_str, const std::vector<std::string>& suffixes,
                         int64_t indent, int64_t linewidth) {
  std::string out = tensor_str;
  size_t newline = tensor_str.rfind('\n');
  // Python: len(s) - s.rfind('\n') + 1, where rfind is -1 when there is no newline.
  int64_t last_line_len = static_cast<int64_t>(tensor_str.size()) -
                          (newline == std::string::npos ? -1 : static_cast<int64_t>(newline)) + 1;
  for (const std::string& suffix : suffixes) {
    int64_t len = static_cast<int64_t>(suffix.size());
    if (last_line_len + len + 2 > linewidth) {
      out += ",\n" + std::string(static_cast<size_t>(indent), ' ') + suffix;
      last_line_len = indent + len;
    } else {
      out += ", " + suffix;
      last_line_len += len + 2;
    }
  }
  return out + ")";
}

std::string dtype_suffix(DType dtype) { return "dtype=torch." + std::string(dtype_name(dtype)); }

}  // namespace

PrintOptions& print_options() {
  static PrintOptions options;
  return options;
}

std::string format_tensor(const Tensor& t) {
  if (!t.defined()) return "None";
  const PrintOptions& opts = print_options();
  const std::string prefix = "tensor(";
  const int64_t indent = static_cast<int64_t>(prefix.size());
  std::vector<std::string> suffixes;
  if (!t.device().is_cpu()) suffixes.push_back("device='" + t.device().str() + "'");
  std::string body;
  if (t.numel() == 0) {
    if (t.dim() != 1) suffixes.push_back("size=" + python_tuple(t.sizes()));
    if (t.dtype() != DType::Float32) suffixes.push_back(dtype_suffix(t.dtype()));
    body = "[]";
  } else {
    if (t.dtype() == DType::Float64) suffixes.push_back(dtype_suffix(t.dtype()));
    Tensor cpu = t;
    if (!t.device().is_cpu()) {
      cpu = Tensor::empty(t.sizes(), t.dtype(), kCPU);
      copy_into(cpu, t);
    }
    body = TensorPrinter(cpu, opts).str(indent);
  }
  AutogradMetaBase* meta = t.impl()->autograd_meta();
  std::string grad_fn = meta ? meta->grad_fn_name() : "";
  if (!grad_fn.empty())
    suffixes.push_back("grad_fn=<" + grad_fn + ">");
  else if (t.requires_grad())
    suffixes.push_back("requires_grad=True");
  return add_suffixes(prefix + body, suffixes, indent, opts.linewidth);
}

}  // namespace tsl
