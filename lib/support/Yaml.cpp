#include "shardc/support/Yaml.h"

#include "shardc/support/Error.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

namespace shardc {
namespace {

// Counts the documents of a stream and where each begins; events inside them are ignored.
class DocumentCounter : public YAML::EventHandler {
public:
  int documents = 0;
  YAML::Mark secondAt;
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents == 2) secondAt = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The offset of the first byte of `text` that is not part of well-formed UTF-8 (overlong
// forms, surrogates and code points beyond U+10FFFF included), or npos.
size_t firstInvalidUtf8(const std::string& text) {
  size_t i = 0, n = text.size();
  auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  while (i < n) {
    unsigned char c = at(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    if (len == 0 || i + len > n) return i;
    unsigned char lo = 0x80, hi = 0xBF; // the second byte's range (Unicode table 3-7)
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    if (at(i + 1) < lo || at(i + 1) > hi) return i;
    for (size_t k = 2; k < len; ++k)
      if (at(i + k) < 0x80 || at(i + k) > 0xBF) return i;
    i += len;
  }
  return std::string::npos;
}

} // namespace

YAML::Node loadOneYamlDocument(const std::string& text, const std::string& file,
                               const std::string& what) {
  // YAML is Unicode text; names read from it reach logs, JSON and the report page.
  if (size_t bad = firstInvalidUtf8(text); bad != std::string::npos) {
    size_t line = 1 + static_cast<size_t>(std::count(
                          text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n'));
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[bad]));
    throw Error(file + ":" + std::to_string(line) + ": not UTF-8 text (byte " + byte + "); " +
                what + " is YAML, which is UTF-8");
  }
  try {
    // Documents are counted up to the second, not loaded all: on a token that begins no
    // document (a ',' outside [ ] and { }) yaml-cpp 0.7's LoadAll makes empty documents
    // without end. A second document after "---" would be ignored without a word.
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentCounter counter;
    while (counter.documents < 2 && parser.HandleNextDocument(counter)) {
    }
    if (counter.documents > 1)
      throw Error(file + ":" + std::to_string(counter.secondAt.line + 1) +
                  ": a second YAML document (or a token no document begins with) starts here; " +
                  what + " is one document");
    return YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this one is "bad file".
    std::string at = e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1);
    throw Error(file + at + ": nested more than " + std::to_string(e.depth() - 1) +
                " levels deep (lists and maps within each other); " + what + " needs a few levels");
  } catch (const YAML::Exception& e) {
    std::string at = e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1);
    throw Error(file + at + ": invalid YAML: " + e.msg);
  }
}

} // namespace shardc
