#include "shardc/report/Report.h"

#include "Assets.h"
#include "Charts.h"
#include "Html.h"
#include "ShardingView.h"

#include "shardc/support/Error.h"
#include "shardc/support/JsonDepth.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>

namespace shardc {
namespace {
using json = nlohmann::json;
using namespace report;

// Fields of the PEF's JSON read defensively: a forged PEF may hold any JSON in its cost text.
double number(const json& j, const char* key, double fallback = 0) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}
std::string string(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}
// An integer field; `fallback` unless it is a number in int64_t's range.
int64_t integer(const json& j, const char* key, int64_t fallback = 0) {
  double v = number(j, key, NAN);
  return std::isfinite(v) && std::fabs(v) < 9e18 ? static_cast<int64_t>(v) : fallback;
}
const json& member(const json& j, const char* key) {
  static const json none;
  return j.is_object() && j.contains(key) ? j[key] : none;
}
std::vector<int64_t> ints(const json& j) {
  std::vector<int64_t> out;
  if (j.is_array())
    for (const json& v : j)
      out.push_back(v.is_number_integer() ? v.get<int64_t>() : 0);
  return out;
}

json parseFile(const std::string& text, const std::string& what) {
  if (jsonDepth(text) > 32) throw Error(what + ": nested too deep to be shardc's");
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error(what + ": not valid JSON");
  return j;
}

struct Metrics {
  std::vector<std::pair<double, double>> loss, evalLoss, throughput;
};

// StepReporter's records; anything else is named by its line.
Metrics readMetrics(const ReportInputs& in) {
  Metrics m;
  size_t lineNo = 0, start = 0;
  const std::string& t = in.metricsText;
  while (start < t.size()) {
    size_t end = t.find('\n', start);
    if (end == std::string::npos) end = t.size();
    std::string line = t.substr(start, end - start);
    start = end + 1;
    ++lineNo;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = "--metrics " + in.metricsPath + " line " + std::to_string(lineNo);
    json r = parseFile(line, where);
    if (!r.is_object() || !r.contains("step") || !r["step"].is_number())
      throw Error(where + ": not a record of shardc run --metrics (an object with a step)");
    double step = r["step"].get<double>();
    auto value = [&](const char* key) {
      if (!r.contains(key) || !(r[key].is_number() || r[key].is_null()))
        throw Error(where + ": \"" + key + "\" missing or not a number");
      return r[key].is_null() ? NAN : r[key].get<double>();
    };
    if (r.contains("eval") && !r["eval"].is_boolean())
      throw Error(where + ": \"eval\" is not true or false");
    if (r.contains("eval") && r["eval"].get<bool>()) {
      m.evalLoss.emplace_back(step, value("eval_loss"));
      continue;
    }
    m.loss.emplace_back(step, value("loss"));
    m.throughput.emplace_back(step, value("samples_per_s"));
  }
  if (m.loss.empty() && m.evalLoss.empty())
    throw Error("--metrics " + in.metricsPath +
                ": no records (is it a shardc run --metrics file?)");
  // Runs continued with --resume append: a step seen again replaces the earlier one.
  for (auto* s : {&m.loss, &m.evalLoss, &m.throughput}) {
    std::stable_sort(s->begin(), s->end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<double, double>> kept;
    for (const auto& p : *s)
      if (!kept.empty() && kept.back().first == p.first)
        kept.back() = p;
      else
        kept.push_back(p);
    *s = std::move(kept);
  }
  return m;
}

json readStats(const ReportInputs& in, const json& pef) {
  std::string what = "--stats " + in.statsPath;
  json s = parseFile(in.statsText, what);
  if (!s.is_object() || !s.contains("median_step_seconds") || !s["median_step_seconds"].is_number())
    throw Error(what + ": not the file of shardc run --stats-json (no median_step_seconds)");
  for (const char* key : {"seconds_by_op", "seconds_by_kernel"})
    if (s.contains(key) && !s[key].is_object())
      throw Error(what + ": \"" + key + "\" is not an object");
  if (s.contains("sections") && !s["sections"].is_array())
    throw Error(what + ": \"sections\" is not a list");
  if (string(s, "pef_checksum") != string(pef, "checksum"))
    throw Error(what + ": measured on another PEF (" +
                (string(s, "pef").empty() ? "unnamed" : string(s, "pef")) + ", checksum " +
                string(s, "pef_checksum") + "); " + in.pefPath + " has checksum " +
                string(pef, "checksum") + ". Run it with --stats-json again");
  return s;
}

std::string row(const std::vector<std::string>& cells) {
  std::string out = "<tr>";
  for (const std::string& c : cells)
    out += c;
  return out + "</tr>\n";
}
std::string td(const std::string& text) {
  return "<td>" + esc(text) + "</td>";
}
std::string tdNum(double v, const std::string& shown) {
  return "<td class=\"n\" data-v=\"" + num(v, 9) + "\">" + esc(shown) + "</td>";
}

std::string summary(const ReportInputs& in, const json& p, const json& stats) {
  const json& cost = member(p, "cost");
  std::string meshText;
  for (const json& a : member(p, "mesh"))
    meshText += (meshText.empty() ? "" : " x ") + string(a, "axis") + " " +
                std::to_string(integer(a, "size", 1));
  // The recorded command line: shardc compile MODEL [flags].
  std::string model;
  bool afterCommand = false;
  for (const json& a : member(p, "compile_args")) {
    std::string arg = a.is_string() ? a.get<std::string>() : "";
    if (afterCommand && model.empty() && !arg.empty() && arg[0] != '-') model = arg;
    afterCommand = afterCommand || arg == "compile";
  }
  std::string out = "<section id=\"summary\"><h2>Summary</h2><table class=\"facts\">";
  auto fact = [&](const std::string& k, const std::string& v) { out += row({td(k), td(v)}); };
  fact("PEF", in.pefPath);
  fact("model", model.empty() ? "(not recorded)" : model);
  fact("mode", string(p, "mode"));
  fact("target", string(p, "arch") +
                     (string(cost, "target").empty() ? "" : " (" + string(cost, "target") + ")"));
  fact("mesh", meshText.empty() ? "one device" : meshText);
  fact("parameters",
       num(number(p, "parameter_count"), 6) + " values, " + bytes(number(p, "parameter_bytes")));
  fact("optimization level", string(p, "optimization_level"));
  if (member(p, "search").is_object())
    fact("partition", "auto-partition chose " + string(p["search"], "chosen"));
  if (cost.is_object()) {
    fact("estimated step", seconds(number(cost, "step_seconds")) + ": compute " +
                               seconds(number(cost, "compute_seconds")) + ", communication " +
                               seconds(number(cost, "communication_seconds")) + ", overlap " +
                               seconds(number(cost, "overlap_seconds")));
    std::string kinds;
    for (const auto& [k, v] : member(cost, "communication_by_kind").items())
      if (v.is_number()) kinds += (kinds.empty() ? "" : ", ") + k + " " + seconds(v.get<double>());
    fact("communication by kind", kinds.empty() ? "none" : kinds);
    fact("FLOP utilization", num(100 * number(cost, "flop_utilization"), 3) + "%");
    const json& mem = member(cost, "memory");
    double peak = number(mem, "peak_bytes"), cap = number(mem, "capacity_bytes");
    fact("memory per device",
         bytes(peak) + " of " + bytes(cap) + " (" + num(cap > 0 ? 100 * peak / cap : 0, 3) + "%)");
  } else {
    fact("estimate", "none (compiled by a shardc before cost estimates)");
  }
  if (stats.is_object())
    fact("measured step", seconds(number(stats, "median_step_seconds")) + " median of " +
                              std::to_string(integer(stats, "steps")) + " steps; peak " +
                              bytes(number(stats, "peak_bytes_per_device")) + " per device");
  return out + "</table></section>\n";
}

std::vector<AxisSize> meshOf(const json& p) {
  std::vector<AxisSize> mesh;
  for (const json& a : member(p, "mesh"))
    mesh.push_back({string(a, "axis"), integer(a, "size", 1)});
  return mesh;
}

std::string meshSection(const std::vector<AxisSize>& mesh) {
  std::string out = "<section id=\"mesh\"><h2>Mesh</h2>";
  if (mesh.empty()) return out + "<p>One device: the program is not partitioned.</p></section>\n";
  out += "<p class=\"legend-row\">Axes:";
  int64_t n = 1;
  for (size_t i = 0; i < mesh.size(); ++i) {
    out += "<span class=\"ax" + std::to_string(i % 6) + "\"></span>" + esc(mesh[i].name) + " " +
           std::to_string(mesh[i].size);
    n *= mesh[i].size;
  }
  return out + " — " + std::to_string(n) + " devices</p>" + meshGrid(mesh) + "</section>\n";
}

std::string shardingsSection(const json& p, const std::vector<AxisSize>& mesh) {
  std::string out = "<section id=\"shardings\"><h2>Shardings</h2>";
  const json& part = member(p, "partition");
  if (!part.is_object())
    return out + "<p>Not partitioned: every argument is whole on one device.</p></section>\n";
  std::vector<ArgView> args;
  for (const json& a : member(part, "arguments")) {
    ArgView v{string(a, "name"),
              string(a, "kind"),
              string(a, "sharding"),
              ints(member(a, "shape")),
              ints(member(a, "local_shape")),
              {},
              ints(member(a, "chunks")),
              integer(a, "local_bytes")};
    for (const json& d : member(a, "dims")) {
      v.dims.emplace_back();
      if (d.is_array())
        for (const json& axis : d)
          if (axis.is_string()) v.dims.back().push_back(axis.get<std::string>());
    }
    args.push_back(std::move(v));
  }
  std::vector<ArgGroup> groups = groupByRole(args);
  out += "<p>" + std::to_string(args.size()) + " arguments in " + std::to_string(groups.size()) +
         " groups (same kind, name up to its numbers, shape and sharding). A box is the tensor's "
         "last two dimensions, cut where devices' pieces meet, in the colour of the mesh axis "
         "that splits it; device 0's piece is shaded. <button class=\"expand\">expand "
         "all</button></p>";
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"param", "Parameters"}, {"opt_state", "Optimizer and model state"}, {"input", "Inputs"}};
  for (const auto& [kind, title] : kinds) {
    std::string body;
    int64_t count = 0;
    for (const ArgGroup& g : groups) {
      const ArgView& first = *g.members.front();
      if (first.kind != kind) continue;
      ++count;
      int64_t total = 0;
      std::string names;
      for (const ArgView* m : g.members) {
        total += m->localBytes;
        names += (names.empty() ? "" : ", ") + m->name;
      }
      bool many = g.members.size() > 1;
      std::string label = many ? g.role + "  ×" + std::to_string(g.members.size()) : first.name;
      body += "<details class=\"arg-group\" data-kind=\"" + esc(kind) + "\"><summary><code>" +
              esc(label) + "</code> " + esc(shapeText(first.shape)) + " <code>" +
              esc(first.sharding) + "</code> → " + esc(shapeText(first.local)) + ", " +
              esc(bytes(static_cast<double>(total))) +
              (many ? " per device for all " + std::to_string(g.members.size()) : " per device") +
              axisChips(first, mesh) + "</summary>" + shardingDrawing(first, mesh) +
              "<p class=\"members\">" + esc(names) + "</p></details>\n";
    }
    if (count) out += "<h3>" + title + " (" + std::to_string(count) + " groups)</h3>" + body;
  }
  return out + "</section>\n";
}

std::string memorySection(const json& p, const json& stats) {
  const json& cost = member(p, "cost");
  const json& mem = member(cost, "memory");
  std::string out = "<section id=\"memory\"><h2>Memory per device</h2>";
  if (!mem.is_object()) return out + "<p>No estimate in this PEF.</p></section>\n";
  double devices = std::max(1.0, number(cost, "devices", 1));
  std::vector<Segment> segs = {{"parameters", number(mem, "parameters"), "params"},
                               {"optimizer state", number(mem, "optimizer_state"), "state"},
                               {"inputs", number(mem, "inputs"), "inputs"},
                               {"activations", number(mem, "activations"), "activations"}};
  // SPMD with even splits: every device holds the same pieces, so one bar stands for all.
  std::vector<StackRow> rows = {
      {devices > 1 ? "each of " + num(devices, 6) + " devices" : "device 0", segs}};
  if (stats.is_object()) {
    auto measuredRow = [&](const std::string& label, double b) {
      rows.push_back({label, {{"measured peak", b, "measured"}}});
    };
    std::vector<std::pair<double, size_t>> peaks; // bytes, device
    for (const json& b : member(stats, "peak_bytes_by_device"))
      peaks.emplace_back(b.is_number() ? b.get<double>() : 0, peaks.size());
    bool differ = std::any_of(peaks.begin(), peaks.end(),
                              [&](const auto& b) { return b.first != peaks[0].first; });
    // Devices measured alike are one bar; otherwise one per device (past 64, the least, the
    // median and the most).
    if (peaks.empty())
      measuredRow("measured, most on a device", number(stats, "peak_bytes_per_device"));
    else if (!differ)
      measuredRow(peaks.size() > 1 ? "measured, each of " + std::to_string(peaks.size())
                                   : std::string("measured"),
                  peaks[0].first);
    else if (peaks.size() <= 64)
      for (const auto& [b, d] : peaks)
        measuredRow("measured, device " + std::to_string(d), b);
    else {
      std::sort(peaks.begin(), peaks.end());
      for (const auto& [which, k] :
           {std::pair{"least", size_t{0}}, std::pair{"median", peaks.size() / 2},
            std::pair{"most", peaks.size() - 1}})
        measuredRow(std::string("measured, ") + which + ": device " +
                        std::to_string(peaks[k].second),
                    peaks[k].first);
    }
  }
  out += "<p>Estimated: the arguments plus the peak of values alive at once, against the "
         "target's capacity. Every device holds the same shapes (the program is SPMD).</p>";
  return out + stackedBars("memory-bars", rows, number(mem, "capacity_bytes"), bytes) +
         "</section>\n";
}

std::string timeSection(const json& p) {
  const json& cost = member(p, "cost");
  std::string out = "<section id=\"time\"><h2>Step time (estimated)</h2>";
  if (!cost.is_object()) return out + "<p>No estimate in this PEF.</p></section>\n";
  // Identical collectives (one per layer, say) are one row with their count.
  using Key = std::tuple<std::string, std::string, int64_t, double, double, bool>;
  std::map<Key, int64_t> same;
  for (const json& c : member(cost, "collectives")) {
    std::string axes;
    for (const json& a : member(c, "axes"))
      if (a.is_string()) axes += (axes.empty() ? "" : ",") + a.get<std::string>();
    ++same[{string(c, "kind"), axes, integer(c, "group"), number(c, "bytes"), number(c, "seconds"),
            member(c, "crosses_nodes").is_boolean() && c["crosses_nodes"].get<bool>()}];
  }
  auto byValue = [](const Bar& a, const Bar& b) { return a.value > b.value; };
  std::vector<Bar> bars, comm;
  for (const auto& [op, sec] : member(cost, "compute_by_op").items())
    if (sec.is_number()) bars.push_back({op, sec.get<double>(), "", ""});
  std::sort(bars.begin(), bars.end(), byValue);
  for (const auto& [k, n] : same) {
    const auto& [kind, axes, group, b, sec, crosses] = k;
    comm.push_back({kind + " {" + axes + "} " + bytes(b) + (n > 1 ? " ×" + std::to_string(n) : ""),
                    sec * static_cast<double>(n), "comm", ""});
  }
  std::sort(comm.begin(), comm.end(), byValue);
  // The 30 that take longest, then the rest as one bar.
  constexpr size_t kCommBars = 30;
  if (comm.size() > kCommBars) {
    Bar rest{std::to_string(comm.size() - kCommBars) + " other collectives", 0, "comm", ""};
    for (size_t i = kCommBars; i < comm.size(); ++i)
      rest.value += comm[i].value;
    comm.resize(kCommBars);
    comm.push_back(rest);
  }
  bars.insert(bars.end(), comm.begin(), comm.end());
  out += "<h3>Compute by op kind, then each collective (identical ones together)</h3>" +
         barChart("time-bars", bars, seconds);
  out += "<h3>Collectives</h3>";
  if (same.empty()) return out + "<p>None: no device sends anything.</p></section>\n";
  out +=
      "<table id=\"collectives\" class=\"sortable\"><thead><tr><th>kind</th><th>axes</th>"
      "<th class=\"n\">group</th><th class=\"n\">bytes each</th><th class=\"n\">seconds each</th>"
      "<th class=\"n\">count</th><th class=\"n\" data-sort=\"desc\">seconds in all</th>"
      "<th>crosses nodes</th></tr></thead><tbody>";
  for (const auto& [k, n] : same) {
    const auto& [kind, axes, group, b, sec, crosses] = k;
    out += row({td(kind), td("{" + axes + "}"),
                tdNum(static_cast<double>(group), std::to_string(group)), tdNum(b, bytes(b)),
                tdNum(sec, seconds(sec)), tdNum(static_cast<double>(n), std::to_string(n)),
                tdNum(sec * static_cast<double>(n), seconds(sec * static_cast<double>(n))),
                td(crosses ? "yes" : "no")});
  }
  return out + "</tbody></table></section>\n";
}

std::string sectionsSection(const json& p, const json& stats) {
  const json& secs = member(p, "sections");
  std::string out = "<section id=\"sections\"><h2>Sections</h2>";
  if (!secs.is_array() || secs.empty())
    return out + "<p>None recorded (compiled by a shardc before sections).</p></section>\n";
  std::vector<double> measured(secs.size(), -1);
  if (stats.is_object())
    for (const json& s : member(stats, "sections")) {
      int64_t k = integer(s, "index", -1);
      if (k >= 0 && static_cast<size_t>(k) < measured.size())
        measured[static_cast<size_t>(k)] = number(s, "measured_seconds");
    }
  bool timed = std::any_of(measured.begin(), measured.end(), [](double m) { return m >= 0; });
  std::vector<Span> spans;
  std::map<std::string, int64_t> phases;
  int64_t bodies = 0;
  for (size_t k = 0; k < secs.size(); ++k) {
    const json& s = secs[k];
    std::string phase = string(s, "phase");
    int64_t ops = integer(s, "num_ops");
    bool body = number(s, "body", -1) >= 0;
    bodies += body;
    ++phases[phase];
    std::string title = "#" + std::to_string(k) + " " + phase + ", " + std::to_string(ops) +
                        " ops" + (string(s, "rule").empty() ? "" : ", rule " + string(s, "rule")) +
                        (body ? ", hypersection body " + num(number(s, "body"), 6) : "");
    if (timed && measured[k] >= 0) title += ", measured " + seconds(measured[k]);
    spans.push_back(
        {timed ? std::max(measured[k], 0.0) : static_cast<double>(ops), phase, title, body});
  }
  out += "<p>" + std::to_string(secs.size()) + " sections (-" +
         esc(string(p, "optimization_level")) +
         "), laid end to end in program order, each as wide as " +
         (timed ? "its measured kernel time" : "its op count") + ". " + std::to_string(bodies) +
         " run a hypersection body (outlined).</p><p class=\"legend-row\">";
  for (const auto& [phase, n] : phases)
    out += "<span class=\"" + esc(phase) + "\"></span>" + esc(phase) + " " + std::to_string(n);
  if (bodies) out += "<span class=\"body\"></span>hypersection body";
  return out + "</p>" + timeline("sections-timeline", spans) + "</section>\n";
}

std::string searchSection(const json& p) {
  const json& s = member(p, "search");
  if (!s.is_object()) return "";
  std::string out =
      "<section id=\"search\"><h2>Auto-partition</h2><p>" + num(number(s, "episodes"), 9) +
      " episodes, " + num(number(s, "evaluations"), 9) + " plans evaluated over " +
      num(number(s, "plan_space"), 6) + " complete plans, " + seconds(number(s, "seconds")) +
      ". Chosen: <b>" + esc(string(s, "chosen")) + "</b>.</p>";
  std::vector<Bar> bars;
  auto add = [&](const std::string& name, const json& c, bool chosen) {
    bool feasible = member(c, "feasible").is_boolean() && c["feasible"].get<bool>();
    std::string peak = "peak " + bytes(number(c, "peak_bytes"));
    bars.push_back({name, feasible ? number(c, "step_seconds") : 0,
                    chosen     ? "chosen"
                    : feasible ? ""
                               : "infeasible",
                    chosen     ? "chosen, " + peak
                    : feasible ? peak
                               : "infeasible",
                    feasible});
  };
  for (const json& b : member(s, "baselines"))
    add("baseline " + string(b, "name"), b, false);
  if (member(s, "exhaustive").is_object()) add("exhaustive optimum", s["exhaustive"], false);
  add("tree search's best", member(s, "search_cost"), false);
  add("chosen: " + string(s, "chosen"), member(s, "cost"), true);
  out += "<h3>Estimated step time of each plan</h3>" + barChart("search-bars", bars, seconds);
  out += "<h3>The tree search's decisions, in order</h3><ol class=\"decisions\">";
  for (const json& d : member(s, "decisions"))
    if (d.is_string()) out += "<li><code>" + esc(d.get<std::string>()) + "</code></li>";
  out += "</ol>";
  if (member(s, "decisions").empty())
    out += "<p class=\"muted\">No decision: the best plan replicates every open group.</p>";
  return out + "</section>\n";
}

std::string measuredSection(const json& p, const json& stats) {
  if (!stats.is_object()) return "";
  const json& cost = member(p, "cost");
  bool estimated = member(cost, "step_seconds").is_number();
  std::string out = "<section id=\"measured\"><h2>Measured against estimated</h2><p>Step: "
                    "measured " +
                    seconds(number(stats, "median_step_seconds")) + " (median of " +
                    num(number(stats, "steps"), 9) + "), estimated " +
                    (estimated ? seconds(number(cost, "step_seconds")) : "none (no estimate)") +
                    ". Below, kernel seconds per step and device (the sum over the devices the "
                    "run timed, over their count) against the estimate per device.</p>";
  if (member(stats, "forward_only").is_boolean() && stats["forward_only"].get<bool>())
    out += "<p class=\"note\">This run ran the forward sections only (--sections forward); the "
           "estimates per op kind cover the whole step.</p>";
  std::map<std::string, std::pair<double, double>> ops; // estimated, measured
  for (const char* part : {"compute_by_op", "communication_by_kind"})
    for (const auto& [op, sec] : member(cost, part).items())
      if (sec.is_number()) ops[op].first += sec.get<double>();
  for (const auto& [op, sec] : member(stats, "seconds_by_op").items())
    if (sec.is_number()) ops[op].second = sec.get<double>();
  out += "<h3>Per op kind</h3><table id=\"measured-ops\" class=\"sortable\"><thead><tr><th>op</th>"
         "<th class=\"n\">estimated</th><th class=\"n\" data-sort=\"desc\">measured</th>"
         "<th class=\"n\">measured / estimated</th></tr></thead><tbody>";
  for (const auto& [op, em] : ops) {
    double ratio = em.first > 0 ? em.second / em.first : NAN;
    out += row(
        {td(op), tdNum(em.first, seconds(em.first)), tdNum(em.second, seconds(em.second)),
         tdNum(std::isfinite(ratio) ? ratio : 0, std::isfinite(ratio) ? num(ratio, 3) : "n/a")});
  }
  out += "</tbody></table>";
  const json& secs = member(stats, "sections");
  if (secs.is_array() && !secs.empty()) {
    struct Timed {
      double measured, estimated, index;
      std::string phase;
    };
    std::vector<Timed> all;
    double totalMeasured = 0, totalEstimated = 0;
    for (const json& s : secs) {
      all.push_back({number(s, "measured_seconds"), number(s, "estimated_seconds", NAN),
                     number(s, "index"), string(s, "phase")});
      totalMeasured += all.back().measured;
      if (std::isfinite(all.back().estimated)) totalEstimated += all.back().estimated;
    }
    // -o0 on a large model has tens of thousands: the table keeps those that took longest.
    constexpr size_t kRows = 100;
    std::sort(all.begin(), all.end(),
              [](const Timed& a, const Timed& b) { return a.measured > b.measured; });
    out += "<h3>Per section (estimates on " + esc(string(stats, "estimate_target")) + ")</h3><p>" +
           std::to_string(all.size()) + " sections: measured " + seconds(totalMeasured) +
           ", estimated " + seconds(totalEstimated) + " in all" +
           (all.size() > kRows ? "; the " + std::to_string(kRows) + " that took longest:" : ".") +
           "</p><table id=\"measured-sections\" class=\"sortable\"><thead><tr><th "
           "class=\"n\">#</th><th>phase</th><th class=\"n\">estimated</th><th class=\"n\" "
           "data-sort=\"desc\">measured</th><th class=\"n\">measured / estimated</th></tr></thead>"
           "<tbody>";
    all.resize(std::min(all.size(), kRows));
    for (const Timed& t : all) {
      bool estimated = std::isfinite(t.estimated) && t.estimated > 0;
      out += row({tdNum(t.index, num(t.index, 9)), td(t.phase),
                  tdNum(estimated ? t.estimated : 0, estimated ? seconds(t.estimated) : "n/a"),
                  tdNum(t.measured, seconds(t.measured)),
                  tdNum(estimated ? t.measured / t.estimated : 0,
                        estimated ? num(t.measured / t.estimated, 3) : "n/a")});
    }
    out += "</tbody></table>";
  }
  return out + "</section>\n";
}

std::string curvesSection(const Metrics& m) {
  std::string out = "<section id=\"curves\"><h2>Training curves</h2>";
  out += "<h3>Loss</h3>" + lineChart("loss-curve", "step", "loss",
                                     {{"training loss", "loss", m.loss, false},
                                      {"evaluation loss", "eval-loss", m.evalLoss, true}});
  if (!m.throughput.empty())
    out += "<h3>Throughput</h3>" + lineChart("throughput-curve", "step", "samples / s",
                                             {{"samples / s", "throughput", m.throughput, false}});
  return out + "</section>\n";
}

} // namespace

std::string renderReport(const ReportInputs& in) {
  json p = parseFile(in.inspectJson, in.pefPath);
  json stats = in.statsPath.empty() ? json() : readStats(in, p);
  std::vector<AxisSize> mesh = meshOf(p);
  std::string name = std::filesystem::path(in.pefPath).stem().string();
  std::string html = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                     esc("shardc report: " + name) + "</title><style>" + kStyle +
                     "</style></head>\n<body><h1>shardc report: " + esc(name) + "</h1>";
  html += summary(in, p, stats) + meshSection(mesh) + shardingsSection(p, mesh) +
          memorySection(p, stats) + timeSection(p) + sectionsSection(p, stats) + searchSection(p) +
          measuredSection(p, stats);
  if (!in.metricsPath.empty()) html += curvesSection(readMetrics(in));
  html += "<p class=\"muted\">shardc " + esc(string(p, "shardc_version")) + ", PEF created " +
          esc(string(p, "created_utc")) + "</p><script>" + kScript + "</script></body></html>\n";
  return html;
}

} // namespace shardc
