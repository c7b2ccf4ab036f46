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

// An <svg> element's opening tag, `w` x `h` pixels with a viewBox of the same size.
std::string svgOpen(const std::string& cls, double w, double h, const std::string& id = "");
// A <text> element at (x, y); `anchor` "middle" or "end" (empty: the start).
std::string svgText(double x, double y, const std::string& text, const std::string& cls = "",
                    const std::string& anchor = "");

// "[16, 32]".
std::string shapeText(const std::vector<int64_t>& shape);

} // namespace shardc::report
