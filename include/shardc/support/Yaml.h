// The one YAML document of a target or fusion-rules file. Included only by their parsers:
// it brings in yaml-cpp.
#pragma once

#include <string>
#include <yaml-cpp/yaml.h>

namespace shardc {

// Throws shardc::Error "FILE:LINE: ..." for invalid YAML or more than one document (`what`
// names the kind of file: "a target file"). Never loops without end on the inputs that make
// yaml-cpp 0.7's LoadAll do so.
YAML::Node loadOneYamlDocument(const std::string& text, const std::string& file,
                               const std::string& what);

} // namespace shardc
