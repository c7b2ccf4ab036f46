#include "shardc/support/Yaml.h"

#include "shardc/support/Error.h"

#include <cctype>
#include <vector>

namespace shardc {
namespace {

bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// The 1-based line of the first ',' that begins a token outside flow collections, skipping
// comments, quoted strings and block scalars (| and >); 0 when there is none.
int flowEntryOutsideFlow(const std::string& s) {
  int line = 1, depth = 0;
  size_t blockIndent = std::string::npos; // inside a block scalar: lines indented deeper
  size_t i = 0;
  while (i < s.size()) {
    // At a line start: its indentation, and whether a block scalar goes on.
    size_t indent = 0;
    while (i + indent < s.size() && s[i + indent] == ' ')
      ++indent;
    size_t end = s.find('\n', i);
    if (end == std::string::npos) end = s.size();
    bool empty = i + indent == end || s[i + indent] == '\r';
    if (blockIndent != std::string::npos && (empty || indent > blockIndent)) {
      i = end + 1;
      ++line;
      continue;
    }
    blockIndent = std::string::npos;
    char prev = ' ';
    char last = ' '; // the line's last character outside comments and strings
    char beforeLast = ' ';
    for (size_t k = i + indent; k < end; ++k) {
      char c = s[k];
      if (c == '#' && blank(prev)) break; // a comment
      bool tokenStart = blank(prev) || prev == '[' || prev == '{' || prev == ',' || prev == ']' ||
                        prev == '}' || (prev == ':' && depth > 0);
      if ((c == '"' || c == '\'') && tokenStart) { // a quoted string, to its closing quote
        for (++k; k < end; ++k) {
          if (c == '"' && s[k] == '\\') {
            ++k;
          } else if (s[k] == c) {
            if (c == '\'' && k + 1 < end && s[k + 1] == '\'') {
              ++k;
              continue;
            }
            break;
          }
        }
        prev = last = c;
        continue;
      }
      if (c == '[' || c == '{') ++depth;
      if ((c == ']' || c == '}') && depth > 0) --depth;
      if (c == ',' && depth == 0 && tokenStart) return line;
      if (!blank(c)) beforeLast = last, last = c;
      prev = c;
    }
    // "key: |", "- >-": the lines after, deeper than this one, are the scalar's text.
    if ((last == '|' || last == '>' ||
         ((last == '-' || last == '+') && (beforeLast == '|' || beforeLast == '>'))) &&
        depth == 0)
      blockIndent = indent;
    i = end + 1;
    ++line;
  }
  return 0;
}

} // namespace

YAML::Node loadOneYamlDocument(const std::string& text, const std::string& file,
                               const std::string& what) {
  if (int line = flowEntryOutsideFlow(text))
    throw Error(file + ":" + std::to_string(line) +
                ": invalid YAML: a ',' outside [ ] or { } (quote the value if it starts with one)");
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    std::string at = e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1);
    throw Error(file + at + ": invalid YAML: " + e.msg);
  }
  // A second document after "---" would be ignored without a word.
  if (docs.size() > 1)
    throw Error(file + ": holds " + std::to_string(docs.size()) + " YAML documents; " + what +
                " is one");
  return docs.empty() ? YAML::Node() : docs[0];
}

} // namespace shardc
