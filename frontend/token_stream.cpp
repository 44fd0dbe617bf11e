// The token pass's tokens as the ANTLR parser's token stream (token_stream.h).
#include "frontend/token_stream.h"

namespace tsl {

TokenList::TokenList(const TokenizedText& text) {
  tokens_.reserve(text.tokens.size());
  for (const ScannedToken& t : text.tokens) tokens_.emplace_back(t, tokens_.size());
}

void TokenList::consume() {
  if (tokens_[p_].getType() == antlr4::Token::EOF) {
    throw antlr4::IllegalStateException("cannot consume EOF");
  }
  ++p_;
}

antlr4::Token* TokenList::get(size_t index) const {
  return const_cast<PassToken*>(&tokens_.at(index));
}

std::string TokenList::getText(const antlr4::misc::Interval& interval) {
  std::string text;
  for (ssize_t i = std::max<ssize_t>(interval.a, 0);
       i <= interval.b && static_cast<size_t>(i) + 1 < tokens_.size(); ++i) {
    text += tokens_[i].getText();
  }
  return text;
}

std::string TokenList::getText() {
  return getText(antlr4::misc::Interval(size_t{0}, tokens_.size() - 1));
}

std::string TokenList::getText(antlr4::RuleContext* ctx) {
  return getText(ctx->getSourceInterval());
}

std::string TokenList::getText(antlr4::Token* start, antlr4::Token* stop) {
  if (start == nullptr || stop == nullptr) return "";
  return getText(antlr4::misc::Interval(start->getTokenIndex(), stop->getTokenIndex()));
}

}  // namespace tsl
