// Robustness of the text-IR parser on every .ir file of the source tree (examples/ and
// test/): every prefix and a few hundred deterministic byte mutations of each file must
// parse or fail with a positioned diagnostic, never crash; whatever parses must print to
// text that parses back to the same text, with and without its sharding annotations.
#include "shardc/ir/Diagnostics.h"
#include "shardc/ir/IR.h"
#include "shardc/ir/Parser.h"
#include "shardc/ir/Printer.h"
#include "shardc/ir/Verifier.h"
#include "shardc/sharding/Annotations.h"
#include "shardc/support/FileUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <random>

using namespace shardc;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> irFiles() {
  std::vector<fs::path> files;
  for (const char* dir : {"examples", "test"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(SHARDC_SOURCE_DIR) / dir))
      if (e.is_regular_file() && e.path().extension() == ".ir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string sourceRelative(const fs::path& p) {
  return fs::relative(p, SHARDC_SOURCE_DIR).string();
}

// An input to fuzz: a whole file, or one `//--- name` part of a split-file test (most tests
// keep many small cases in one file, and the parser stops at the first error).
struct Unit {
  std::string name;
  std::string text;
};

std::vector<Unit> units() {
  std::vector<Unit> out;
  for (const fs::path& p : irFiles()) {
    std::string text = readFile(p.string()), rel = sourceRelative(p);
    out.push_back({rel, text});
    const std::string marker = "//--- ";
    size_t at = text.rfind(marker, 0) == 0 ? 0 : text.find("\n" + marker);
    while (at != std::string::npos) {
      size_t nameStart = text.find(marker, at) + marker.size();
      size_t bodyStart = text.find('\n', nameStart);
      if (bodyStart == std::string::npos) break;
      size_t next = text.find("\n" + marker, bodyStart);
      size_t end = next == std::string::npos ? text.size() : next + 1;
      out.push_back({rel + ":" + text.substr(nameStart, bodyStart - nameStart),
                     text.substr(bodyStart + 1, end - bodyStart - 1)});
      at = next;
    }
  }
  return out;
}

void expectLocated(const DiagEngine& diags, std::string_view text, const std::string& what) {
  uint32_t lines = static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  for (const Diagnostic& d : diags.diagnostics()) {
    EXPECT_GE(d.loc.line, 1u) << what << ": " << diags.format(d);
    EXPECT_LE(d.loc.line, lines) << what << ": " << diags.format(d);
    EXPECT_GE(d.loc.col, 1u) << what << ": " << diags.format(d);
  }
}

// The plan from a parsed module's annotations, if they are valid, prints to text that gives
// the same plan back.
void checkAnnotations(const Module& m, const ParsedAnnotations& annotations, std::string_view text,
                      const std::string& what) {
  DiagEngine diags("fuzz.ir");
  ShardingPlan plan = planFromAnnotations(annotations, diags);
  expectLocated(diags, text, what);
  if (diags.hasErrors()) return;
  std::string printed = printShardedModule(m, plan);
  DiagEngine again("printed.ir");
  ParsedAnnotations reparsed;
  std::unique_ptr<Module> m2 = parseModule(printed, again, reparsed);
  ShardingPlan plan2 = m2 ? planFromAnnotations(reparsed, again) : ShardingPlan();
  if (again.hasErrors()) {
    ADD_FAILURE() << what << ": printed annotations do not parse back: "
                  << again.format(again.diagnostics()[0]) << "\n"
                  << printed;
    return;
  }
  EXPECT_EQ(printShardedModule(*m2, plan2), printed)
      << what << ": printing annotations is not a fixed point";
}

// Parses `text`; on failure checks that there is a diagnostic inside the text. On success
// verifies the module and checks that printing is a fixed point, with and without the
// annotations. Returns whether it parsed; `what` names the input in failure messages.
bool parseChecked(std::string_view text, const std::string& what) {
  DiagEngine diags("fuzz.ir");
  ParsedAnnotations annotations;
  std::unique_ptr<Module> m = parseModule(text, diags, annotations);
  if (m) verifyModule(*m, diags);
  if (!m) {
    EXPECT_TRUE(diags.hasErrors()) << what << ": parse failed without a diagnostic";
  }
  expectLocated(diags, text, what);
  if (!m) return false;
  checkAnnotations(*m, annotations, text, what);
  std::string printed = printModule(*m);
  DiagEngine again("printed.ir");
  std::unique_ptr<Module> m2 = parseModule(printed, again);
  if (!m2) {
    ADD_FAILURE() << what << ": printed module does not parse: "
                  << (again.hasErrors() ? again.format(again.diagnostics()[0]) : "") << "\n"
                  << printed;
    return true;
  }
  EXPECT_EQ(printModule(*m2), printed) << what << ": printing is not a fixed point";
  return true;
}

// One random edit: overwrite, insert or delete a byte, duplicate or drop a short run, or
// swap a number for an edge value. Overwrites favour bytes that matter to the grammar, to
// get past the first token.
void mutate(std::string& s, std::mt19937& rng) {
  static const std::string kInteresting = "0123456789-+.e%@\"[](){}<>,:=/\\\n fi_x";
  // Plain modulo, not a <random> distribution: mt19937's output is the same on every
  // standard library, so the mutants are too.
  auto pick = [&](size_t n) { return static_cast<size_t>(rng()) % n; };
  auto byte = [&]() -> char {
    if (pick(4) == 0) return static_cast<char>(pick(256));
    return kInteresting[pick(kInteresting.size())];
  };
  if (s.empty()) {
    s.push_back(byte());
    return;
  }
  size_t at = pick(s.size());
  switch (pick(6)) {
  case 0:
    s[at] = byte();
    break;
  case 1:
    s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), byte());
    break;
  case 2:
    s.erase(at, 1);
    break;
  case 3: {
    size_t len = std::min<size_t>(1 + pick(16), s.size() - at);
    s.insert(pick(s.size()), s.substr(at, len));
    break;
  }
  case 4: { // replace the number at or after `at` by an edge value, to reach the shape rules
    static const char* kNumbers[] = {"0",
                                     "1",
                                     "-1",
                                     "2",
                                     "-2",
                                     "3",
                                     "65536",
                                     "2147483648",
                                     "-9223372036854775808",
                                     "9223372036854775807",
                                     "281474976710656",
                                     "1e308",
                                     "nan",
                                     "-inf",
                                     "0.5"};
    size_t b = s.find_first_of("0123456789", at);
    if (b == std::string::npos) break;
    if (b > 0 && s[b - 1] == '-') --b;
    size_t e = s.find_first_not_of("0123456789.e", b + 1);
    s.replace(b, (e == std::string::npos ? s.size() : e) - b, kNumbers[pick(std::size(kNumbers))]);
    break;
  }
  default:
    s.erase(at, 1 + pick(16));
    break;
  }
}

TEST(ParserFuzzTest, FindsTheCorpus) {
  auto files = irFiles();
  auto has = [&](const std::string& rel) {
    return std::any_of(files.begin(), files.end(),
                       [&](const fs::path& p) { return sourceRelative(p) == rel; });
  };
  EXPECT_TRUE(has("examples/mlp.ir"));
  EXPECT_TRUE(has("test/IR/roundtrip.ir"));
}

TEST(ParserFuzzTest, ValidFilesRoundTrip) {
  // These must parse, so that the round-trip check below is not vacuous.
  for (const char* rel :
       {"examples/mlp.ir", "test/IR/roundtrip.ir", "test/sharding/annotations.ir"}) {
    std::string text = readFile((fs::path(SHARDC_SOURCE_DIR) / rel).string());
    EXPECT_TRUE(parseChecked(text, rel)) << rel << " should parse";
  }
  int parsed = 0;
  for (const Unit& u : units())
    parsed += parseChecked(u.text, u.name);
  EXPECT_GE(parsed, 2);
}

// Units up to this size are cut at every byte, except deep inside a comment: a cut there
// parses like a cut at the comment's start, and the tests' many CHECK lines would otherwise
// dominate. Larger units (say a model with its weights written out) get evenly spaced cuts
// and fewer mutants within a parse budget, so that one big file cannot make the test
// quadratic.
constexpr size_t kEveryPrefixUpTo = 4 * 1024;
constexpr size_t kParseBudgetBytes = 8 << 20;

std::vector<size_t> cutPoints(const std::string& text) {
  size_t size = text.size();
  std::vector<size_t> cuts;
  if (size <= kEveryPrefixUpTo) {
    bool inString = false;
    size_t commentStart = std::string::npos; // of the current line's comment
    for (size_t i = 0; i <= size; ++i) {
      if (commentStart == std::string::npos || i <= commentStart + 4) cuts.push_back(i);
      if (i == size) break;
      char c = text[i];
      if (c == '\n')
        inString = false, commentStart = std::string::npos;
      else if (commentStart != std::string::npos)
        continue;
      else if (c == '"' && (i == 0 || text[i - 1] != '\\'))
        inString = !inString;
      else if (!inString && c == '/' && i + 1 < size && text[i + 1] == '/')
        commentStart = i;
    }
    return cuts;
  }
  size_t count = std::max<size_t>(64, kParseBudgetBytes / size);
  for (size_t i = 0; i <= count; ++i)
    cuts.push_back(size * i / count);
  return cuts;
}

TEST(ParserFuzzTest, EveryPrefix) {
  for (const Unit& u : units()) {
    for (size_t n : cutPoints(u.text)) {
      parseChecked(std::string_view(u.text).substr(0, n),
                   u.name + " truncated to " + std::to_string(n) + " bytes");
      if (::testing::Test::HasFailure()) return; // one broken file would print thousands
    }
  }
}

TEST(ParserFuzzTest, RandomMutations) {
  // SHARDC_FUZZ_MUTANTS=N runs a longer campaign locally.
  int mutantsPerUnit = 200;
  if (const char* n = std::getenv("SHARDC_FUZZ_MUTANTS")) mutantsPerUnit = std::atoi(n);
  for (const Unit& u : units()) {
    // Seeded by the unit's name (FNV-1a), so a failure reproduces whatever other files exist.
    uint32_t seed = 2166136261u;
    for (char c : u.name)
      seed = (seed ^ static_cast<uint8_t>(c)) * 16777619u;
    std::mt19937 rng(seed);
    int budget = static_cast<int>(std::max<size_t>(8, kParseBudgetBytes / (u.text.size() + 1)));
    for (int i = 0; i < std::min(mutantsPerUnit, budget); ++i) {
      std::string mutant = u.text;
      int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e)
        mutate(mutant, rng);
      parseChecked(mutant, u.name + " mutant " + std::to_string(i));
      if (::testing::Test::HasFailure()) {
        ADD_FAILURE() << "first failing mutant of " << u.name << ":\n" << mutant;
        return;
      }
    }
  }
}

} // namespace
