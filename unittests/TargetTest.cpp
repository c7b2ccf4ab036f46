// Target files: every built-in one loads with sane figures, and each kind of mistake in a
// hand-written one is an error naming the file and the field.
#include "shardc/cost/Target.h"
#include "shardc/support/Error.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace shardc {
namespace {

// A valid target file; tests replace one line to break it.
const std::string kValid = "name: t\n"
                           "peak_flops: {bf16: 2e12, f32: 1e12}\n"
                           "memory_bandwidth: 1e11\n"
                           "memory_capacity: 1e10\n"
                           "compute_efficiency: 0.5\n"
                           "devices_per_node: 4\n"
                           "intra_node: {bandwidth: 1e10, latency: 1e-6}\n"
                           "inter_node: {bandwidth: 1e9, latency: 1e-5}\n"
                           "info: {pcus: 640}\n";

std::string replaced(const std::string& from, const std::string& to) {
  std::string s = kValid;
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

std::string errorOf(const std::string& text) {
  try {
    parseTarget(text, "t.yaml");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(TargetTest, BuiltinTargetsLoadWithSaneFigures) {
  std::vector<std::string> names = builtinTargetNames();
  EXPECT_EQ(names, (std::vector<std::string>{"a100", "cpu", "h100", "h200", "sn10", "sn20", "sn30",
                                             "sn40l"}));
  for (const std::string& n : names) {
    SCOPED_TRACE(n);
    Target t = loadTarget(n);
    EXPECT_EQ(t.name, n);
    EXPECT_FALSE(t.description.empty());
    EXPECT_GT(t.flopsFor(DType::F32), 1e9);
    EXPECT_GE(t.flopsFor(DType::BF16), t.flopsFor(DType::F32));
    EXPECT_GT(t.memoryBandwidth, 1e9);
    EXPECT_GT(t.memoryCapacity, 1e9);
    EXPECT_LE(t.computeEfficiency, 1);
    EXPECT_LE(t.memoryEfficiency, 1);
    EXPECT_GE(t.devicesPerNode, 1);
    // The link between nodes is never faster than the one within a node.
    EXPECT_LE(t.interNode.bandwidth, t.intraNode.bandwidth);
    EXPECT_GE(t.interNode.latency, t.intraNode.latency);
  }
  EXPECT_EQ(loadTarget("native").name, "cpu");
  Target h100 = loadTarget("h100");
  EXPECT_DOUBLE_EQ(h100.flopsFor(DType::BF16), 989.4e12);
  EXPECT_DOUBLE_EQ(h100.memoryBandwidth, 3.35e12);
  EXPECT_EQ(h100.devicesPerNode, 8);
}

TEST(TargetTest, ParsesEveryField) {
  Target t = parseTarget(kValid, "t.yaml");
  EXPECT_EQ(t.name, "t");
  EXPECT_DOUBLE_EQ(t.flopsFor(DType::BF16), 2e12);
  EXPECT_DOUBLE_EQ(t.flopsFor(DType::F16), 1e12); // no figure of its own: f32's
  EXPECT_DOUBLE_EQ(t.memoryCapacity, 1e10);
  EXPECT_DOUBLE_EQ(t.computeEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(t.memoryEfficiency, 1); // default
  EXPECT_DOUBLE_EQ(t.opOverhead, 0);       // default
  EXPECT_DOUBLE_EQ(t.gemmOverhead, 0);     // default
  EXPECT_DOUBLE_EQ(t.commOverlap, 0);      // default
  EXPECT_DOUBLE_EQ(parseTarget(kValid + "comm_overlap: 0.25\n", "t.yaml").commOverlap, 0.25);
  EXPECT_EQ(t.devicesPerNode, 4);
  EXPECT_DOUBLE_EQ(t.interNode.latency, 1e-5);
  EXPECT_EQ(t.computeUnits, 0);
  EXPECT_EQ(t.deviceComputeUnits, 1); // default
  Target shared = parseTarget(kValid + "compute_units: 2\ndevice_compute_units: 2\n", "t.yaml");
  EXPECT_EQ(shared.computeUnits, 2);
  EXPECT_EQ(shared.deviceComputeUnits, 2);
  EXPECT_DOUBLE_EQ(t.intraNode.oversubscribedWait, 0); // default
  Target waits = parseTarget(
      replaced("latency: 1e-6}", "latency: 1e-6, oversubscribed_wait: 2e-5}"), "t.yaml");
  EXPECT_DOUBLE_EQ(waits.intraNode.oversubscribedWait, 2e-5);
}

TEST(TargetTest, ErrorsNameTheFileAndField) {
  EXPECT_EQ(errorOf(replaced("peak_flops: {bf16: 2e12, f32: 1e12}\n", "")),
            "t.yaml: missing field 'peak_flops'");
  EXPECT_EQ(errorOf(replaced("memory_bandwidth: 1e11", "memory_bandwidth: -1e11")),
            "t.yaml:3: field 'memory_bandwidth' must be within [1e3, 1e16] bytes/s (got -1e11)");
  EXPECT_EQ(errorOf(replaced("memory_capacity: 1e10", "memory_capacity: 0")),
            "t.yaml:4: field 'memory_capacity' must be within [1, 1e16] bytes (got 0)");
  EXPECT_EQ(errorOf(replaced("compute_efficiency: 0.5", "compute_efficiency: 1.5")),
            "t.yaml:5: field 'compute_efficiency' must be in (0, 1] (got 1.5)");
  EXPECT_EQ(errorOf(kValid + "comm_overlap: 1.5\n"),
            "t.yaml:10: field 'comm_overlap' must be in [0, 1] (got 1.5)");
  EXPECT_EQ(errorOf(replaced("devices_per_node: 4", "devices_per_node: 0")),
            "t.yaml:6: field 'devices_per_node' must be within [1, 1000000] (got 0)");
  EXPECT_EQ(errorOf(replaced("devices_per_node: 4", "devices_per_node: 2.5")),
            "t.yaml:6: field 'devices_per_node' must be an integer (got 2.5)");
  EXPECT_EQ(errorOf(kValid + "compute_units: 2\ndevice_compute_units: 4\n"),
            "t.yaml:11: field 'device_compute_units' (4) exceeds compute_units (2)");
  EXPECT_EQ(errorOf(kValid + "device_compute_units: 0\n"),
            "t.yaml:10: field 'device_compute_units' must be within [1, 1000000000] (got 0)");
  EXPECT_EQ(errorOf(replaced("latency: 1e-6", "latency: -1")),
            "t.yaml:7: field 'intra_node.latency' must be within [0, 10] s (got -1)");
  EXPECT_EQ(errorOf(replaced("latency: 1e-6}", "latency: 1e-6, oversubscribed_wait: -1}")),
            "t.yaml:7: field 'intra_node.oversubscribed_wait' must be within [0, 10] s (got -1)");
  // Finite figures no hardware has: a typo such as 1e-9 for 1e9.
  EXPECT_EQ(errorOf(replaced("memory_bandwidth: 1e11", "memory_bandwidth: 1e-11")),
            "t.yaml:3: field 'memory_bandwidth' must be within [1e3, 1e16] bytes/s (got 1e-11)");
  EXPECT_EQ(errorOf(replaced("peak_flops: {bf16: 2e12, f32: 1e12}", "peak_flops: {f32: 5e-324}")),
            "t.yaml:2: field 'peak_flops.f32' must be within [1e6, 1e18] FLOP/s (got 5e-324)");
  EXPECT_EQ(errorOf(replaced("bandwidth: 1e9,", "bandwidth: fast,")),
            "t.yaml:8: field 'inter_node.bandwidth' must be a number (got fast)");
  EXPECT_EQ(errorOf(replaced("inter_node: {bandwidth: 1e9, latency: 1e-5}", "inter_node: {}")),
            "t.yaml: missing field 'inter_node.bandwidth'");
  EXPECT_EQ(errorOf(replaced("f32: 1e12", "f8: 1e12")),
            "t.yaml:2: field 'peak_flops' has an unknown dtype 'f8'");
  EXPECT_EQ(errorOf(replaced("bf16: 2e12, f32: 1e12", "bf16: 2e12")),
            "t.yaml: missing field 'peak_flops.f32' (the figure for dtypes without their own)");
  EXPECT_EQ(errorOf(kValid + "memory_bandwith: 1\n").substr(0, 51),
            "t.yaml:10: unknown field 'memory_bandwith' (fields:");
  EXPECT_EQ(errorOf(kValid + "name: u\n"), "t.yaml:10: field 'name' is given twice");
  EXPECT_EQ(errorOf(replaced("intra_node: {", "intra_node: {speed: 1, ")).substr(0, 42),
            "t.yaml:7: unknown field 'intra_node.speed'");
  EXPECT_EQ(errorOf("- 1\n- 2\n"), "t.yaml:1: a target file must be a YAML map of fields");
  EXPECT_EQ(errorOf(""), "t.yaml: a target file must be a YAML map of fields");
  std::string malformed = errorOf(replaced("memory_capacity: 1e10", "memory_capacity: [1e10"));
  EXPECT_EQ(malformed.substr(0, 22), "t.yaml:5: invalid YAML") << malformed;
}

// yaml-cpp 0.7's LoadAll never returns from a token that begins no document (a ',' outside
// [ ] and { }, also after a NUL): such a file is refused. Commas where YAML allows them
// still parse.
TEST(TargetTest, TokensThatBeginNoDocumentAreRefusedNotAHang) {
  const std::string second = "a second YAML document (or a token no document begins with)";
  EXPECT_NE(errorOf(",").find(second), std::string::npos);
  EXPECT_NE(errorOf(std::string("\0,\x1d", 3)).find("t.yaml:"), std::string::npos);
  EXPECT_NE(errorOf("{a: 1},\n").find(second), std::string::npos);
  EXPECT_EQ(errorOf(kValid + "{a: 1},\n").substr(0, 10), "t.yaml:10:");
  EXPECT_NE(errorOf(kValid + "x: [1],\n").find("t.yaml:"), std::string::npos);
  EXPECT_EQ(errorOf(kValid + "---\n" + kValid),
            "t.yaml:10: a second YAML document (or a token no document begins with) starts "
            "here; a target file is one document");
  std::string commas = kValid + "description: \"a, b\"  # c, d\n"
                                "x:\n"
                                "  y: |\n"
                                "    , a line of text\n"
                                "\n"
                                "    ,another\n"
                                "  z: 'it''s, ok'\n"
                                "  w: a,b\n";
  std::string err = errorOf(commas);
  EXPECT_EQ(err.substr(0, 30), "t.yaml:11: unknown field 'x' (") << err;
}

TEST(TargetTest, LoadsPathsAndRejectsUnknownNames) {
  auto path = std::filesystem::temp_directory_path() /
              ("shardc-target-test-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << kValid;
  EXPECT_EQ(loadTarget(path.string()).name, "t");
  std::filesystem::remove(path);
  try {
    loadTarget("nope");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown target 'nope' (targets: a100, cpu,"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace shardc
