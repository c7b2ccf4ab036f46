// shardc report's page from hand-made `inspect --json` text: the cuts of a sharding drawing,
// the grouping by role, the long timeline, escaping, and the errors of metrics and stats files.
#include "shardc/report/Report.h"
#include "shardc/support/Error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace shardc {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

nlohmann::json argument(const std::string& name, std::vector<int64_t> shape, nlohmann::json dims,
                        std::vector<int64_t> chunks = {}) {
  return {{"name", name},     {"kind", "param"},      {"sharding", dims.dump()},
          {"shape", shape},   {"local_shape", shape}, {"dims", dims},
          {"chunks", chunks}, {"local_bytes", 64}};
}

// A PEF on a data=2,model=4 mesh with `args` and `sections` sections.
std::string inspectJson(const nlohmann::json& args, int sections = 0) {
  nlohmann::json j = {{"mode", "training"},
                      {"arch", "cpu"},
                      {"checksum", "00000000000000aa"},
                      {"mesh", {{{"axis", "data"}, {"size", 2}}, {{"axis", "model"}, {"size", 4}}}},
                      {"partition", {{"arguments", args}}},
                      {"sections", nlohmann::json::array()}};
  for (int k = 0; k < sections; ++k)
    j["sections"].push_back({{"phase", k % 2 ? "backward" : "forward"}, {"num_ops", 1}});
  return j.dump();
}

std::string page(const std::string& json) {
  ReportInputs in;
  in.pefPath = "m.pef";
  in.inspectJson = json;
  return renderReport(in);
}

TEST(Report, CutsADimensionSplitOverTwoAxesMajorFirst) {
  // 8 pieces along dim 0: data cuts between blocks of model's 4 pieces (once), model between
  // the pieces in each block (6 times).
  std::string html =
      page(inspectJson(nlohmann::json::array({argument("w", {16, 8}, {{"data", "model"}, {}})})));
  EXPECT_EQ(count(html, "class=\"cut ax0\""), 1u);
  EXPECT_EQ(count(html, "class=\"cut ax1\""), 6u);
  EXPECT_EQ(count(html, "class=\"mine\""), 1u);
}

TEST(Report, CutsAChunkedDimensionChunkByChunk) {
  // q|k|v as 3 chunks, each split over model (4): chunk boundaries twice, model cuts 9 times,
  // and device 0 holds a piece of every chunk.
  std::string html =
      page(inspectJson(nlohmann::json::array({argument("qkv", {8, 24}, {{}, {"model"}}, {1, 3})})));
  EXPECT_EQ(count(html, "class=\"cut chunk\""), 2u);
  EXPECT_EQ(count(html, "class=\"cut ax1\""), 9u);
  EXPECT_EQ(count(html, "class=\"mine\""), 3u);
}

TEST(Report, GroupsArgumentsByRole) {
  nlohmann::json args = nlohmann::json::array();
  for (int l = 0; l < 3; ++l)
    args.push_back(argument("h" + std::to_string(l) + ".fc.w", {4, 8}, {{}, {"model"}}));
  args.push_back(argument("h3.fc.w", {4, 16}, {{}, {"model"}})); // another shape
  args.push_back(argument("h4.fc.w", {4, 8}, {{}, {}}));         // another sharding
  std::string html = page(inspectJson(args));
  EXPECT_EQ(count(html, "class=\"arg-group\""), 3u);
  EXPECT_EQ(count(html, "class=\"sharding-drawing\""), 3u);
  EXPECT_NE(html.find("<code>h#.fc.w  ×3</code>"), std::string::npos);
  EXPECT_NE(html.find("h0.fc.w, h1.fc.w, h2.fc.w"), std::string::npos);
}

TEST(Report, DrawsLongTimelinesInRuns) {
  std::string html = page(inspectJson(nlohmann::json::array(), 2000));
  EXPECT_NE(html.find("2000 sections"), std::string::npos);
  EXPECT_EQ(count(html, "<rect class=\"span "), 667u); // runs of 3
  EXPECT_NE(html.find("<title>#0..#2: backward 1 forward 2</title>"), std::string::npos);
}

TEST(Report, EscapesNamesFromThePef) {
  std::string html =
      page(inspectJson(nlohmann::json::array({argument("<script>alert(1)</script>", {4}, {{}})})));
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST(Report, NamesTheLineOfABadMetricsRecord) {
  ReportInputs in{
      "m.pef",   inspectJson(nlohmann::json::array()),
      "m.jsonl", "{\"step\": 1, \"loss\": 2, \"samples_per_s\": 1, \"step_s\": 1}\n\n[1]\n",
      "",        ""};
  try {
    renderReport(in);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--metrics m.jsonl line 3: not a record of shardc run --metrics (an "
                           "object with a step)");
  }
  in.metricsText = "{\"step\": 1, \"loss\": 2, \"samples_per_s\": 1, \"step_s\": 1}\n"
                   "{\"eval\": true, \"step\": 1, \"eval_loss\": null}\n";
  EXPECT_NE(renderReport(in).find("id=\"loss-curve\""), std::string::npos);
}

TEST(Report, RefusesStatsOfAnotherPef) {
  ReportInputs in{"m.pef",  inspectJson(nlohmann::json::array()),
                  "",       "",
                  "s.json", "{\"median_step_seconds\": 1, \"pef_checksum\": \"00000000000000bb\"}"};
  EXPECT_THROW(renderReport(in), Error);
  in.statsText = "{\"median_step_seconds\": 1, \"pef_checksum\": \"00000000000000aa\"}";
  EXPECT_NE(renderReport(in).find("id=\"measured\""), std::string::npos);
}

TEST(Report, DrawsEachDevicesMeasuredPeakWhenTheyDiffer) {
  nlohmann::json pef = nlohmann::json::parse(inspectJson(nlohmann::json::array()));
  pef["cost"] = {{"devices", 8}, {"memory", {{"parameters", 10}, {"capacity_bytes", 100}}}};
  ReportInputs in{"m.pef", pef.dump(), "", "", "s.json", ""};
  nlohmann::json stats = {{"median_step_seconds", 1},
                          {"pef_checksum", "00000000000000aa"},
                          {"peak_bytes_by_device", {20, 20}}};
  in.statsText = stats.dump();
  std::string html = renderReport(in);
  EXPECT_NE(html.find("measured, each of 2"), std::string::npos);
  stats["peak_bytes_by_device"] = {20, 30, 25};
  in.statsText = stats.dump();
  html = renderReport(in);
  for (const char* row : {"measured, device 0", "measured, device 1", "measured, device 2"})
    EXPECT_NE(html.find(row), std::string::npos) << row;
  std::vector<int> many(100, 20);
  many[7] = 50, many[3] = 5;
  stats["peak_bytes_by_device"] = many;
  in.statsText = stats.dump();
  html = renderReport(in);
  EXPECT_NE(html.find("measured, least: device 3"), std::string::npos);
  EXPECT_NE(html.find("measured, most: device 7"), std::string::npos);
  EXPECT_EQ(html.find("measured, device 0"), std::string::npos);
}

} // namespace
} // namespace shardc
