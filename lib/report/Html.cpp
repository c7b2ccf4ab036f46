#include "Html.h"

#include "shardc/cost/CostModel.h"

#include <cmath>
#include <cstdio>

namespace shardc::report {

std::string esc(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string seconds(double s) {
  return std::isfinite(s) ? formatSeconds(s) : "n/a";
}

std::string bytes(double b) {
  return formatBytes(b);
}

std::string num(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", std::isfinite(v) ? v : 0.0);
  return buf;
}

std::string svgOpen(const std::string& cls, double w, double h, const std::string& id) {
  return "<svg class=\"" + esc(cls) + "\"" + (id.empty() ? "" : " id=\"" + esc(id) + "\"") +
         " width=\"" + px(w) + "\" height=\"" + px(h) + "\" viewBox=\"0 0 " + px(w) + " " + px(h) +
         "\" xmlns=\"http://www.w3.org/2000/svg\">";
}

std::string svgText(double x, double y, const std::string& text, const std::string& cls,
                    const std::string& anchor) {
  return "<text" + (cls.empty() ? "" : " class=\"" + esc(cls) + "\"") + " x=\"" + px(x) +
         "\" y=\"" + px(y) + "\"" + (anchor.empty() ? "" : " text-anchor=\"" + anchor + "\"") +
         ">" + esc(text) + "</text>";
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

} // namespace shardc::report
