// The one YAML document of a target or fusion-rules file. Included only by their parsers:
// it brings in yaml-cpp.
#pragma once

#include <string>
#include <yaml-cpp/yaml.h>

namespace shardc {

// Throws shardc::Error "FILE:LINE: ..." for invalid YAML or more than one document (`what`
// names the kind of file: "a target file"). yaml-cpp 0.7 (Debian 12's) loops without end on
// a ',' that begins a token outside [ ] and { }, where YAML never allows one: such a ',' is
// refused before yaml-cpp reads the text.
YAML::Node loadOneYamlDocument(const std::string& text, const std::string& file,
                               const std::string& what);

} // namespace shardc
