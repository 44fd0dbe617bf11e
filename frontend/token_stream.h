// The token pass's tokens (lexer.h) as the ANTLR parser's token stream: all made before
// the parse, in one array, all on the default channel, so that a position is an index.
// (ANTLR's CommonTokenStream over a TokenSource makes each token a heap object and, at
// each step, fetches lazily and skips other channels.)
#pragma once

#include <string>
#include <vector>

#include "antlr4-runtime.h"
#include "frontend/lexer.h"

namespace tsl {

// One token of the token pass as ANTLR's Token, a view of its ScannedToken (whose text
// is copied only when asked for).
class PassToken final : public antlr4::Token {
 public:
  PassToken(const ScannedToken& token, size_t index) : token_(&token), index_(index) {}

  std::string getText() const override { return std::string(token_->text); }
  size_t getType() const override { return token_->type; }
  size_t getLine() const override { return token_->line; }
  size_t getCharPositionInLine() const override { return token_->col; }
  size_t getChannel() const override { return DEFAULT_CHANNEL; }
  size_t getTokenIndex() const override { return index_; }
  size_t getStartIndex() const override { return token_->start; }
  size_t getStopIndex() const override { return token_->stop; }
  // No source: nothing TSL's error strategies do makes a token (ANTLR's recovery would).
  antlr4::TokenSource* getTokenSource() const override { return nullptr; }
  antlr4::CharStream* getInputStream() const override { return nullptr; }
  std::string toString() const override { return getText(); }

 private:
  const ScannedToken* token_;
  size_t index_;
};

class TokenList final : public antlr4::TokenStream {
 public:
  // `text`'s tokens end with EOF; they and their texts must outlive the list.
  explicit TokenList(const TokenizedText& text);

  antlr4::Token* LT(ssize_t k) override {
    if (k < 0) return static_cast<size_t>(-k) > p_ ? nullptr : &tokens_[p_ + k];
    if (k == 0) return nullptr;
    return &tokens_[std::min(p_ + static_cast<size_t>(k) - 1, tokens_.size() - 1)];
  }
  size_t LA(ssize_t i) override {
    if (i > 0)
      return tokens_[std::min(p_ + static_cast<size_t>(i) - 1, tokens_.size() - 1)].getType();
    antlr4::Token* t = LT(i);
    return t ? t->getType() : antlr4::Token::INVALID_TYPE;
  }
  void consume() override;
  ssize_t mark() override { return 0; }
  void release(ssize_t) override {}
  size_t index() override { return p_; }
  void seek(size_t index) override { p_ = std::min(index, tokens_.size() - 1); }
  size_t size() override { return tokens_.size(); }
  std::string getSourceName() const override { return ""; }
  antlr4::Token* get(size_t index) const override;
  antlr4::TokenSource* getTokenSource() const override { return nullptr; }
  // The texts of the tokens in the interval, EOF left out (as CommonTokenStream's).
  std::string getText(const antlr4::misc::Interval& interval) override;
  std::string getText() override;
  std::string getText(antlr4::RuleContext* ctx) override;
  std::string getText(antlr4::Token* start, antlr4::Token* stop) override;

 private:
  std::vector<PassToken> tokens_;
  size_t p_ = 0;
};

}  // namespace tsl
