// The base class of the generated TSLParser (TSLParser.g4's superClass): ANTLR's
// Parser with cheaper rule entry and exit, a bound on the nesting of rules, and
// predictions from the DFA without ANTLR's per-call bookkeeping. See Note [One parser]
// in frontend/parser.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "antlr4-runtime.h"

namespace tsl::grammar {

// Memory for the nodes of parse trees. ANTLR allocates every context and terminal node
// with `new` and deletes each when its parser is reset or destroyed: two thirds of the
// heap allocations of a parse. The generated contexts (TSLParser.g4's contextSuperClass,
// ArenaContext) and ParserBase's terminal nodes take their memory from the arena of the
// innermost parser alive on the thread (a nested one parses an f-string's field while
// the outer tree is being read); deleting them runs their destructors and frees
// nothing, and the parser's arena frees its blocks once the parser has deleted its
// nodes.
class NodeArena {
 public:
  NodeArena();
  ~NodeArena();
  NodeArena(const NodeArena&) = delete;
  NodeArena& operator=(const NodeArena&) = delete;

  // The arena of the innermost parser alive on this thread.
  static NodeArena& current();
  static void* allocate(size_t bytes) { return current().take(bytes); }
  // Makes every block free again (all the nodes are gone).
  void rewind();

 private:
  static constexpr size_t kBlockBytes = 64 * 1024;  // below malloc's mmap threshold
  std::vector<std::unique_ptr<std::byte[]>> blocks_;
  size_t block_ = 0;  // the block being filled
  std::byte* next_ = nullptr;
  std::byte* end_ = nullptr;
  NodeArena* outer_;  // the arena current before this one

  void* take(size_t bytes) {
    bytes = (bytes + alignof(std::max_align_t) - 1) & ~(alignof(std::max_align_t) - 1);
    if (static_cast<size_t>(end_ - next_) < bytes) next_block(bytes);
    void* p = next_;
    next_ += bytes;
    return p;
  }
  void next_block(size_t bytes);
};

// The base of every generated context: memory from the current NodeArena.
class ArenaContext : public antlr4::ParserRuleContext {
 public:
  using antlr4::ParserRuleContext::ParserRuleContext;
  static void* operator new(size_t bytes) { return NodeArena::allocate(bytes); }
  static void operator delete(void*) {}
};

// A terminal node with memory from the current NodeArena (ParserBase::consume).
class ArenaTerminal : public antlr4::tree::TerminalNodeImpl {
 public:
  using antlr4::tree::TerminalNodeImpl::TerminalNodeImpl;
  static void* operator new(size_t bytes) { return NodeArena::allocate(bytes); }
  static void operator delete(void*) {}
};

// The generated rules call enterRule, exitRule, enterRecursionRule,
// unrollRecursionContexts, finally and getInterpreter by name, and find these, which
// the compiler can inline into them. They do what ANTLR's do, less what TSL never
// uses: parse listeners (none is ever added), the dynamic_casts of a context's parent
// to ParserRuleContext (which it always is) and of the interpreter to
// ParserATNSimulator (which it always is), and the std::function of each rule's exit
// action. Parser::exitRule is not virtual; nothing but the generated rules calls it.
// consume makes terminal nodes in the parser's NodeArena.
// Each entry also counts the rule invocations open, a left-recursive rule's (`expr`)
// once however many operators its loop matches, and checks the thread's stack.
class ParserBase : public antlr4::Parser {
 public:
  explicit ParserBase(antlr4::TokenStream* input) : antlr4::Parser(input) {}
  // Deletes the tree's nodes while their arena is alive (~Parser would after).
  ~ParserBase() override { _tracker.reset(); }

  using antlr4::Parser::enterRecursionRule;

  void enterRule(antlr4::ParserRuleContext* ctx, size_t state, size_t) final {
    enter_nested();
    setState(state);
    _ctx = ctx;
    ctx->start = _input->LT(1);
    ctx->children.reserve(kChildren);
    if (_buildParseTrees && ctx->parent) parent_of(ctx)->addChild(ctx);
  }

  void exitRule() {
    --depth_;
    _ctx->stop = _input->LT(_matchedEOF ? 1 : -1);  // EOF is never consumed
    setState(_ctx->invokingState);
    _ctx = parent_of(_ctx);
  }

  void enterRecursionRule(antlr4::ParserRuleContext* ctx, size_t state, size_t,
                          int precedence) final {
    enter_nested();
    setState(state);
    _precedenceStack.push_back(precedence);
    _ctx = ctx;
    ctx->start = _input->LT(1);
    ctx->children.reserve(kChildren);
  }

  void pushNewRecursionContext(antlr4::ParserRuleContext* ctx, size_t state,
                               size_t rule_index) final {
    ctx->children.reserve(kChildren);  // the operand before, the operator, the one after
    antlr4::Parser::pushNewRecursionContext(ctx, state, rule_index);
  }

  void unrollRecursionContexts(antlr4::ParserRuleContext* parent) final {
    --depth_;
    _precedenceStack.pop_back();
    _ctx->stop = _input->LT(-1);
    antlr4::ParserRuleContext* result = _ctx;
    _ctx = parent;
    result->parent = parent;
    if (_buildParseTrees && parent) parent->addChild(result);
  }

  void reset() override {
    antlr4::Parser::reset();
    arena_.rewind();
    depth_ = 0;
  }

  antlr4::Token* consume() final {
    if (_errHandler->inErrorRecoveryMode(this)) return antlr4::Parser::consume();
    antlr4::Token* t = _input->LT(1);
    if (t->getType() != antlr4::Token::EOF) _input->consume();
    if (_buildParseTrees) _ctx->addChild(_tracker.createInstance<ArenaTerminal>(t));
    return t;
  }

  // A rule's exit action (antlrcpp::finally without the std::function).
  template <typename Action>
  struct OnExit {
    Action action;
    ~OnExit() { action(); }
  };
  template <typename Action>
  static OnExit<Action> finally(Action action) {
    return {std::move(action)};
  }

  template <typename Simulator>
  Simulator* getInterpreter() const {
    static_assert(std::is_same_v<Simulator, antlr4::atn::ParserATNSimulator>);
    return static_cast<Simulator*>(_interpreter);
  }

 protected:
  // Replaces the generated parser's simulator by a DfaFastPathSimulator (from the most
  // derived constructor: the generated one makes the simulator).
  void use_dfa_fast_path();

  // A rule entry deeper than this many open rules, or with the stack below
  // stack_floor_, calls nesting_exceeded, which must throw.
  size_t max_depth_ = SIZE_MAX;
  uintptr_t stack_floor_ = 0;
  [[noreturn]] virtual void nesting_exceeded() = 0;

 private:
  // Room for most rules' children at once, instead of a vector growing by doubling.
  static constexpr size_t kChildren = 4;
  NodeArena arena_;  // made current by its construction, before the generated part
  size_t depth_ = 0;

  static antlr4::ParserRuleContext* parent_of(antlr4::ParserRuleContext* ctx) {
    return static_cast<antlr4::ParserRuleContext*>(ctx->parent);
  }
  void enter_nested() {
    uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    if (++depth_ > max_depth_ || here < stack_floor_) {
      --depth_;
      nesting_exceeded();
    }
  }
};

// ANTLR's prediction with a fast path for what the DFA already holds. In SLL mode a
// prediction walks the decision's DFA along the next tokens; when the walk reaches an
// accept state, its alternative (or the one whose predicates hold) is what
// ParserATNSimulator::adaptivePredict returns, and it is returned without the
// bookkeeping of that call (a heap-allocated exit action, a mark and seek on the token
// stream, a lock per edge, predicates evaluated into 2048-bit sets): the edges it has
// read once are cached per thread, without a lock. Anything else (a
// state or edge not built yet, an error edge, no or two alternatives whose predicates
// hold, full LL) goes to ParserATNSimulator, which builds what is missing or reports.
class DfaFastPathSimulator : public antlr4::atn::ParserATNSimulator {
 public:
  DfaFastPathSimulator(antlr4::Parser* parser, antlr4::atn::ParserATNSimulator& generated)
      : antlr4::atn::ParserATNSimulator(parser, generated.atn, generated.decisionToDFA,
                                        generated.getSharedContextCache()) {}

  size_t adaptivePredict(antlr4::TokenStream* input, size_t decision,
                         antlr4::ParserRuleContext* outer) override;

 private:
  // The alternative the DFA predicts for the next tokens, or 0 when it cannot tell.
  size_t cached_prediction(antlr4::TokenStream* input, size_t decision,
                           antlr4::ParserRuleContext* outer);
  template <typename Read>
  antlr4::dfa::DFAState* edge(const void* from, size_t symbol, Read read);
};

}  // namespace tsl::grammar
