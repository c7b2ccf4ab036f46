#include "shardc/support/Yaml.h"

#include "shardc/support/Error.h"

#include <sstream>
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

} // namespace

YAML::Node loadOneYamlDocument(const std::string& text, const std::string& file,
                               const std::string& what) {
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
  } catch (const YAML::Exception& e) {
    std::string at = e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1);
    throw Error(file + at + ": invalid YAML: " + e.msg);
  }
}

} // namespace shardc
