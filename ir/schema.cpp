// A small recursive-descent parser for the schema strings of runtime/ops.def.
#include "ir/schema.h"

#include <cctype>
#include <mutex>

namespace tsl {
namespace {

class SchemaParser {
 public:
  SchemaParser(OpId op, std::string_view text) : op_(op), text_(text) {}

  FunctionSchema parse() {
    FunctionSchema s;
    s.op = op_;
    s.name = identifier_with_dots();
    s.base_name = s.name.substr(0, s.name.find('.'));
    expect('(');
    bool kwarg_only = false;
    skip_ws();
    if (!accept(')')) {
      for (;;) {
        skip_ws();
        if (accept('*')) {
          kwarg_only = true;
        } else {
          Argument a = argument();
          a.kwarg_only = kwarg_only;
          s.arguments.push_back(std::move(a));
        }
        skip_ws();
        if (accept(')')) break;
        expect(',');
      }
    }
    skip_ws();
    expect('-');
    expect('>');
    skip_ws();
    if (text_.substr(pos_).starts_with("...")) {
      s.variadic_returns = true;
      pos_ += 3;
    } else if (accept('(')) {
      for (;;) {
        skip_ws();
        Argument r;
        r.type = type();
        skip_ws();
        if (std::isalpha(static_cast<unsigned char>(peek()))) r.name = identifier();
        s.returns.push_back(std::move(r));
        skip_ws();
        if (accept(')')) break;
        expect(',');
      }
    } else {
      Argument r;
      r.type = type();
      if (r.type->kind() != TypeKind::None) s.returns.push_back(std::move(r));
    }
    skip_ws();
    if (pos_ != text_.size()) fail("trailing text");
    return s;
  }

 private:
  Argument argument() {
    Argument a;
    fixed_size_ = 0;
    a.type = type();
    a.fixed_size = fixed_size_;
    skip_ws();
    if (text_.substr(pos_).starts_with("...")) {
      a.variadic = true;
      pos_ += 3;
      skip_ws();
    }
    a.name = identifier();
    skip_ws();
    if (accept('=')) {
      skip_ws();
      a.default_value = default_value();
      if (a.fixed_size && a.default_value->is_int()) {
        a.default_value = IValue::int_list(
            std::vector<int64_t>(static_cast<size_t>(a.fixed_size), a.default_value->to_int()));
      }
    }
    return a;
  }

  TypePtr type() {
    std::string base = identifier();
    TypePtr t;
    if (base == "Dict" || base == "Tuple")
      t = parenthesized_type(base);
    else if (base == "Tensor")
      t = Type::tensor();
    else if (base == "int")
      t = Type::int_();
    else if (base == "float")
      t = Type::float_();
    else if (base == "bool")
      t = Type::bool_();
    else if (base == "str")
      t = Type::str_();
    else if (base == "Scalar")
      t = Type::number();
    else if (base == "ScalarType")
      t = Type::dtype();
    else if (base == "Device")
      t = Type::device();
    else if (base == "Any")
      t = Type::any();
    else if (base == "Node")
      t = Type::node();
    else if (base == "t")
      t = Type::var();
    else if (base == "None")
      t = Type::none();
    else
      fail("unknown type " + base);
    for (;;) {
      if (accept('?')) {
        t = Type::optional(t);
      } else if (text_.substr(pos_).starts_with("[]")) {
        pos_ += 2;
        t = Type::list(t);
      } else if (peek() == '[' && pos_ + 1 < text_.size() &&
                 std::isdigit(static_cast<unsigned char>(text_[pos_ + 1]))) {
        ++pos_;
        fixed_size_ = std::stoi(number_text());
        expect(']');
        t = Type::list(t);
      } else {
        return t;
      }
    }
  }

  // Dict(str, t) and Tuple(str, t): TorchScript's notation.
  TypePtr parenthesized_type(const std::string& base) {
    expect('(');
    std::vector<TypePtr> elems;
    for (;;) {
      skip_ws();
      elems.push_back(type());
      skip_ws();
      if (accept(')')) break;
      expect(',');
    }
    if (base == "Tuple") return Type::tuple(std::move(elems));
    if (elems.size() != 2) fail("Dict takes a key and a value type");
    return Type::dict(elems[0], elems[1]);
  }

  IValue default_value() {
    if (accept('[')) {
      std::vector<int64_t> values;
      skip_ws();
      while (!accept(']')) {
        values.push_back(std::stoll(number_text()));
        skip_ws();
        accept(',');
        skip_ws();
      }
      return IValue::int_list(values);
    }
    if (accept('\'')) {
      std::string s;
      while (peek() != '\'') {
        char c = next();
        if (c == '\\') {
          char e = next();
          s += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        } else {
          s += c;
        }
      }
      expect('\'');
      return IValue(s);
    }
    if (std::isalpha(static_cast<unsigned char>(peek()))) {
      std::string word = identifier();
      if (word == "None") return IValue();
      if (word == "True") return IValue(true);
      if (word == "False") return IValue(false);
      fail("bad default " + word);
    }
    std::string num = number_text();
    if (num.find_first_of(".eE") != std::string::npos) return IValue(std::stod(num));
    return IValue(static_cast<int64_t>(std::stoll(num)));
  }

  std::string number_text() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
            text_[pos_] == '-' || text_[pos_] == 'e')) {
      ++pos_;
    }
    if (start == pos_) fail("expected a number");
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string identifier_with_dots() {
    std::string out = identifier();
    while (accept('.')) out += "." + identifier();
    return out;
  }

  std::string identifier() {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (start == pos_) fail("expected an identifier");
    return std::string(text_.substr(start, pos_ - start));
  }

  void skip_ws() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  char next() {
    if (pos_ >= text_.size()) fail("unexpected end");
    return text_[pos_++];
  }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw InternalError(__FILE__, __LINE__,
                        str("malformed schema `", text_, "` at ", pos_, ": ", why));
  }

  OpId op_;
  std::string_view text_;
  size_t pos_ = 0;
  int fixed_size_ = 0;  // of the list type type() parsed last
};

}  // namespace

FunctionSchema parse_schema(OpId op, std::string_view text) {
  return SchemaParser(op, text).parse();
}

const FunctionSchema& schema_of(OpId op) {
  static const std::vector<FunctionSchema>* all = [] {
    auto* v = new std::vector<FunctionSchema>();
    v->reserve(kNumOps);
    for (int i = 0; i < kNumOps; ++i) {
      OpId id = static_cast<OpId>(i);
      v->push_back(parse_schema(id, op_info(id).schema));
    }
    return v;
  }();
  return (*all)[static_cast<int>(op)];
}

int FunctionSchema::variadic_index() const {
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].variadic) return static_cast<int>(i);
  }
  return -1;
}

std::string FunctionSchema::str() const {
  std::string out = name + "(";
  bool kw = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Argument& a = arguments[i];
    if (i) out += ", ";
    if (a.kwarg_only && !kw) {
      out += "*, ";
      kw = true;
    }
    out += a.type->str() + (a.variadic ? "..." : "") + " " + a.name;
    if (a.default_value) out += "=" + a.default_value->repr();
  }
  out += ") -> ";
  if (variadic_returns) return out + "...";
  if (returns.empty()) return out + "None";
  if (returns.size() == 1) return out + returns[0].type->str();
  out += "(";
  for (size_t i = 0; i < returns.size(); ++i) {
    if (i) out += ", ";
    out += returns[i].type->str();
  }
  return out + ")";
}

}  // namespace tsl
