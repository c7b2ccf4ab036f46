// The report's charts as inline SVG: bars, stacked bars against a capacity, line charts and a
// timeline. Colours come from CSS classes (Assets.cpp), so a chart carries no style of its own.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace shardc::report {

using Format = std::string (*)(double);

struct Bar {
  std::string label;
  double value = 0;
  std::string cls;   // CSS class of the bar
  std::string note;  // shown after the value ("infeasible", "chosen")
  bool known = true; // false: the value reads "n/a" (an infeasible plan has no step time)
};
// One horizontal bar per entry, scaled to the largest value.
std::string barChart(const std::string& cls, const std::vector<Bar>& bars, Format format);

struct Segment {
  std::string label;
  double value = 0;
  std::string cls;
};
struct StackRow {
  std::string label;
  std::vector<Segment> segments;
};
// One stacked bar per row against `capacity` (a line on the scale, or named when it is over
// 20 times the largest bar), with a legend of the first row's segments.
std::string stackedBars(const std::string& cls, const std::vector<StackRow>& rows, double capacity,
                        Format format);

struct Series {
  std::string name, cls;
  std::vector<std::pair<double, double>> points; // (x, y), x increasing
  bool dots = false;                             // points, not a line
};
// Lines over a shared x axis (steps), with the axes' ranges labelled; long series are thinned
// to at most 1001 points a line, the last one kept.
std::string lineChart(const std::string& id, const std::string& xLabel, const std::string& yLabel,
                      const std::vector<Series>& series);

struct Span {
  double width = 0; // relative
  std::string cls, title;
  bool marked = false; // drawn outlined (a hypersection body's section)
};
// Spans laid end to end across the chart's width; past 800, consecutive ones drawn as one.
std::string timeline(const std::string& id, const std::vector<Span>& spans);

} // namespace shardc::report
