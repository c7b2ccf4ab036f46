#include "Charts.h"

#include "Html.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace shardc::report {
namespace {

constexpr double kWidth = 760, kLabel = 260, kValue = 150, kRow = 20;

std::string text(double x, double y, const std::string& s, const char* anchor = "") {
  return svgText(x, y, s, "", anchor);
}

std::string rect(double x, double y, double w, double h, const std::string& cls,
                 const std::string& title) {
  return "<rect class=\"" + esc(cls) + "\" x=\"" + px(x) + "\" y=\"" + px(y) + "\" width=\"" +
         px(std::max(w, 0.0)) + "\" height=\"" + px(h) + "\"><title>" + esc(title) +
         "</title></rect>";
}

// A length to draw: what a forged file may hold (NaN, negative) draws as nothing.
double drawn(double v) {
  return std::isfinite(v) && v > 0 ? v : 0;
}

} // namespace

std::string barChart(const std::string& cls, const std::vector<Bar>& bars, Format format) {
  double top = 0;
  for (const Bar& b : bars)
    top = std::max(top, drawn(b.value));
  double span = kWidth - kLabel - kValue;
  std::string out = svgOpen("bars " + cls, kWidth, kRow * static_cast<double>(bars.size()) + 4);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    double y = kRow * static_cast<double>(i);
    double w = top > 0 ? span * drawn(b.value) / top : 0;
    std::string value = b.known ? format(b.value) : "n/a";
    if (!b.note.empty()) value += b.known ? "  " + b.note : "";
    out += "<g class=\"bar\">" + text(kLabel - 6, y + 14, b.label, "end") +
           rect(kLabel, y + 3, w, kRow - 6, "bar " + b.cls, b.label + ": " + value) +
           text(kLabel + w + 6, y + 14, value) + "</g>";
  }
  return out + "</svg>";
}

std::string stackedBars(const std::string& cls, const std::vector<StackRow>& rows, double capacity,
                        Format format) {
  double top = 0;
  for (const StackRow& r : rows) {
    double sum = 0;
    for (const Segment& s : r.segments)
      sum += drawn(s.value);
    top = std::max(top, sum);
  }
  // A capacity far above what is used would shrink the bars to nothing: it is then named, not
  // drawn to scale.
  bool capacityOnScale = capacity > 0 && capacity <= 20 * top;
  if (capacityOnScale) top = std::max(top, capacity);
  double span = kWidth - kLabel - kValue;
  double legend = rows.empty() ? 0 : kRow;
  double h = legend + kRow * static_cast<double>(rows.size()) + 18;
  std::string out = svgOpen("stacked " + cls, kWidth, h);
  if (!rows.empty()) {
    double x = kLabel;
    for (const Segment& s : rows[0].segments) {
      out += rect(x, 4, 10, 10, s.cls, s.label) + text(x + 14, 13, s.label);
      x += 24 + 7 * static_cast<double>(s.label.size());
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const StackRow& r = rows[i];
    double y = legend + kRow * static_cast<double>(i), x = kLabel, sum = 0;
    out += "<g class=\"stack\">" + text(kLabel - 6, y + 14, r.label, "end");
    for (const Segment& s : r.segments) {
      double w = top > 0 ? span * drawn(s.value) / top : 0;
      out += rect(x, y + 3, w, kRow - 6, "segment " + s.cls, s.label + ": " + format(s.value));
      x += w;
      sum += drawn(s.value);
    }
    std::string note = format(sum);
    if (capacity > 0) note += " (" + num(100 * sum / capacity, 3) + "%)";
    out += text(x + 6, y + 14, note) + "</g>";
  }
  double y = legend + kRow * static_cast<double>(rows.size());
  if (capacityOnScale) {
    double x = kLabel + span * capacity / top;
    out += "<line class=\"capacity\" x1=\"" + px(x) + "\" x2=\"" + px(x) + "\" y1=\"" + px(legend) +
           "\" y2=\"" + px(y + 2) + "\"/>" +
           text(x, y + 14, "capacity " + format(capacity), "middle");
  } else if (capacity > 0) {
    out += "<text class=\"capacity\" x=\"" + px(kLabel) + "\" y=\"" + px(y + 14) + "\">capacity " +
           esc(format(capacity)) + ", far to the right of this scale</text>";
  }
  return out + "</svg>";
}

std::string lineChart(const std::string& id, const std::string& xLabel, const std::string& yLabel,
                      const std::vector<Series>& series) {
  constexpr double w = 760, h = 260, left = 70, right = 16, top = 24, bottom = 40;
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const Series& s : series)
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  std::string out = svgOpen("curve", w, h, id);
  if (!std::isfinite(x0)) return out + text(left, h / 2, "no finite values") + "</svg>";
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + (y0 == 0 ? 1 : std::fabs(y0) * 0.1);
  auto sx = [&](double x) { return left + (w - left - right) * (x - x0) / (x1 - x0); };
  auto sy = [&](double y) { return h - bottom - (h - top - bottom) * (y - y0) / (y1 - y0); };
  out += "<g class=\"axes\"><line x1=\"" + px(left) + "\" y1=\"" + px(h - bottom) + "\" x2=\"" +
         px(w - right) + "\" y2=\"" + px(h - bottom) + "\"/><line x1=\"" + px(left) + "\" y1=\"" +
         px(top) + "\" x2=\"" + px(left) + "\" y2=\"" + px(h - bottom) + "\"/>" +
         text(left - 4, top + 4, num(y1), "end") + text(left - 4, h - bottom, num(y0), "end") +
         text(left, h - bottom + 14, num(x0, 6), "middle") +
         text(w - right, h - bottom + 14, num(x1, 6), "end") +
         text((left + w) / 2, h - 6, xLabel, "middle") + text(left, top - 10, yLabel) + "</g>";
  double legendX = w - right;
  for (auto s = series.rbegin(); s != series.rend(); ++s) {
    legendX -= 16 + 7 * static_cast<double>(s->name.size());
    out += "<g class=\"legend " + esc(s->cls) + "\">" +
           rect(legendX, top - 20, 10, 10, "swatch", s->name) +
           text(legendX + 13, top - 11, s->name) + "</g>";
  }
  for (const Series& s : series) {
    size_t stride = (s.points.size() + 999) / 1000;
    std::vector<size_t> kept;
    for (size_t i = 0; i < s.points.size(); i += stride)
      kept.push_back(i);
    if (!kept.empty() && kept.back() + 1 != s.points.size()) kept.push_back(s.points.size() - 1);
    std::string pts;
    for (size_t i : kept) {
      const auto& [x, y] = s.points[i];
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if (s.dots)
        pts += "<circle cx=\"" + px(sx(x)) + "\" cy=\"" + px(sy(y)) + "\" r=\"3\"><title>" +
               esc(s.name + " " + num(y) + " at " + num(x, 6)) + "</title></circle>";
      else
        pts += px(sx(x)) + "," + px(sy(y)) + " ";
    }
    out += s.dots ? "<g class=\"series " + esc(s.cls) + "\">" + pts + "</g>"
                  : "<polyline class=\"series " + esc(s.cls) + "\" points=\"" + pts + "\"/>";
  }
  return out + "</svg>";
}

std::string timeline(const std::string& id, const std::vector<Span>& all) {
  constexpr double w = 760, h = 34;
  // Past kMaxSpans (a pixel or less each), runs of consecutive spans are drawn as one, in the
  // class of the widest, outlined when any is, titled with the range and each class' count.
  constexpr size_t kMaxSpans = 800;
  std::vector<Span> spans;
  size_t run = (all.size() + kMaxSpans - 1) / kMaxSpans;
  for (size_t i = 0; i < all.size(); i += run) {
    if (run == 1) {
      spans.push_back(all[i]);
      continue;
    }
    size_t end = std::min(all.size(), i + run);
    Span merged;
    std::map<std::string, std::pair<double, int64_t>> byClass; // width, count
    for (size_t k = i; k < end; ++k) {
      merged.width += all[k].width;
      merged.marked = merged.marked || all[k].marked;
      byClass[all[k].cls].first += all[k].width;
      ++byClass[all[k].cls].second;
    }
    double widest = -1;
    merged.title = "#" + std::to_string(i) + "..#" + std::to_string(end - 1) + ":";
    for (const auto& [cls, wc] : byClass) {
      merged.title += " " + cls + " " + std::to_string(wc.second);
      if (wc.first > widest) widest = wc.first, merged.cls = cls;
    }
    spans.push_back(merged);
  }
  double total = 0;
  for (const Span& s : spans)
    total += std::max(s.width, 0.0);
  std::string out = svgOpen("timeline", w, h, id);
  double x = 0;
  for (const Span& s : spans) {
    double sw = total > 0 ? w * std::max(s.width, 0.0) / total : 0;
    out += rect(x, 4, sw, h - 8, "span " + s.cls + (s.marked ? " body" : ""), s.title);
    x += sw;
  }
  return out + "</svg>";
}

} // namespace shardc::report
