// Small helpers for writing the report's HTML and SVG by hand: escaping and number formats.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shardc::report {

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string esc(const std::string& text);
// formatSeconds, or "n/a" for what is not finite.
std::string seconds(double s);
// "1.5 GiB" (shardc's formatBytes).
std::string bytes(double b);
// A number with `digits` significant digits ("0.0123", "1.23e+06").
std::string num(double v, int digits = 4);
// A coordinate for SVG: one decimal, no exponent.
std::string px(double v);

// "[16, 32]".
std::string shapeText(const std::vector<int64_t>& shape);

} // namespace shardc::report
