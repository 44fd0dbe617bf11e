// The IR text parser: a recursive-descent parser over ir_lexer.h's tokens for the text
// print_graph writes (Note [IR text format] in ir_parser.h), with located errors.
#include "ir/ir_parser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "ir/ir_lexer.h"
#include "ir/ir_parser_calls.h"
#include "ir/schema.h"

namespace tsl {
namespace {

using ir_text::is_digit;
using ir_text::Tok;
using ir_text::Token;

// ---- Type checks of parsed nodes ------------------------------------------------------

// Whether a value of type `actual` may be an input where the schema says `formal`
// without a conversion node: the frontend inserts Float.int, ListConstruct, ... for
// the others, so a well-formed graph never needs them (see conversion_for in
// frontend/schema_matching.cpp). `var` binds the schema's type variable `t`.
bool accepts(const TypePtr& formal, const TypePtr& actual, bool nums, TypePtr& var) {
  switch (formal->kind()) {
    case TypeKind::Any:
      return true;
    case TypeKind::Var:
      if (!var) var = actual;
      return actual->equals(*var) || (var->kind() == TypeKind::Optional && is_subtype(actual, var));
    case TypeKind::Number:
      return actual->is_number() || actual->kind() == TypeKind::Number;
    case TypeKind::Tensor:
      return actual->is_tensor() || (nums && actual->is_number());
    case TypeKind::Optional:
      if (actual->kind() == TypeKind::None) return true;
      if (actual->kind() == TypeKind::Optional)
        return accepts(formal->element(), actual->element(), nums, var);
      return accepts(formal->element(), actual, nums, var);
    case TypeKind::List: {
      if (actual->kind() != TypeKind::List) return false;
      const TypePtr& elem = formal->element();
      if (elem->kind() == TypeKind::Var) {
        if (!var) var = actual->element();
        return actual->element()->equals(*var);
      }
      if (elem->kind() == TypeKind::Optional && actual->element()->is_tensor()) return true;
      return actual->element()->equals(*elem);
    }
    case TypeKind::Dict: {
      // Dict(str, t): the key type exactly, the value type binds `t`.
      if (actual->kind() != TypeKind::Dict || !actual->key()->equals(*formal->key())) return false;
      if (formal->value()->kind() != TypeKind::Var)
        return actual->value()->equals(*formal->value());
      if (!var) var = actual->value();
      return actual->value()->equals(*var);
    }
    default:
      return is_subtype(actual, formal);
  }
}

// The schema type with `t` replaced by its binding; null when it stays unknown.
TypePtr substitute(const TypePtr& t, const TypePtr& var) {
  switch (t->kind()) {
    case TypeKind::Var:
      return var;
    case TypeKind::Any:
    case TypeKind::Number:
      return nullptr;
    case TypeKind::List: {
      TypePtr e = substitute(t->element(), var);
      return e ? Type::list(e) : nullptr;
    }
    case TypeKind::Optional: {
      TypePtr e = substitute(t->element(), var);
      return e ? Type::optional(e) : nullptr;
    }
    case TypeKind::Dict: {
      TypePtr v = substitute(t->value(), var);
      return v ? Type::dict(t->key(), v) : nullptr;
    }
    case TypeKind::Tuple: {
      std::vector<TypePtr> elems;
      for (const TypePtr& c : t->contained()) {
        elems.push_back(substitute(c, var));
        if (!elems.back()) return nullptr;
      }
      return Type::tuple(std::move(elems));
    }
    default:
      return t;
  }
}

bool is_all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!is_digit(c)) return false;
  }
  return true;
}

// ---- Parser ---------------------------------------------------------------------------

class IRParser {
 public:
  IRParser(std::string_view text, const std::string& filename)
      : source_(std::make_shared<Source>(filename, std::string(text))),
        // Source positions of `# line:col` comments point into the program the IR came
        // from, whose text we do not have.
        origin_(std::make_shared<Source>(filename, "")) {
    tokens_ = ir_text::lex(text, source_);
  }

  std::vector<std::unique_ptr<Graph>> parse_all(std::vector<SourceRange>* headers) {
    std::vector<std::unique_ptr<Graph>> graphs;
    while (peek().kind != Tok::End) {
      if (headers) headers->push_back(range_of(peek()));
      graphs.push_back(graph());
    }
    link_calls(graphs, calls_);
    return graphs;
  }

 private:
  // ---- Tokens
  const Token& peek(size_t k = 0) const { return tokens_[std::min(pos_ + k, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool accept(Tok kind) {
    if (peek().kind != kind) return false;
    next();
    return true;
  }
  const Token& expect(Tok kind, const std::string& what) {
    if (peek().kind != kind) fail(peek(), "expected " + what + ", got " + describe(peek()));
    return next();
  }
  bool at_ident(std::string_view text) const {
    return peek().kind == Tok::Ident && peek().text == text;
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::End:
        return "the end of the input";
      case Tok::Value:
        return "'%" + t.text + "'";
      case Tok::String:
        return "a string";
      default:
        return "'" + t.text + "'";
    }
  }
  SourceRange range_of(const Token& t) const {
    return SourceRange{source_, t.line, t.col, t.line, t.end_col};
  }
  [[noreturn]] void fail(const Token& t, const std::string& message) const {
    compile_error(range_of(t), message);
  }
  static std::string where(const Token& t) {
    return std::to_string(t.line) + ":" + std::to_string(t.col + 1);
  }

  // Deeply nested text (`[[[[...`, blocks in blocks) is an error, not a stack overflow.
  static constexpr int kMaxDepth = 256;
  class DepthGuard {
   public:
    DepthGuard(IRParser& p, const Token& t) : p_(p) {
      if (++p_.depth_ > kMaxDepth) p_.fail(t, "nesting too deep");
    }
    ~DepthGuard() { --p_.depth_; }

   private:
    IRParser& p_;
  };

  // ---- graph NAME(%a : T, ...): nodes return (%v, ...)
  std::unique_ptr<Graph> graph() {
    if (!at_ident("graph")) fail(peek(), "expected 'graph', got " + describe(peek()));
    const Token& header = next();
    auto g = std::make_unique<Graph>();
    graph_ = g.get();
    reset_names();
    if (peek().kind == Tok::GraphName) g->set_name(next().text);
    scopes_.emplace_back();
    block_params(g->block());
    expect(Tok::Colon, "':' after the graph's parameters");
    body(g->block());
    if (!at_ident("return")) fail(peek(), "expected 'return' or a node, got " + describe(peek()));
    next();
    for (Value* v : value_list("the graph's return values")) g->add_output(v);
    scopes_.clear();
    run_verifier(*g, header);
    return g;
  }

  void run_verifier(const Graph& g, const Token& header) const {
    try {
      verify(g);
    } catch (const InternalError& e) {
      // The checks above should leave nothing for the verifier; keep its first line.
      std::string what = e.what();
      fail(header, "malformed graph: " + what.substr(0, what.find('\n')));
    }
  }

  // (%a : T, ...) as the parameters of `b`.
  void block_params(Block* b) {
    expect(Tok::LParen, "'('");
    if (accept(Tok::RParen)) return;
    do {
      const Token& name = expect(Tok::Value, "a parameter name like %x");
      expect(Tok::Colon, "':' and a type after %" + name.text);
      TypePtr t = type();
      Value* v = b->add_param(t);
      declare(v, name);
      make_visible(name.text, v);
    } while (accept(Tok::Comma));
    expect(Tok::RParen, "',' or ')'");
  }

  // Nodes up to the block's `->` or the graph's `return`.
  void body(Block* b) {
    while (peek().kind != Tok::Arrow && peek().kind != Tok::End && !at_ident("return") &&
           !at_ident("graph")) {
      node(b);
    }
  }

  struct PendingOutput {
    const Token* name;
    TypePtr type;
  };

  // %a : T, %b : U = op[attr=value, ...](%x, %y)  then its blocks.
  void node(Block* b) {
    std::vector<PendingOutput> outs;
    if (peek().kind == Tok::Value) {
      do {
        const Token& name = expect(Tok::Value, "an output name like %y");
        expect(Tok::Colon, "':' and a type after %" + name.text);
        outs.push_back({&name, type()});
      } while (accept(Tok::Comma));
      expect(Tok::Equals, "'=' after the outputs");
    }
    const Token& op_tok = expect(Tok::Ident, "an op name");
    OpId op = lookup_op(op_tok);
    std::vector<Attribute> attrs;
    if (peek().kind == Tok::LBracket) attrs = attributes();
    std::vector<Value*> inputs = value_list("the inputs of " + op_tok.text);
    std::vector<const Token*> input_tokens = inputs_tokens_;
    const Token& last = tokens_[pos_ - 1];

    Node* n = graph_->create(op, inputs, 0);
    b->append(n);
    for (Attribute& a : attrs) n->set_attr(std::move(a.name), std::move(a.value));
    if (last.note_line > 0) n->set_range({origin_, last.note_line, last.note_col - 1, 0, 0});
    for (const PendingOutput& o : outs) declare(n->add_output()->set_type(o.type), *o.name);
    node_blocks(n);
    // Outputs are visible after the node's blocks, not inside them.
    for (size_t i = 0; i < outs.size(); ++i) make_visible(outs[i].name->text, n->output(i));
    check_node(n, op_tok, input_tokens);
    if (op == OpId::CallFunction) calls_.push_back({n, range_of(op_tok)});
  }

  OpId lookup_op(const Token& t) const {
    std::optional<OpId> op = find_op(t.text);
    if (!op)
      fail(t, "unknown op '" + t.text +
                  "' (ops are named as in runtime/ops.def, e.g. "
                  "'add', 'max.dim', 'If')");
    if (*op == OpId::Param || *op == OpId::Return)
      fail(t, "'" + t.text +
                  "' is a block sentinel, not a node (write block parameters in "
                  "blockN(...) and returns after '->')");
    return *op;
  }

  // [name=value, ...]
  std::vector<Attribute> attributes() {
    std::vector<Attribute> attrs;
    expect(Tok::LBracket, "'['");
    do {
      const Token& name = expect(Tok::Ident, "an attribute name");
      for (const Attribute& a : attrs) {
        if (a.name == name.text) fail(name, "attribute '" + name.text + "' is given twice");
      }
      expect(Tok::Equals, "'=' after attribute " + name.text);
      attrs.push_back({name.text, attr_value()});
    } while (accept(Tok::Comma));
    expect(Tok::RBracket, "',' or ']' in the attribute list");
    return attrs;
  }

  // An IValue as IValue::repr prints it.
  IValue attr_value() {
    const Token& t = next();
    DepthGuard guard(*this, t);
    switch (t.kind) {
      case Tok::Int: {
        int64_t v = 0;
        auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
        if (r.ec != std::errc()) fail(t, "integer " + t.text + " does not fit in int64");
        return IValue(v);
      }
      case Tok::Float:
        return IValue(std::strtod(t.text.c_str(), nullptr));  // handles inf and -inf
      case Tok::String:
        return IValue(t.text);
      case Tok::LBracket:
        return IValue::list(sequence(Tok::RBracket));
      case Tok::LParen:
        return IValue::tuple(sequence(Tok::RParen));
      case Tok::Ident:
        return word_value(t);
      default:
        fail(t, "expected an attribute value, got " + describe(t));
    }
  }

  // The elements of a list or tuple literal after its opening bracket.
  std::vector<IValue> sequence(Tok close) {
    std::vector<IValue> elems;
    while (!accept(close)) {
      elems.push_back(attr_value());
      if (accept(close)) break;
      expect(Tok::Comma, "',' between elements");
    }
    return elems;
  }

  IValue word_value(const Token& t) {
    if (t.text == "True") return IValue(true);
    if (t.text == "False") return IValue(false);
    if (t.text == "None") return IValue();
    if (t.text == "inf") return IValue(std::numeric_limits<double>::infinity());
    if (t.text == "nan") return IValue(std::numeric_limits<double>::quiet_NaN());
    if (t.text.starts_with("torch.")) {
      if (auto d = dtype_from_name(t.text.substr(6))) return IValue(*d);
      fail(t, "unknown dtype '" + t.text + "'");
    }
    std::string device = t.text;
    if (device == "cuda" && peek().kind == Tok::Colon && peek(1).kind == Tok::Int) {
      next();
      device += ":" + next().text;
    }
    if (auto d = Device::parse(device)) return IValue(*d);
    if (t.text == "tensor") fail(t, "tensor constants cannot be read back from IR text");
    fail(t, "expected an attribute value, got '" + t.text + "'");
  }

  // (%a, %b, ...): uses of visible values.
  std::vector<Value*> value_list(const std::string& what) {
    expect(Tok::LParen, "'(' before " + what);
    std::vector<Value*> values;
    inputs_tokens_.clear();
    if (accept(Tok::RParen)) return values;
    do {
      const Token& t = expect(Tok::Value, "a value like %x in " + what);
      values.push_back(use(t));
      inputs_tokens_.push_back(&t);
    } while (accept(Tok::Comma));
    expect(Tok::RParen, "',' or ')' in " + what);
    return values;
  }

  // blockN(%p : T, ...): nodes -> (%r, ...)
  void node_blocks(Node* n) {
    while (peek().kind == Tok::Ident && peek().text.starts_with("block") &&
           peek(1).kind == Tok::LParen) {
      const Token& label = next();
      DepthGuard guard(*this, label);
      std::string expected = "block" + std::to_string(n->blocks().size());
      if (label.text != expected) fail(label, "expected " + expected + ", got " + label.text);
      Block* b = n->add_block();
      scopes_.emplace_back();
      block_params(b);
      expect(Tok::Colon, "':' after the block's parameters");
      body(b);
      expect(Tok::Arrow, "'->' and the block's return values");
      for (Value* v : value_list("the block's return values")) b->add_return(v);
      for (const std::string& name : scopes_.back()) visible_.erase(name);
      scopes_.pop_back();
    }
  }

  // ---- Types: Tensor, int, List[T], Optional[T], Tuple[T, ...], Callable[[T], R], ...
  TypePtr type() {
    const Token& t = expect(Tok::Ident, "a type");
    DepthGuard guard(*this, t);
    static const std::unordered_map<std::string, TypePtr (*)()> simple = {
        {"Tensor", &Type::tensor},
        {"int", &Type::int_},
        {"float", &Type::float_},
        {"bool", &Type::bool_},
        {"str", &Type::str_},
        {"None", &Type::none},
        {"dtype", &Type::dtype},
        {"device", &Type::device},
        {"Any", &Type::any},
        // A schema's Scalar, which values of gradient graphs can carry.
        {"Scalar", &Type::number}};
    if (auto it = simple.find(t.text); it != simple.end()) return it->second();
    if (t.text == "?") fail(t, "a value needs a type");
    if (t.text == "List" || t.text == "Optional") {
      expect(Tok::LBracket, "'[' after " + t.text);
      TypePtr e = type();
      expect(Tok::RBracket, "']'");
      return t.text == "List" ? Type::list(e) : Type::optional(e);
    }
    if (t.text == "Tuple") return tuple_type();
    if (t.text == "Dict") return dict_type(t);
    if (t.text == "Callable") return callable_type();
    fail(t, "unknown type '" + t.text + "'");
  }

  TypePtr tuple_type() {
    expect(Tok::LBracket, "'[' after Tuple");
    std::vector<TypePtr> elems;
    if (!accept(Tok::RBracket)) {
      do {
        elems.push_back(type());
      } while (accept(Tok::Comma));
      expect(Tok::RBracket, "',' or ']'");
    }
    return Type::tuple(std::move(elems));
  }

  // Dict[K, V] with K str or int.
  TypePtr dict_type(const Token& t) {
    expect(Tok::LBracket, "'[' after Dict");
    const Token& key_tok = peek();
    TypePtr key = type();
    if (key->kind() != TypeKind::Str && key->kind() != TypeKind::Int)
      fail(key_tok, "Dict keys must be str or int, not " + key->str());
    expect(Tok::Comma, "',' and the value type of the " + t.text);
    TypePtr value = type();
    expect(Tok::RBracket, "']'");
    return Type::dict(std::move(key), std::move(value));
  }

  // Callable[[A, B], R], or Callable[[...], Any] for an unknown signature.
  TypePtr callable_type() {
    expect(Tok::LBracket, "'[' after Callable");
    expect(Tok::LBracket, "'[' and the parameter types");
    if (accept(Tok::Ellipsis)) {
      expect(Tok::RBracket, "']'");
      expect(Tok::Comma, "','");
      type();
      expect(Tok::RBracket, "']'");
      return Type::function(nullptr);
    }
    auto sig = std::make_shared<FunctionSignature>();
    if (!accept(Tok::RBracket)) {
      do {
        sig->params.push_back(type());
      } while (accept(Tok::Comma));
      expect(Tok::RBracket, "',' or ']'");
    }
    expect(Tok::Comma, "',' and the result type");
    sig->result = type();
    expect(Tok::RBracket, "']'");
    return Type::function(std::move(sig));
  }

  // ---- Names
  // Values are named in definition order as the printer names them (see Printer::name
  // in ir/printer.cpp): a numeric name is a temporary; `y.2` is the debug name `y` when
  // the printer would number it `.2` again, so printing the parsed graph gives the
  // same text.
  void reset_names() {
    used_names_.clear();
    defined_.clear();
    visible_.clear();
    next_temp_ = 0;
  }

  void declare(Value* v, const Token& name) {
    if (auto it = defined_.find(name.text); it != defined_.end())
      fail(name, "%" + name.text + " is already defined at " + it->second);
    defined_[name.text] = where(name);
    v->set_debug_name(debug_name_for(name.text));
  }

  std::string debug_name_for(const std::string& text) {
    if (is_all_digits(text)) {
      std::string n;
      do {
        n = std::to_string(next_temp_++);
      } while (used_names_.count(n));
      used_names_.insert(n);
      return "";
    }
    std::string base = text;
    size_t dot = text.rfind('.');
    if (dot != std::string::npos && dot > 0 && is_all_digits(text.substr(dot + 1)) &&
        !is_all_digits(text.substr(0, dot))) {
      base = text.substr(0, dot);
      std::string n = base;
      for (int k = 1; used_names_.count(n); ++k) n = base + "." + std::to_string(k);
      if (n != text) base = text;
    }
    used_names_.insert(text);
    return base;
  }

  void make_visible(const std::string& name, Value* v) {
    visible_[name] = v;
    scopes_.back().push_back(name);
  }

  Value* use(const Token& t) {
    if (auto it = visible_.find(t.text); it != visible_.end()) return it->second;
    if (auto it = defined_.find(t.text); it != defined_.end()) {
      fail(t, "%" + t.text + " is not visible here: it is defined at " + it->second +
                  ", inside a block that does not enclose this use or by the node that "
                  "owns this block");
    }
    for (size_t i = pos_; i + 1 < tokens_.size(); ++i) {
      if (tokens_[i].kind == Tok::Value && tokens_[i].text == t.text &&
          tokens_[i + 1].kind == Tok::Colon) {
        fail(t, "%" + t.text + " is used before its definition at " + where(tokens_[i]));
      }
      if (tokens_[i].kind == Tok::Ident && tokens_[i].text == "graph") break;
    }
    fail(t, "undefined value %" + t.text);
  }

  // ---- Checks: arity and types against the op's schema, structure of If and Loop.
  void check_node(Node* n, const Token& op_tok, const std::vector<const Token*>& input_tokens) {
    switch (n->op()) {
      case OpId::Constant:
        return check_constant(n, op_tok);
      case OpId::If:
        return check_if(n, op_tok);
      case OpId::Loop:
        return check_loop(n, op_tok);
      case OpId::DictConstruct:
        return check_dict_construct(n, op_tok, input_tokens);
      case OpId::CallFunction:
        if (!n->has_attr("name") || !n->attr("name").is_str())
          fail(op_tok, "CallFunction needs a string attribute 'name'");
        return;
      case OpId::TupleIndex:
      case OpId::TupleUnpack:
        return check_tuple_access(n, op_tok);
      case OpId::FusionGroup:
        return check_fusion_group(n, op_tok);
      default:
        break;
    }
    // Before the structural ops return: `Undefined` with a block passed, and vmap hit an
    // internal error cloning it (found by mutating IR tests).
    if (std::string p = block_structure_problem(n); !p.empty()) fail(op_tok, p);
    if (n->info().has(opflags::PRIM)) return;  // structural ops of other passes (GradOf)
    check_schema(n, op_tok, input_tokens);
  }

  // TupleIndex[index=k](t) and TupleUnpack(t): t is a tuple that has element k (or as
  // many elements as outputs), and each output has its element's type. (Found by the
  // IR fuzz target: an index past the end escaped as std::out_of_range from a pass.)
  void check_tuple_access(Node* n, const Token& op_tok) {
    if (n->inputs().size() != 1) fail(op_tok, op_tok.text + " takes 1 input");
    const TypePtr& t = n->input(0)->type();
    if (t->kind() != TypeKind::Tuple) fail(op_tok, op_tok.text + " takes a tuple, not " + t->str());
    const std::vector<TypePtr>& elems = t->contained();
    std::vector<size_t> which;
    if (n->op() == OpId::TupleIndex) {
      if (!n->has_attr("index") || !n->attr("index").is_int())
        fail(op_tok, "TupleIndex needs an int attribute 'index'");
      int64_t k = n->attr("index").to_int();
      if (k < 0 || static_cast<size_t>(k) >= elems.size())
        fail(op_tok, str("TupleIndex index ", k, " is out of range for ", t->str()));
      if (n->outputs().size() != 1) fail(op_tok, "TupleIndex has 1 output");
      which.push_back(static_cast<size_t>(k));
    } else {
      if (n->outputs().size() != elems.size())
        fail(op_tok, str("TupleUnpack of ", t->str(), " has ", elems.size(), " outputs, got ",
                         n->outputs().size()));
      for (size_t i = 0; i < elems.size(); ++i) which.push_back(i);
    }
    for (size_t i = 0; i < which.size(); ++i) {
      // (Function types are compared by how they print: each parsed one is distinct.)
      TypePtr out = strip_refinements(n->output(i)->type()),
              elem = strip_refinements(elems[which[i]]);
      if (!out->equals(*elem) && out->str() != elem->str())
        fail(op_tok, str("output ", i, " of ", op_tok.text, " must be ", elems[which[i]]->str(),
                         ", not ", n->output(i)->type()->str()));
    }
  }

  void check_schema(Node* n, const Token& op_tok, const std::vector<const Token*>& input_tokens) {
    const FunctionSchema& s = schema_of(n->op());
    size_t count = s.arguments.size();
    int variadic = s.variadic_index();
    size_t got = n->inputs().size();
    if (variadic >= 0 ? got + 1 < count : got != count) {
      fail(op_tok, str(op_tok.text, " takes ", variadic >= 0 ? "at least " : "",
                       variadic >= 0 ? count - 1 : count, " inputs, got ", got, ": ", s.str()));
    }
    if (n->outputs().size() != s.returns.size()) {
      fail(op_tok, str(op_tok.text, " has ", s.returns.size(), " outputs, got ",
                       n->outputs().size(), ": ", s.str()));
    }
    bool nums = n->info().has(opflags::NUMS);
    TypePtr var;
    for (size_t i = 0; i < got; ++i) {
      std::optional<size_t> a = argument_of_input(s, i, got);
      if (!a) continue;  // variadic inputs are `Any`
      const Argument& arg = s.arguments[*a];
      const TypePtr& actual = n->input(i)->type();
      // AutogradAdd also adds list gradients (Note [Lists] in ir/autodiff), which its
      // Tensor schema cannot say.
      bool list_gradient = n->op() == OpId::AutogradAdd && actual->kind() == TypeKind::List &&
                           actual->element()->is_tensor();
      if (!list_gradient && !accepts(arg.type, actual, nums, var)) {
        fail(*input_tokens[i], str("input ", i, " of ", op_tok.text, " ('", arg.name, "') must be ",
                                   arg.type->str(), ", not ", actual->str()));
      }
    }
    for (size_t i = 0; i < s.returns.size(); ++i) {
      TypePtr expected = substitute(s.returns[i].type, var);
      const TypePtr& actual = n->output(i)->type();
      bool list_gradient = n->op() == OpId::AutogradAdd && actual->kind() == TypeKind::List;
      if (expected && !list_gradient && !strip_refinements(actual)->equals(*expected)) {
        fail(op_tok, str("output ", i, " of ", op_tok.text, " must be ", expected->str(), ", not ",
                         actual->str()));
      }
    }
  }

  // The schema argument input `i` binds to, or nullopt inside a variadic argument.
  static std::optional<size_t> argument_of_input(const FunctionSchema& s, size_t i, size_t got) {
    int variadic = s.variadic_index();
    if (variadic < 0 || i < static_cast<size_t>(variadic)) return i;
    size_t taken = got + 1 - s.arguments.size();  // inputs of the variadic argument
    if (i < variadic + taken) return std::nullopt;
    return i - taken + 1;
  }

  // DictConstruct(k0, v0, k1, v1, ...): a Dict output whose key and value types take
  // its inputs (Note [Dicts] in runtime/kernels/dict_ops.cpp).
  void check_dict_construct(Node* n, const Token& op_tok,
                            const std::vector<const Token*>& input_tokens) {
    if (n->outputs().size() != 1 || n->inputs().size() % 2 != 0)
      fail(op_tok, "DictConstruct takes keys and values in pairs and has one output");
    const TypePtr& t = n->output()->type();
    if (t->kind() != TypeKind::Dict) fail(op_tok, "the output of DictConstruct is a Dict");
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const TypePtr& expected = i % 2 == 0 ? t->key() : t->value();
      if (!is_subtype(n->input(i)->type(), expected)) {
        fail(*input_tokens[i], str("input ", i, " of DictConstruct must be ", expected->str(),
                                   ", not ", n->input(i)->type()->str()));
      }
    }
  }

  void check_constant(Node* n, const Token& op_tok) {
    if (!n->has_attr("value")) fail(op_tok, "Constant needs an attribute 'value'");
    if (!n->inputs().empty() || n->outputs().size() != 1 || !n->blocks().empty())
      fail(op_tok, "Constant has no inputs and one output");
    const TypePtr& declared = n->output()->type();
    TypePtr actual = type_of_value(n->attr("value"), declared);
    if (!is_subtype(actual, declared)) {
      fail(op_tok, "Constant of type " + declared->str() + " holds a value of type " +
                       actual->str() + ": " + n->attr("value").repr());
    }
  }

  void check_if(Node* n, const Token& op_tok) {
    if (n->inputs().size() != 1 || n->input(0)->type()->kind() != TypeKind::Bool)
      fail(op_tok, "If takes one bool input");
    if (n->blocks().size() != 2) fail(op_tok, "If needs two blocks (block0: then, block1: else)");
    for (const Block* b : n->blocks()) {
      if (!b->params().empty()) fail(op_tok, "the blocks of an If take no parameters");
      check_returns(b, 0, n->outputs(), op_tok, "If");
    }
  }

  void check_loop(Node* n, const Token& op_tok) {
    if (n->inputs().size() < 2 || n->input(0)->type()->kind() != TypeKind::Int ||
        n->input(1)->type()->kind() != TypeKind::Bool) {
      fail(op_tok, "Loop takes an int trip count, a bool start condition, then carried values");
    }
    size_t carried = n->inputs().size() - 2;
    if (n->blocks().size() != 1) fail(op_tok, "Loop needs one block (its body)");
    if (n->outputs().size() != carried)
      fail(op_tok,
           str("Loop has ", carried, " carried values but ", n->outputs().size(), " outputs"));
    const Block* body = n->block(0);
    if (body->params().size() != carried + 1 || body->params()[0]->type()->kind() != TypeKind::Int)
      fail(op_tok,
           str("the Loop body takes the int trip index and the ", carried, " carried values"));
    if (body->returns().size() != carried + 1 ||
        body->returns()[0]->type()->kind() != TypeKind::Bool) {
      fail(op_tok, str("the Loop body returns the bool continue condition and the ", carried,
                       " carried values"));
    }
    check_returns(body, 1, n->outputs(), op_tok, "Loop");
  }

  // A FusionGroup's block takes one parameter per input and returns its outputs.
  void check_fusion_group(Node* n, const Token& op_tok) {
    if (n->blocks().size() != 1) fail(op_tok, "FusionGroup needs one block (the fused ops)");
    const Block* b = n->block(0);
    if (b->params().size() != n->inputs().size())
      fail(op_tok, str("the FusionGroup block takes ", b->params().size(), " parameters for ",
                       n->inputs().size(), " inputs"));
    for (const Node* m : *b) {
      if (!m->blocks().empty()) fail(op_tok, "a FusionGroup block holds no nodes with blocks");
    }
    check_returns(b, 0, n->outputs(), op_tok, "FusionGroup");
  }

  // Block returns (from `skip` on) against the node's outputs.
  void check_returns(const Block* b, size_t skip, const std::vector<Value*>& outputs,
                     const Token& op_tok, const char* what) {
    if (b->returns().size() != outputs.size() + skip) {
      fail(op_tok, str("a block of this ", what, " returns ", b->returns().size() - skip,
                       " values for ", outputs.size(), " outputs"));
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      const TypePtr& r = b->returns()[i + skip]->type();
      if (!is_subtype(r, outputs[i]->type())) {
        fail(op_tok, str("a block of this ", what, " returns ", r->str(), " for output ", i,
                         " of type ", outputs[i]->type()->str()));
      }
    }
  }

  SourcePtr source_;
  SourcePtr origin_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  Graph* graph_ = nullptr;
  std::vector<const Token*> inputs_tokens_;
  std::unordered_set<std::string> used_names_;
  std::unordered_map<std::string, std::string> defined_;  // name -> "line:col"
  std::unordered_map<std::string, Value*> visible_;
  std::vector<std::vector<std::string>> scopes_;
  size_t next_temp_ = 0;
  int depth_ = 0;
  std::vector<CallSite> calls_;  // every CallFunction, for link_calls
};

}  // namespace

std::vector<std::unique_ptr<Graph>> parse_graphs(std::string_view text, const std::string& filename,
                                                 std::vector<SourceRange>* headers) {
  return IRParser(text, filename).parse_all(headers);
}

std::unique_ptr<Graph> parse_graph(std::string_view text, const std::string& filename) {
  auto graphs = parse_graphs(text, filename);
  if (graphs.size() != 1) {
    auto source = std::make_shared<Source>(filename, std::string(text));
    compile_error(SourceRange{source, 1, 0, 1, 1},
                  str("expected one graph, found ", graphs.size()));
  }
  return std::move(graphs[0]);
}

}  // namespace tsl
