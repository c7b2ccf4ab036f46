// Tokenizer for the IR text format.
#pragma once

#include "shardc/ir/IR.h"

#include <string>
#include <string_view>

namespace shardc {

enum class Tok {
  Eof,
  Error,    // text holds the message
  Ident,    // func, f32, matmul, true, inf, ...
  ValueRef, // %name (text holds the name, unquoted)
  FuncRef,  // @name
  Int,
  Float,
  String, // "..." (text holds the unescaped contents)
  Punct,  // one of ( ) { } [ ] < > , : =
  Arrow,  // ->
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text;
  Loc loc;
};

class Lexer {
public:
  explicit Lexer(std::string_view src) : src_(src) {}
  Token next();

private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0';
  }
  void advance();
  void skipSpaceAndComments();
  bool lexQuoted(std::string& out, std::string& err);
  Token lexNumber(Loc loc);

  std::string_view src_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

} // namespace shardc
