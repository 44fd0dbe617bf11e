// IValue construction, conversion and Python-style printing of non-tensor values.
#include "runtime/tensor/ivalue.h"

#include <charconv>
#include <cmath>

#include "runtime/tensor/tensor_print.h"

namespace tsl {

ListImpl::ListImpl() = default;
ListImpl::ListImpl(std::vector<IValue> v) : elements(std::move(v)) {}
ListImpl::~ListImpl() = default;
TupleImpl::TupleImpl(std::vector<IValue> v) : elements(std::move(v)) {}
TupleImpl::~TupleImpl() = default;

size_t DictKeyHash::operator()(const IValue& key) const {
  if (key.is_str()) return std::hash<std::string>{}(key.to_str());
  return std::hash<int64_t>{}(key.to_int());
}

bool DictKeyEqual::operator()(const IValue& a, const IValue& b) const {
  if (a.is_str() != b.is_str()) return false;
  return a.is_str() ? a.to_str() == b.to_str() : a.to_int() == b.to_int();
}

const IValue* DictImpl::find(const IValue& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

std::optional<size_t> DictImpl::position(const IValue& key) const {
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

void DictImpl::set(IValue key, IValue value) {
  auto [it, inserted] = index_.emplace(key, entries_.size());
  if (inserted) {
    entries_.emplace_back(std::move(key), std::move(value));
  } else {
    entries_[it->second].second = std::move(value);
  }
}

bool DictImpl::erase(const IValue& key, IValue* value) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  size_t at = it->second;
  index_.erase(it);
  if (value) *value = std::move(entries_[at].second);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(at));
  // The entries after it moved one place forward.
  for (size_t i = at; i < entries_.size(); ++i) index_[entries_[i].first] = i;
  return true;
}

void DictImpl::clear() {
  entries_.clear();
  index_.clear();
}

IValue::IValue(std::string v)
    : IValue(Tag::Str, make_intrusive<StrImpl>(std::move(v)).release_ownership()) {}

IValue::IValue(Tensor t) : tag_(Tag::Tensor) {
  IntrusivePtr<TensorImpl> impl = t.impl_ptr();
  payload_.p = impl.release_ownership();
}

IValue::IValue(Scalar s) {
  switch (s.kind()) {
    case ScalarKind::Bool:
      tag_ = Tag::Bool;
      payload_.i = s.to_bool() ? 1 : 0;
      break;
    case ScalarKind::Int:
      tag_ = Tag::Int;
      payload_.i = s.to_int();
      break;
    case ScalarKind::Float:
      tag_ = Tag::Double;
      payload_.d = s.to_double();
      break;
  }
}

IValue IValue::list(std::vector<IValue> elements) {
  return IValue(make_intrusive<ListImpl>(std::move(elements)));
}
IValue IValue::tuple(std::vector<IValue> elements) {
  return IValue(make_intrusive<TupleImpl>(std::move(elements)));
}
IValue IValue::dict() { return IValue(make_intrusive<DictImpl>()); }
IValue IValue::int_list(std::span<const int64_t> values) {
  std::vector<IValue> out;
  out.reserve(values.size());
  for (int64_t v : values) out.emplace_back(v);
  return list(std::move(out));
}

Scalar IValue::to_scalar() const {
  switch (tag_) {
    case Tag::Bool:
      return Scalar(payload_.i != 0);
    case Tag::Int:
      return Scalar(payload_.i);
    case Tag::Double:
      return Scalar(payload_.d);
    default:
      bad_tag(Tag::Double);
  }
}

std::vector<int64_t> IValue::to_int_vector() const {
  const std::vector<IValue>& elems = is_tuple() ? to_tuple() : to_list().elements;
  std::vector<int64_t> out;
  out.reserve(elems.size());
  for (const IValue& e : elems) out.push_back(e.to_int());
  return out;
}

std::vector<Tensor> IValue::to_tensor_vector() const {
  const std::vector<IValue>& elems = is_tuple() ? to_tuple() : to_list().elements;
  std::vector<Tensor> out;
  out.reserve(elems.size());
  for (const IValue& e : elems) out.push_back(e.to_tensor());
  return out;
}

const char* IValue::tag_name() const {
  switch (tag_) {
    case Tag::None:
      return "None";
    case Tag::Bool:
      return "bool";
    case Tag::Int:
      return "int";
    case Tag::Double:
      return "float";
    case Tag::DType:
      return "dtype";
    case Tag::Device:
      return "device";
    case Tag::Str:
      return "str";
    case Tag::Tensor:
      return "Tensor";
    case Tag::List:
      return "list";
    case Tag::Tuple:
      return "tuple";
    case Tag::Dict:
      return "dict";
    case Tag::Object:
      return "object";
  }
  return "?";
}

void IValue::bad_tag(Tag expected) const {
  IValue probe;
  probe.tag_ = expected;
  throw InternalError(__FILE__, __LINE__,
                      ::tsl::str("IValue holds ", tag_name(), ", expected ", probe.tag_name()));
}

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: positional for exponents in
  // [-4, 16), scientific with a two-digit exponent otherwise.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  size_t epos = sci.find('e');
  std::string mantissa = sci.substr(0, epos);
  int exp = std::stoi(sci.substr(epos + 1));
  bool negative = mantissa[0] == '-';
  if (negative) mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  std::string out;
  if (exp >= -4 && exp < 16) {
    int point = exp + 1;  // digits before the decimal point
    if (point <= 0) {
      out = "0." + std::string(-point, '0') + digits;
    } else if (point >= static_cast<int>(digits.size())) {
      out = digits + std::string(point - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, point) + "." + digits.substr(point);
    }
  }
  if (out.empty()) {
    std::string m = digits.substr(0, 1);
    if (digits.size() > 1) m += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    out = m + ebuf;
  }
  return negative ? "-" + out : out;
}

std::string IValue::repr() const {
  switch (tag_) {
    case Tag::Str: {
      // Python picks single quotes unless the text holds a single quote and no double.
      const std::string& s = to_str();
      char quote =
          (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
      std::string out(1, quote);
      for (char c : s) {
        switch (c) {
          case '\\':
            out += "\\\\";
            break;
          case '\n':
            out += "\\n";
            break;
          case '\t':
            out += "\\t";
            break;
          case '\r':
            out += "\\r";
            break;
          default:
            if (c == quote) out += '\\';
            out += c;
        }
      }
      return out + quote;
    }
    case Tag::List:
    case Tag::Tuple: {
      const auto& elems = is_list() ? to_list().elements : to_tuple();
      if (is_list() && to_list().torch_size) {
        std::string out = "torch.Size([";
        for (size_t i = 0; i < elems.size(); ++i) out += (i ? ", " : "") + elems[i].repr();
        return out + "])";
      }
      std::string out = is_list() ? "[" : "(";
      for (size_t i = 0; i < elems.size(); ++i) {
        if (i) out += ", ";
        out += elems[i].repr();
      }
      if (is_tuple() && elems.size() == 1) out += ",";
      out += is_list() ? "]" : ")";
      switch (is_list() ? to_list().view : ListImpl::View::None) {
        case ListImpl::View::DictKeys:
          return "dict_keys(" + out + ")";
        case ListImpl::View::DictValues:
          return "dict_values(" + out + ")";
        case ListImpl::View::DictItems:
          return "dict_items(" + out + ")";
        case ListImpl::View::None:
          break;
      }
      return out;
    }
    case Tag::Dict: {
      // Python: {'a': tensor([1., 2.]), 'b': 3}, keys and values by their repr.
      std::string out = "{";
      bool first = true;
      for (const auto& [key, value] : to_dict().entries()) {
        if (!first) out += ", ";
        first = false;
        out += key.repr() + ": " + value.repr();
      }
      return out + "}";
    }
    default:
      return str();
  }
}

std::string IValue::str() const {
  switch (tag_) {
    case Tag::None:
      return "None";
    case Tag::Bool:
      return payload_.i ? "True" : "False";
    case Tag::Int:
      return std::to_string(payload_.i);
    case Tag::Double:
      return python_float_repr(payload_.d);
    case Tag::DType:
      return "torch." + std::string(dtype_name(payload_.dtype));
    case Tag::Device:
      return payload_.device.str();
    case Tag::Str:
      return to_str();
    case Tag::Tensor: {
      if (payload_.p == nullptr) return "None";
      return format_tensor(to_tensor());
    }
    case Tag::List:
    case Tag::Tuple:
    case Tag::Dict:
      return repr();
    case Tag::Object:
      return to_object().repr();
  }
  return "?";
}

}  // namespace tsl
