// Kernels of output and files: print, str.format (Python's format-spec mini-language,
// also behind f-strings), save/load of NumPy .npy files and load_csv.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include <zlib.h>

#include "runtime/kernels/files.h"
#include "runtime/kernels/format_spec.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/output.h"
#include "runtime/kernels/plot.h"
#include "runtime/tensor/device_backend.h"

namespace tsl {

namespace {
std::ostream* g_program_output = nullptr;
PublishedGlobals* g_published = nullptr;
}  // namespace

PublishedGlobals* set_published_globals(PublishedGlobals* sink) {
  PublishedGlobals* old = g_published;
  g_published = sink;
  return old;
}

std::ostream& program_output() { return g_program_output ? *g_program_output : std::cout; }

std::ostream* set_program_output(std::ostream* out) {
  std::ostream* old = g_program_output;
  g_program_output = out;
  return old;
}

namespace {

// Note [Top-level assignments survive errors] in output.h.
void publish_global(KernelArgs& a) {
  if (!g_published) return;
  auto slot = static_cast<size_t>(a.in(0).to_int());
  if (slot >= g_published->values.size()) return;
  g_published->values[slot] = a.in(1);
  g_published->stored[slot] = 1;
  if (a.num_outputs() > 0) a.out(0) = IValue();
}

// print(*values, sep=' ', end='\n'): the schema puts sep and end after the values.
void print_kernel(KernelArgs& a) {
  uint32_t n = a.num_inputs();
  TSL_INTERNAL_ASSERT(n >= 2, "print: sep and end are always passed");
  const std::string& sep = a.in(n - 2).is_none() ? std::string(" ") : a.in(n - 2).to_str();
  const std::string& end = a.in(n - 1).is_none() ? std::string("\n") : a.in(n - 1).to_str();
  std::string line;
  for (uint32_t i = 0; i + 2 < n; ++i) {
    if (i) line += sep;
    line += a.in(i).str();
  }
  line += end;
  std::ostream& out = program_output();
  out << line;
  // Keep the order of stdout and stderr when both go to one terminal or file.
  if (end.find('\n') != std::string::npos) out.flush();
  if (a.num_outputs() > 0) a.out(0) = IValue();
}

// '{} and {:.3f}'.format(a, b): replacement fields {}, {0}, {!r}, {:spec}; {{ and }}
// are literal braces.
void format_kernel(KernelArgs& a) {
  const std::string& templ = a.in(0).to_str();
  VarArgs args{&a, 1};
  std::string out;
  uint32_t next_auto = 0;
  for (size_t i = 0; i < templ.size(); ++i) {
    char c = templ[i];
    if (c == '}') {
      TSL_CHECK(i + 1 < templ.size() && templ[i + 1] == '}',
                "Single '}' encountered in format string");
      out += '}';
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < templ.size() && templ[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    size_t close = templ.find('}', i);
    TSL_CHECK(close != std::string::npos, "Single '{' encountered in format string");
    std::string field = templ.substr(i + 1, close - i - 1);
    i = close;
    std::string spec, conversion;
    size_t colon = field.find(':');
    if (colon != std::string::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    size_t bang = field.find('!');
    if (bang != std::string::npos) {
      conversion = field.substr(bang + 1);
      field = field.substr(0, bang);
    }
    uint32_t index = next_auto;
    if (field.empty()) {
      ++next_auto;
    } else {
      bool digits = field.find_first_not_of("0123456789") == std::string::npos;
      TSL_CHECK(digits, "format: only positional fields ({} or {0}) are supported, got {", field,
                "}");
      index = static_cast<uint32_t>(std::stoul(field));
    }
    TSL_CHECK(index < args.size(), "Replacement index ", index,
              " out of range for positional args tuple");
    IValue v = args[index];
    if (conversion == "r")
      v = IValue(v.repr());
    else if (conversion == "s")
      v = IValue(v.str());
    else
      TSL_CHECK(conversion.empty(), "Unknown conversion specifier ", conversion);
    out += format_value(v, spec);
  }
  a.out(0) = IValue(std::move(out));
}

// ---- printf-style formatting: "%5.2f and %s" % (x, name) ------------------------------

// One conversion of Python's %-formatting turned into format() of the format-spec
// language: flags (- + space # 0), width, precision and the type letter.
std::string percent_conversion(const IValue& v, const std::string& flags, const std::string& width,
                               const std::string& precision, char type) {
  std::string spec;
  bool left = flags.find('-') != std::string::npos;
  if (left) spec += '<';
  if (flags.find('+') != std::string::npos)
    spec += '+';
  else if (flags.find(' ') != std::string::npos)
    spec += ' ';
  if (flags.find('#') != std::string::npos) spec += '#';
  if (!left && flags.find('0') != std::string::npos && type != 's' && type != 'r') spec += '0';
  spec += width;
  switch (type) {
    case 's':
    case 'r': {
      std::string text = type == 'r' ? v.repr() : v.str();
      if (!precision.empty()) text = text.substr(0, std::stoul(precision));
      return format_value(IValue(text), (left ? "<" : ">") + width);
    }
    case 'd':
    case 'i':
    case 'u': {
      // %d truncates floats toward zero, as int() does.
      IValue n = v;
      if (v.is_double()) {
        TSL_CHECK(std::isfinite(v.to_double()), "cannot convert float ", v.str(), " to integer");
        n = IValue(static_cast<int64_t>(std::trunc(v.to_double())));
      }
      TSL_CHECK(n.is_int() || n.is_bool(), "%d format: a real number is required, not ",
                v.tag_name());
      return format_value(n.is_bool() ? IValue(int64_t(n.to_bool())) : n, spec + "d");
    }
    case 'x':
    case 'X':
    case 'o': {
      TSL_CHECK(v.is_int() || v.is_bool(), "%", type, " format: an integer is required, not ",
                v.tag_name());
      return format_value(v, spec + type);
    }
    case 'c':
      TSL_CHECK(v.is_str() && v.to_str().size() == 1, "%c requires int or char");
      return v.to_str();
    default: {
      // e E f F g G: floats (ints convert).
      IValue x = v.is_int() ? IValue(static_cast<double>(v.to_int())) : v;
      std::string p = precision.empty() ? "6" : precision;
      return format_value(x, spec + "." + p + type);
    }
  }
}

void percent_format_kernel(KernelArgs& a) {
  const std::string& templ = a.in(0).to_str();
  const IValue& arg = a.in(1);
  std::vector<IValue> args;
  if (arg.is_tuple())
    args = arg.to_tuple();
  else
    args.push_back(arg);
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < templ.size(); ++i) {
    char c = templ[i];
    if (c != '%') {
      out += c;
      continue;
    }
    TSL_CHECK(i + 1 < templ.size(), "incomplete format");
    if (templ[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t j = i + 1;
    TSL_CHECK(templ[j] != '(', "format requires a mapping: %(name)s is not supported");
    std::string flags, width, precision;
    while (j < templ.size() && std::string("-+ #0").find(templ[j]) != std::string::npos)
      flags += templ[j++];
    while (j < templ.size() && std::isdigit(static_cast<unsigned char>(templ[j])))
      width += templ[j++];
    if (j < templ.size() && templ[j] == '.') {
      ++j;
      while (j < templ.size() && std::isdigit(static_cast<unsigned char>(templ[j])))
        precision += templ[j++];
      if (precision.empty()) precision = "0";
    }
    TSL_CHECK(j < templ.size(), "incomplete format");
    char type = templ[j];
    TSL_CHECK(std::string("diuoxXeEfFgGcrsa").find(type) != std::string::npos,
              "unsupported format character '", std::string(1, type), "'");
    TSL_CHECK(next < args.size(), "not enough arguments for format string");
    out += percent_conversion(args[next++], flags, width, precision, type == 'a' ? 'r' : type);
    i = j;
  }
  TSL_CHECK(next == args.size(), "not all arguments converted during string formatting");
  a.out(0) = IValue(std::move(out));
}

// ---- NumPy .npy -----------------------------------------------------------------------
// Format 1.0: magic "\x93NUMPY", version, a little-endian header length, then a
// Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces so the data starts at a multiple of 64 bytes.

const char* npy_descr(DType t) {
  switch (t) {
    case DType::Bool:
      return "|b1";
    case DType::Int64:
      return "<i8";
    case DType::Float32:
      return "<f4";
    case DType::Float64:
      return "<f8";
  }
  return "";
}

void save_npy(std::string path, Tensor t) {
  TSL_CHECK(t.defined(), "save: the tensor is undefined");
  // A tensor on a device is saved by value; load gives it back on the CPU.
  Tensor c = copy_to_device(t, kCPU).contiguous();
  std::string shape = "(";
  for (int64_t d = 0; d < c.dim(); ++d)
    shape += std::to_string(c.sizes()[d]) + (c.dim() == 1 ? "," : (d + 1 < c.dim() ? ", " : ""));
  shape += ")";
  std::string header = std::string("{'descr': '") + npy_descr(c.dtype()) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string bytes("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  bytes += static_cast<char>(len & 0xff);
  bytes += static_cast<char>(len >> 8);
  bytes += header;
  bytes.append(static_cast<const char*>(c.raw_data()), c.nbytes());
  write_file_or_throw(path, bytes, "save");
}

// The value of `key` in the header dict, as text.
std::string header_field(const std::string& header, const std::string& key,
                         const std::string& path) {
  size_t k = header.find("'" + key + "'");
  TSL_CHECK(k != std::string::npos, "load: '", path, "' is not a valid .npy file (no '", key, "')");
  size_t colon = header.find(':', k);
  TSL_CHECK(colon != std::string::npos, "load: '", path, "' has a malformed header");
  size_t start = header.find_first_not_of(' ', colon + 1);
  TSL_CHECK(start != std::string::npos, "load: '", path, "' has a malformed header");
  size_t end;
  if (header[start] == '(')
    end = header.find(')', start) + 1;
  else if (header[start] == '\'')
    end = header.find('\'', start + 1) + 1;
  else
    end = header.find_first_of(",}", start);
  TSL_CHECK(end != std::string::npos && end > start, "load: '", path, "' has a malformed header");
  return header.substr(start, end - start);
}

struct NpyType {
  DType dtype;  // what TSL makes of it
  char kind;    // 'f', 'i', 'u', 'b'
  size_t size;  // bytes per element in the file
  bool swap;    // big-endian in the file
};

NpyType parse_descr(std::string descr, const std::string& path) {
  TSL_CHECK(descr.size() >= 5 && descr.front() == '\'' && descr.back() == '\'', "load: '", path,
            "' has an unsupported dtype ", descr);
  descr = descr.substr(1, descr.size() - 2);
  char order = descr[0];
  char kind = descr[1];
  size_t size = static_cast<size_t>(std::atoi(descr.c_str() + 2));
  bool swap = order == '>' && size > 1;
  if (kind == 'f' && (size == 4 || size == 8))
    return {size == 4 ? DType::Float32 : DType::Float64, kind, size, swap};
  if (kind == 'i' && (size == 1 || size == 2 || size == 4 || size == 8))
    return {DType::Int64, kind, size, swap};
  if (kind == 'u' && (size == 1 || size == 2 || size == 4)) return {DType::Int64, kind, size, swap};
  if (kind == 'b' && size == 1) return {DType::Bool, kind, size, false};
  TSL_ERROR("load: '", path, "' holds dtype '", descr,
            "', which TSL does not read (float32, float64, signed and unsigned ints, bool)");
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& path) {
  std::vector<int64_t> shape;
  std::string inner = text.substr(1, text.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    char* end = nullptr;
    long long v = std::strtoll(item.c_str() + b, &end, 10);
    TSL_CHECK(end != item.c_str() + b && v >= 0, "load: '", path, "' has a malformed shape ", text);
    shape.push_back(v);
  }
  return shape;
}

// Reads one element of the file's type into the TSL element at `out`.
template <typename T>
void convert_element(const unsigned char* p, const NpyType& t, T* out) {
  unsigned char buf[8];
  for (size_t i = 0; i < t.size; ++i) buf[i] = t.swap ? p[t.size - 1 - i] : p[i];
  if (t.kind == 'f') {
    if (t.size == 4) {
      float f;
      std::memcpy(&f, buf, 4);
      *out = static_cast<T>(f);
    } else {
      double d;
      std::memcpy(&d, buf, 8);
      *out = static_cast<T>(d);
    }
  } else if (t.kind == 'b') {
    *out = static_cast<T>(buf[0] != 0);
  } else {
    int64_t v = 0;
    if (t.kind == 'i') {
      if (t.size == 1) {
        int8_t x;
        std::memcpy(&x, buf, 1);
        v = x;
      } else if (t.size == 2) {
        int16_t x;
        std::memcpy(&x, buf, 2);
        v = x;
      } else if (t.size == 4) {
        int32_t x;
        std::memcpy(&x, buf, 4);
        v = x;
      } else {
        std::memcpy(&v, buf, 8);
      }
    } else {
      if (t.size == 1)
        v = buf[0];
      else if (t.size == 2) {
        uint16_t x;
        std::memcpy(&x, buf, 2);
        v = x;
      } else {
        uint32_t x;
        std::memcpy(&x, buf, 4);
        v = x;
      }
    }
    *out = static_cast<T>(v);
  }
}

Tensor load_npy_cpu(const std::string& path) {
  std::string data = read_file_or_throw(path, "load");
  TSL_CHECK(data.size() >= 10 && data.compare(0, 6, "\x93NUMPY") == 0, "load: '", path,
            "' is not a NumPy .npy file");
  auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(data[i])); };
  int major = static_cast<int>(byte(6));
  size_t header_len, header_start;
  if (major == 1) {
    header_len = byte(8) | (byte(9) << 8);
    header_start = 10;
  } else {
    TSL_CHECK(data.size() >= 12, "load: '", path, "' is truncated");
    header_len = byte(8) | (byte(9) << 8) | (byte(10) << 16) | (byte(11) << 24);
    header_start = 12;
  }
  TSL_CHECK(data.size() >= header_start + header_len, "load: '", path, "' is truncated");
  std::string header = data.substr(header_start, header_len);
  NpyType type = parse_descr(header_field(header, "descr", path), path);
  bool fortran = header_field(header, "fortran_order", path) == "True";
  std::vector<int64_t> shape = parse_shape(header_field(header, "shape", path), path);
  int64_t n = checked_numel(shape);
  size_t offset = header_start + header_len;
  TSL_CHECK(data.size() - offset >= static_cast<size_t>(n) * type.size, "load: '", path,
            "' is truncated: ", n, " elements expected");
  // A Fortran-order array is the row-major array of the reversed shape, transposed.
  std::vector<int64_t> file_shape(shape.rbegin(), shape.rend());
  Tensor t = Tensor::empty(fortran ? file_shape : shape, type.dtype);
  const auto* src = reinterpret_cast<const unsigned char*>(data.data() + offset);
  TSL_DISPATCH_ALL(type.dtype, "load", [&] {
    scalar_t* out = t.data_ptr<scalar_t>();
    for (int64_t i = 0; i < n; ++i) convert_element(src + i * type.size, type, out + i);
  });
  if (!fortran || t.dim() < 2) return t;
  DimVector strides;
  for (int64_t d = t.dim() - 1; d >= 0; --d) strides.push_back(t.strides()[d]);
  return t.as_strided(shape, strides.span(), 0).contiguous();
}

// The bytes of a gzip file (RFC 1952), all members; a corrupt or truncated stream is a
// user error naming the path.
std::string gunzip(const std::string& data, const std::string& path) {
  z_stream z{};
  // 16 + MAX_WBITS: a gzip header and trailer around the deflate stream.
  TSL_CHECK(data.size() < (1ULL << 32), "load_csv: '", path, "' is over 4 GB compressed");
  TSL_CHECK(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK, "load_csv: cannot start zlib");
  std::string out;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  char buf[1 << 16];
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_STREAM_END && z.avail_in > 0) {
      inflateReset(&z);  // concatenated gzip members
      continue;
    }
    if (rc != Z_OK) break;
  }
  std::string why = z.msg ? z.msg : "truncated stream";
  inflateEnd(&z);
  TSL_CHECK(rc == Z_STREAM_END, "load_csv: '", path, "' is not a valid gzip file (", why, ")");
  return out;
}

// A CSV of numbers: one row per line, the same number of columns in each row; a
// gzip-compressed file (by its magic bytes, whatever its name) is read uncompressed.
Tensor load_csv_cpu(const std::string& path, bool skip_header) {
  std::string bytes = read_file_or_throw(path, "load_csv");
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b) {
    bytes = gunzip(bytes, path);
  }
  std::istringstream f(std::move(bytes));
  std::vector<float> values;
  int64_t cols = -1, rows = 0, line_no = 0;
  std::string line;
  while (std::getline(f, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (skip_header && line_no == 1) continue;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    int64_t count = 0;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) {
      size_t b = cell.find_first_not_of(" \t");
      size_t e = cell.find_last_not_of(" \t");
      std::string text = b == std::string::npos ? "" : cell.substr(b, e - b + 1);
      char* end = nullptr;
      double v = std::strtod(text.c_str(), &end);
      TSL_CHECK(!text.empty() && end == text.c_str() + text.size(), "load_csv: '", path, "' line ",
                line_no, ": '", text, "' is not a number");
      values.push_back(static_cast<float>(v));
      ++count;
    }
    if (!line.empty() && line.back() == ',')
      TSL_ERROR("load_csv: '", path, "' line ", line_no, ": empty last cell");
    TSL_CHECK(cols < 0 || count == cols, "load_csv: '", path, "' line ", line_no, " has ", count,
              " columns, earlier lines have ", cols);
    cols = count;
    ++rows;
  }
  int64_t shape[2] = {rows, cols < 0 ? 0 : cols};
  return Tensor::from_vector(values, shape);
}

// A loaded tensor is a new tensor: on the default device (`tsl --device cuda`).
Tensor load_npy(std::string path) { return copy_to_device(load_npy_cpu(path), default_device()); }
Tensor load_csv(std::string path, bool skip_header) {
  return copy_to_device(load_csv_cpu(path, skip_header), default_device());
}

}  // namespace

void register_io_kernels() {
  TSL_REGISTER_GENERIC_RAW(print, print_kernel);
  TSL_REGISTER_GENERIC_RAW(PublishGlobal, publish_global);
  TSL_REGISTER_GENERIC_RAW(format, format_kernel);
  TSL_REGISTER_GENERIC_RAW(mod_str, percent_format_kernel);
  TSL_REGISTER_GENERIC(save, save_npy);
  TSL_REGISTER_GENERIC(load, load_npy);
  TSL_REGISTER_GENERIC(load_csv, load_csv);
  TSL_REGISTER_GENERIC(plot, plot_kernel);
  TSL_REGISTER_GENERIC(plot_list, plot_list_kernel);
}

}  // namespace tsl
