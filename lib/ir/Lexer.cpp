#include "Lexer.h"

#include <cctype>
#include <cstdio>

namespace shardc {
namespace {
bool identStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool identChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}
bool digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
} // namespace

void Lexer::advance() {
  if (pos_ >= src_.size()) return;
  if (src_[pos_] == '\n')
    ++line_, col_ = 1;
  else
    ++col_;
  ++pos_;
}

void Lexer::skipSpaceAndComments() {
  for (;;) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      advance();
    else if (c == '/' && peek(1) == '/')
      while (peek() != '\n' && pos_ < src_.size())
        advance();
    else
      return;
  }
}

namespace {

// Well-formed UTF-8 as protobuf checks it: no overlong forms, surrogates or code points
// past U+10FFFF.
bool validUtf8(const std::string& s) {
  auto at = [&](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  for (size_t i = 0; i < s.size();) {
    unsigned c = at(i), c1 = at(i + 1);
    size_t n = c < 0x80 ? 0 : c < 0xc2 ? 9 : c < 0xe0 ? 1 : c < 0xf0 ? 2 : c < 0xf5 ? 3 : 9;
    if (n == 9) return false;
    if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 > 0x9f) || (c == 0xf0 && c1 < 0x90) ||
        (c == 0xf4 && c1 > 0x8f))
      return false;
    for (size_t k = 1; k <= n; ++k)
      if ((at(i + k) >> 6) != 0x2) return false;
    i += n + 1;
  }
  return true;
}

} // namespace

bool Lexer::lexQuoted(std::string& out, std::string& err) {
  advance(); // opening quote
  for (;;) {
    if (pos_ >= src_.size() || peek() == '\n') {
      err = "unterminated string";
      return false;
    }
    char c = peek();
    advance();
    if (c == '"') {
      // Names and strings end up in the PEF's protobuf strings, which must be UTF-8.
      if (!validUtf8(out)) {
        err = "string is not valid UTF-8";
        return false;
      }
      return true;
    }
    if (c == '\\') {
      char e = peek();
      if (e == 'n')
        out += '\n';
      else if (e == '"' || e == '\\')
        out += e;
      else {
        err = "unknown escape sequence in string";
        return false;
      }
      advance();
    } else {
      out += c;
    }
  }
}

Token Lexer::lexNumber(Loc loc) {
  size_t start = pos_;
  bool isFloat = false;
  if (peek() == '-' || peek() == '+') advance();
  if (identStart(peek())) { // -inf, +inf
    while (identChar(peek()))
      advance();
    std::string t(src_.substr(start, pos_ - start));
    if (t == "-inf" || t == "+inf") return {Tok::Float, t, loc};
    return {Tok::Error, "malformed number '" + t + "'", loc};
  }
  while (digit(peek()))
    advance();
  if (peek() == '.') {
    isFloat = true;
    advance();
    while (digit(peek()))
      advance();
  }
  if (peek() == 'e' || peek() == 'E') {
    isFloat = true;
    advance();
    if (peek() == '-' || peek() == '+') advance();
    if (!digit(peek())) return {Tok::Error, "malformed number exponent", loc};
    while (digit(peek()))
      advance();
  }
  std::string t(src_.substr(start, pos_ - start));
  if (t == "-" || t == "+") return {Tok::Error, "expected a number after '" + t + "'", loc};
  if (identChar(peek()))
    return {Tok::Error, "malformed number '" + t + std::string(1, peek()) + "...'", loc};
  return {isFloat ? Tok::Float : Tok::Int, t, loc};
}

Token Lexer::next() {
  skipSpaceAndComments();
  Loc loc{line_, col_};
  if (pos_ >= src_.size()) return {Tok::Eof, "", loc};
  char c = peek();
  if (c == '-' && peek(1) == '>') {
    advance();
    advance();
    return {Tok::Arrow, "->", loc};
  }
  if (digit(c) || ((c == '-' || c == '+') && (digit(peek(1)) || peek(1) == 'i')))
    return lexNumber(loc);
  if (identStart(c)) {
    size_t start = pos_;
    while (identChar(peek()))
      advance();
    return {Tok::Ident, std::string(src_.substr(start, pos_ - start)), loc};
  }
  if (c == '"') {
    std::string s, err;
    if (!lexQuoted(s, err)) return {Tok::Error, err, loc};
    return {Tok::String, s, loc};
  }
  if (c == '%' || c == '@') {
    advance();
    std::string name, err;
    if (peek() == '"') {
      if (!lexQuoted(name, err)) return {Tok::Error, err, loc};
      if (name.empty()) return {Tok::Error, "empty name", loc};
    } else {
      while (identChar(peek()))
        name += peek(), advance();
      if (name.empty()) return {Tok::Error, std::string("expected a name after '") + c + "'", loc};
    }
    return {c == '%' ? Tok::ValueRef : Tok::FuncRef, name, loc};
  }
  if (std::string_view("(){}[]<>,:=").find(c) != std::string_view::npos) {
    advance();
    return {Tok::Punct, std::string(1, c), loc};
  }
  char shown[8];
  if (std::isprint(static_cast<unsigned char>(c)))
    std::snprintf(shown, sizeof shown, "%c", c);
  else
    std::snprintf(shown, sizeof shown, "\\x%02x", static_cast<unsigned char>(c));
  return {Tok::Error, std::string("unexpected character '") + shown + "'", loc};
}

} // namespace shardc
