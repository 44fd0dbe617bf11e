// Python's format-spec mini-language; see format_spec.h.
#include "runtime/kernels/format_spec.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace tsl {
namespace {

struct Spec {
  char fill = ' ';
  char align = 0;  // '<', '>', '^', '=' or 0 (the type's default)
  char sign = '-';
  bool alternate = false;
  int width = -1;
  char grouping = 0;  // ',' or '_'
  int precision = -1;
  char type = 0;
};

bool is_align(char c) { return c == '<' || c == '>' || c == '^' || c == '='; }

int parse_number(const std::string& s, size_t& i) {
  int v = 0;
  bool any = false;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    v = v * 10 + (s[i++] - '0');
    TSL_CHECK(v < 100000, "format spec '", s, "': width or precision too big");
    any = true;
  }
  return any ? v : -1;
}

Spec parse_spec(const std::string& s) {
  Spec spec;
  size_t i = 0;
  if (s.size() >= 2 && is_align(s[1])) {
    spec.fill = s[0];
    spec.align = s[1];
    i = 2;
  } else if (!s.empty() && is_align(s[0])) {
    spec.align = s[0];
    i = 1;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) spec.sign = s[i++];
  if (i < s.size() && s[i] == '#') {
    spec.alternate = true;
    ++i;
  }
  if (i < s.size() && s[i] == '0') {
    if (!spec.align) {
      spec.fill = '0';
      spec.align = '=';
    }
    ++i;
  }
  spec.width = parse_number(s, i);
  if (i < s.size() && (s[i] == ',' || s[i] == '_')) spec.grouping = s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    spec.precision = parse_number(s, i);
    TSL_CHECK(spec.precision >= 0, "Format specifier missing precision");
  }
  if (i < s.size()) spec.type = s[i++];
  TSL_CHECK(i == s.size(), "Invalid format specifier '", s, "'");
  return spec;
}

// Inserts the grouping character every three digits of the integer part.
std::string group_digits(const std::string& digits, char sep) {
  if (!sep) return digits;
  size_t end = digits.find_first_not_of("0123456789");
  if (end == std::string::npos) end = digits.size();
  std::string head = digits.substr(0, end), out;
  for (size_t k = 0; k < head.size(); ++k) {
    if (k && (head.size() - k) % 3 == 0) out += sep;
    out += head[k];
  }
  return out + digits.substr(end);
}

// Pads `body` (digits without sign) with the sign in front, per align and width.
std::string pad(const std::string& sign, const std::string& body, const Spec& spec,
                char default_align) {
  std::string text = sign + body;
  int len = static_cast<int>(text.size());
  if (spec.width <= len) return text;
  size_t fill = static_cast<size_t>(spec.width - len);
  char align = spec.align ? spec.align : default_align;
  switch (align) {
    case '<':
      return text + std::string(fill, spec.fill);
    case '^':
      return std::string(fill / 2, spec.fill) + text + std::string(fill - fill / 2, spec.fill);
    case '=':
      return sign + std::string(fill, spec.fill) + body;
    default:
      return std::string(fill, spec.fill) + text;
  }
}

std::string sign_text(bool negative, char sign) {
  if (negative) return "-";
  if (sign == '+') return "+";
  if (sign == ' ') return " ";
  return "";
}

std::string format_int(int64_t v, const Spec& spec) {
  char type = spec.type ? spec.type : 'd';
  if (type == 'e' || type == 'E' || type == 'f' || type == 'F' || type == 'g' || type == 'G' ||
      type == '%') {
    TSL_INTERNAL_ASSERT(false, "ints with float types are converted by the caller");
  }
  TSL_CHECK(spec.precision < 0, "Precision not allowed in integer format specifier");
  bool negative = v < 0;
  uint64_t mag = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  std::string digits, prefix;
  switch (type) {
    case 'd':
    case 'n':
      digits = std::to_string(mag);
      break;
    case 'x':
    case 'X':
    case 'o':
    case 'b': {
      int base = type == 'o' ? 8 : type == 'b' ? 2 : 16;
      const char* alphabet = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
      do {
        digits.insert(digits.begin(), alphabet[mag % base]);
        mag /= base;
      } while (mag);
      if (spec.alternate)
        prefix = type == 'o' ? "0o" : type == 'b' ? "0b" : (type == 'X' ? "0X" : "0x");
      break;
    }
    case 'c':
      TSL_ERROR("format code 'c' is not supported in TSL");
    default:
      TSL_ERROR("Unknown format code '", type, "' for object of type 'int'");
  }
  return pad(sign_text(negative, spec.sign) + prefix, group_digits(digits, spec.grouping), spec,
             '>');
}

std::string printf_double(const char* fmt_type, int precision, double v, bool alternate) {
  char fmt[16];
  std::snprintf(fmt, sizeof fmt, "%%%s.%d%s", alternate ? "#" : "", precision, fmt_type);
  char buf[512];
  int n = std::snprintf(buf, sizeof buf, fmt, v);
  if (n >= 0 && n < static_cast<int>(sizeof buf)) return std::string(buf, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(big.data(), big.size(), fmt, v);
  big.resize(static_cast<size_t>(n));
  return big;
}

std::string format_float(double v, const Spec& spec) {
  char type = spec.type;
  bool negative = std::signbit(v) && !std::isnan(v);
  double mag = std::fabs(v);
  std::string body;
  bool upper = type == 'E' || type == 'F' || type == 'G';
  if (std::isnan(mag) || std::isinf(mag)) {
    body = std::isnan(mag) ? "nan" : "inf";
    if (upper) body = std::isnan(mag) ? "NAN" : "INF";
    if (type == '%') body += "%";
  } else {
    int p = spec.precision < 0 ? 6 : spec.precision;
    switch (type) {
      case 'e':
      case 'E':
        body = printf_double(upper ? "E" : "e", p, mag, spec.alternate);
        break;
      case 'f':
      case 'F':
        body = printf_double("f", p, mag, spec.alternate);
        break;
      case 'g':
      case 'G':
      case 'n':
        body = printf_double(upper ? "G" : "g", p == 0 ? 1 : p, mag, spec.alternate);
        break;
      case '%':
        body = printf_double("f", p, mag * 100, spec.alternate) + "%";
        break;
      case 0:
        if (spec.precision < 0) {
          body = python_float_repr(mag);
        } else {
          // Like 'g', but a fixed-point result keeps one digit after the point.
          body = printf_double("g", p == 0 ? 1 : p, mag, spec.alternate);
          if (body.find_first_of(".e") == std::string::npos) body += ".0";
        }
        break;
      default:
        TSL_ERROR("Unknown format code '", type, "' for object of type 'float'");
    }
  }
  return pad(sign_text(negative, spec.sign), group_digits(body, spec.grouping), spec, '>');
}

std::string format_str(const std::string& s, const Spec& spec) {
  TSL_CHECK(spec.type == 0 || spec.type == 's', "Unknown format code '", spec.type,
            "' for object of type 'str'");
  TSL_CHECK(spec.sign == '-', "Sign not allowed in string format specifier");
  TSL_CHECK(spec.align != '=', "'=' alignment not allowed in string format specifier");
  std::string text = s;
  if (spec.precision >= 0 && static_cast<size_t>(spec.precision) < text.size())
    text.resize(spec.precision);
  return pad("", text, spec, '<');
}

bool is_float_type(char t) {
  return t == 'e' || t == 'E' || t == 'f' || t == 'F' || t == 'g' || t == 'G' || t == '%';
}

}  // namespace

std::string format_value(const IValue& value, const std::string& spec_text) {
  if (value.is_tensor() && value.tensor_impl() != nullptr && value.tensor_impl()->dim() == 0) {
    return format_value(IValue(value.to_tensor().item()), spec_text);
  }
  if (spec_text.empty()) return value.str();
  Spec spec = parse_spec(spec_text);
  switch (value.tag()) {
    case IValue::Tag::Bool:
    case IValue::Tag::Int: {
      int64_t v = value.is_bool() ? (value.to_bool() ? 1 : 0) : value.to_int();
      if (is_float_type(spec.type)) return format_float(static_cast<double>(v), spec);
      return format_int(v, spec);
    }
    case IValue::Tag::Double:
      return format_float(value.to_double(), spec);
    case IValue::Tag::Str:
      return format_str(value.to_str(), spec);
    default:
      TSL_ERROR("unsupported format string passed to ", value.tag_name(), ".__format__");
  }
}

}  // namespace tsl
