#include "shardc/ir/ExpectedDiagnostics.h"

#include "shardc/ir/Diagnostics.h"

#include <charconv>

namespace shardc {
namespace {

struct Expected {
  uint32_t line;
  std::string text;
  bool matched = false;
};

// Parses the expectations of one source line; malformed ones are reported as mismatches.
void parseLine(std::string_view line, uint32_t lineNo, std::vector<Expected>& out,
               std::vector<std::string>& problems) {
  const std::string_view key = "expected-error";
  for (size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    size_t p = at + key.size();
    int64_t target = lineNo;
    if (p < line.size() && line[p] == '@') {
      ++p;
      int sign = 1;
      if (p < line.size() && (line[p] == '+' || line[p] == '-')) sign = line[p++] == '-' ? -1 : 1;
      int64_t off = 0;
      auto r = std::from_chars(line.data() + p, line.data() + line.size(), off);
      if (r.ec != std::errc()) {
        problems.push_back("line " + std::to_string(lineNo) + ": malformed expected-error offset");
        continue;
      }
      p = static_cast<size_t>(r.ptr - line.data());
      target += sign * off;
    }
    size_t open = line.find("{{", p), close = line.find("}}", p);
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      problems.push_back("line " + std::to_string(lineNo) + ": expected-error needs {{text}}");
      continue;
    }
    out.push_back(
        {static_cast<uint32_t>(target), std::string(line.substr(open + 2, close - open - 2))});
  }
}

} // namespace

std::vector<std::string> checkExpectedDiagnostics(std::string_view source,
                                                  const DiagEngine& diags) {
  std::vector<Expected> expected;
  std::vector<std::string> problems;
  uint32_t lineNo = 1;
  for (size_t start = 0; start <= source.size(); ++lineNo) {
    size_t end = source.find('\n', start);
    if (end == std::string_view::npos) end = source.size();
    parseLine(source.substr(start, end - start), lineNo, expected, problems);
    start = end + 1;
  }
  for (const Diagnostic& d : diags.diagnostics()) {
    bool found = false;
    for (Expected& e : expected)
      if (!e.matched && e.line == d.loc.line && d.message.find(e.text) != std::string::npos) {
        e.matched = found = true;
        break;
      }
    if (!found) problems.push_back("unexpected error: " + diags.format(d));
  }
  for (const Expected& e : expected)
    if (!e.matched)
      problems.push_back(diags.filename() + ":" + std::to_string(e.line) +
                         ": expected error not produced: {{" + e.text + "}}");
  return problems;
}

} // namespace shardc
