// The generated parser's base class and its prediction fast path (parser_base.h).
#include "grammar/parser_base.h"

#include <array>
#include <cassert>

namespace tsl::grammar {

using antlr4::atn::PredictionMode;
using antlr4::dfa::DFAState;

namespace {
thread_local NodeArena* current_arena = nullptr;
// Blocks of the arenas of finished parses, for the next ones. Freeing a parse's blocks
// (a 300-line function takes 13) let malloc give their pages back to the kernel, and
// the next parse had each page zero-filled again: 300 page faults per parse.
thread_local std::vector<std::unique_ptr<std::byte[]>> spare_blocks;
constexpr size_t kMaxSpareBlocks = 32;  // 2 MiB kept at most
}  // namespace

NodeArena::NodeArena() : outer_(current_arena) { current_arena = this; }

NodeArena::~NodeArena() {
  assert(current_arena == this && "parsers end in the order opposite to their start");
  current_arena = outer_;
  for (std::unique_ptr<std::byte[]>& b : blocks_) {
    if (spare_blocks.size() == kMaxSpareBlocks) break;
    spare_blocks.push_back(std::move(b));
  }
}

NodeArena& NodeArena::current() { return *current_arena; }

void NodeArena::rewind() {
  block_ = 0;
  next_ = end_ = nullptr;
  if (!blocks_.empty()) {
    next_ = blocks_[0].get();
    end_ = next_ + kBlockBytes;
  }
}

void NodeArena::next_block(size_t bytes) {
  if (bytes > kBlockBytes) throw std::bad_alloc();  // no node is that large
  if (next_ != nullptr) ++block_;
  if (block_ == blocks_.size()) {
    if (spare_blocks.empty()) {
      blocks_.emplace_back(new std::byte[kBlockBytes]);  // not zeroed
    } else {
      blocks_.push_back(std::move(spare_blocks.back()));
      spare_blocks.pop_back();
    }
  }
  next_ = blocks_[block_].get();
  end_ = next_ + kBlockBytes;
}

void ParserBase::use_dfa_fast_path() {
  auto* generated = static_cast<antlr4::atn::ParserATNSimulator*>(_interpreter);
  _interpreter = new DfaFastPathSimulator(this, *generated);
  delete generated;
}

size_t DfaFastPathSimulator::adaptivePredict(antlr4::TokenStream* input, size_t decision,
                                             antlr4::ParserRuleContext* outer) {
  if (getPredictionMode() == PredictionMode::SLL) {
    if (size_t alt = cached_prediction(input, decision, outer)) return alt;
  }
  return antlr4::atn::ParserATNSimulator::adaptivePredict(input, decision, outer);
}

namespace {

// DFA edges and start states read before, per thread: (from, symbol) -> to. An edge of
// a DFA state, once set, keeps its target, and no state leaves the DFA until the DFA is
// cleared, which TSL never does; so an entry, read under the DFA's lock once, can be
// read without it afterwards.
struct CachedEdge {
  const void* from = nullptr;
  size_t symbol = 0;
  DFAState* to = nullptr;
};
thread_local std::array<CachedEdge, 1024> edge_cache;
// The symbol of a DFA's start state (a precedence DFA's are keyed by precedence).
constexpr size_t kStartState = SIZE_MAX - 1;

}  // namespace

// `read()` under the DFA's edge lock, through the cache. Null or ANTLR's error state
// when the DFA has no such edge (not cached: the DFA may get it).
template <typename Read>
DFAState* DfaFastPathSimulator::edge(const void* from, size_t symbol, Read read) {
  size_t h = reinterpret_cast<uintptr_t>(from) / alignof(std::max_align_t) * 0x9E3779B1u + symbol;
  CachedEdge& e = edge_cache[(h ^ (h >> 16)) % edge_cache.size()];
  if (e.from == from && e.symbol == symbol) return e.to;
  _edgeLock.readLock();
  DFAState* to = read();
  _edgeLock.readUnlock();
  if (to != nullptr && to != ERROR.get()) e = {from, symbol, to};
  return to;
}

// What ParserATNSimulator::execATN does in SLL mode while every state it meets is in
// the DFA: follow the edge of each next token to an accept state, whose alternative is
// the prediction or, when its alternatives are guarded by predicates (the precedence
// predicates of `expr`), the one alternative whose predicate holds.
size_t DfaFastPathSimulator::cached_prediction(antlr4::TokenStream* input, size_t decision,
                                               antlr4::ParserRuleContext* outer) {
  antlr4::dfa::DFA& dfa = decisionToDFA[decision];
  DFAState* s;
  if (dfa.isPrecedenceDfa()) {
    int precedence = parser->getPrecedence();
    s = edge(&dfa, static_cast<size_t>(precedence),
             [&] { return dfa.getPrecedenceStartState(precedence); });
  } else {
    s = edge(&dfa, kStartState, [&] { return dfa.s0; });
  }
  for (ssize_t i = 1; s != nullptr; ++i) {
    size_t t = input->LA(i);
    DFAState* from = s;
    s = edge(from, t, [&] {
      auto e = from->edges.find(t);
      return e == from->edges.end() ? nullptr : e->second;
    });
    if (s == nullptr || s == ERROR.get()) return 0;
    if (s->isAcceptState) break;
    if (t == antlr4::Token::EOF) return 0;  // execATN looks at EOF again: leave it that
  }
  if (s == nullptr) return 0;
  if (s->predicates.empty()) return s->prediction;
  // As execATN's evalSemanticContext with the input still at the decision.
  size_t alt = 0;
  for (const DFAState::PredPrediction* p : s->predicates) {
    if (p->pred != antlr4::atn::SemanticContext::NONE &&
        !p->pred->eval(parser, outer ? outer : &antlr4::ParserRuleContext::EMPTY)) {
      continue;
    }
    if (alt != 0) return 0;  // two alternatives hold: ANTLR reports the ambiguity
    alt = static_cast<size_t>(p->alt);
  }
  return alt;
}

}  // namespace tsl::grammar
