#include "shardc/pef/Pef.h"

#include "TestUtil.h"

#include "shardc/ir/IR.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <unistd.h>

using namespace shardc;

namespace {

Pef samplePef() {
  Pef p;
  p.shardcVersion = "0.1.0";
  p.compileArgs = {"shardc", "compile", "m.onnx", "--inference"};
  p.createdUtc = "2026-11-30T00:00:00Z";
  p.mode = "inference";
  p.arch = "cpu";
  TensorType x{DType::F32, {2, 3}}, w{DType::BF16, {3}};
  p.inputs = {{"x", x}};
  p.outputs = {{"y", x}};
  p.buffers = {
      {{"x", x}, BufferKind::Input}, {{"w", w}, BufferKind::Param}, {{"y", x}, BufferKind::Output}};
  p.programs = {
      {{0},
       "main",
       "func @main(input %x: f32[2,3], param %w: bf16[3]) -> (y: f32[2,3]) {\n  return %x\n}\n",
       {},
       {},
       {0, {{ValueHome::Argument, 0, 0}, {ValueHome::Argument, 0, 1}}, {}},
       {},
       {}}};
  Tensor wt(w);
  for (int64_t i = 0; i < 3; ++i)
    wt.setDouble(i, 0.5 * static_cast<double>(i));
  p.weights = {{"w", wt}};
  return p;
}

} // namespace

TEST(PefTest, RoundTripsEveryField) {
  Pef p = samplePef();
  std::string bytes = serializePef(p);
  Pef q = parsePef(bytes, "mem.pef");
  EXPECT_EQ(q.shardcVersion, p.shardcVersion);
  EXPECT_EQ(q.compileArgs, p.compileArgs);
  EXPECT_EQ(q.createdUtc, p.createdUtc);
  EXPECT_EQ(q.mode, p.mode);
  EXPECT_EQ(q.arch, p.arch);
  ASSERT_EQ(q.inputs.size(), 1u);
  EXPECT_EQ(q.inputs[0].type, p.inputs[0].type);
  ASSERT_EQ(q.buffers.size(), 3u);
  EXPECT_EQ(q.buffers[1].kind, BufferKind::Param);
  EXPECT_EQ(q.programs[0].ir, p.programs[0].ir);
  ASSERT_EQ(q.weights.size(), 1u);
  EXPECT_TRUE(q.weights[0].second.identical(p.weights[0].second));
  EXPECT_EQ(serializePef(q), bytes);
}

// writePef streams the file: the same bytes as serializePef, and the size it returns is the
// file's.
TEST(PefTest, WritesTheSerializedBytes) {
  Pef p = samplePef();
  std::string path = ::testing::TempDir() + "/stream." + std::to_string(::getpid()) + ".pef";
  EXPECT_EQ(writePef(path, p), static_cast<int64_t>(serializePef(p).size()));
  EXPECT_EQ(readFile(path), serializePef(p));
  EXPECT_TRUE(readPef(path).weights[0].second.identical(p.weights[0].second));
  std::remove(path.c_str());
}

// readPef maps the weights: each on a 64-byte boundary, written in place without touching the
// file, and alive while a tensor (or a copy of one) holds it.
TEST(PefTest, MapsTheWeights) {
  Pef p = samplePef();
  Tensor v(TensorType{DType::F32, {5}});
  v.setDouble(4, 7);
  p.weights.emplace_back("v", v);
  std::string path = ::testing::TempDir() + "/mapped." + std::to_string(::getpid()) + ".pef";
  writePef(path, p);
  Tensor w, copy;
  {
    Pef q = readPef(path);
    ASSERT_EQ(q.weights.size(), 2u);
    for (auto& [name, t] : q.weights) {
      EXPECT_TRUE(t.kept()) << name;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u) << name;
    }
    w = std::move(q.weights[1].second);
  }
  EXPECT_TRUE(w.identical(v));
  w.setDouble(4, 8);
  copy = w;
  EXPECT_FALSE(copy.kept());
  EXPECT_EQ(copy.getDouble(4), 8);
  EXPECT_EQ(readFile(path), serializePef(p)); // the file is as written
  EXPECT_TRUE(readPef(path).weights[1].second.identical(v));
  std::remove(path.c_str());
}

// A payload whose weights lie outside the weights block (a forged file, checksum intact).
TEST(PefTest, RefusesWeightsOutsideTheBlock) {
  std::string bytes = serializePef(samplePef());
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + 16, 8);
  std::string payload = bytes.substr(32, length);
  try {
    parsePef(wrapPefPayload(payload), "forged.pef");
    FAIL() << "parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weight 'w' (bf16[3], 6 bytes at offset 0) does not "
                                         "lie on a 64-byte boundary inside the 0-byte weights"),
              std::string::npos)
        << e.what();
  }
}

TEST(PefTest, RefusesEveryTruncation) {
  std::string bytes = serializePef(samplePef());
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(parsePef(bytes.substr(0, n), "cut.pef"), Error) << "length " << n;
}

TEST(PefTest, RefusesEverySingleBitFlip) {
  std::string bytes = serializePef(samplePef());
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::string b = bytes;
      b[i] = static_cast<char>(b[i] ^ (1 << bit));
      EXPECT_THROW(parsePef(b, "flip.pef"), Error) << "byte " << i << " bit " << bit;
    }
}

// The label bound a PEF records comes from the program: the classes of the iota a one-hot
// compares the labels with, none where a label may also be ignored (ONNX's ignore_index).
TEST(PefTest, IndexBoundComesFromTheOneHot) {
  auto m = shardc::testing::parseIR(R"(
func @f(input %y: i64[4], input %z: i64[4], input %x: f32[4], input %t: i64[2,2], input %n: i64[4]) -> (a: i1[4,10], b: i1[4,7], k: i1[4], e: i1[4,5], kt: i1[4], l: i1[4,6]) {
  %c = iota() {shape = [4, 10], axis = 1} : i64[4,10]
  %y1 = reshape(%y) {shape = [4, 1]} : i64[4,1]
  %a = compare(%c, %y1) {direction = "eq"} : i1[4,10]
  %d = iota() {shape = [4, 7], axis = 1} : i64[4,7]
  %z1 = reshape(%z) {shape = [4, 1]} : i64[4,1]
  %b = compare(%d, %z1) {direction = "eq"} : i1[4,7]
  %ignore = constant() {value = dense<i64[], -100>} : i64[]
  %k = compare(%z, %ignore) {direction = "ne"} : i1[4]
  %t1 = reshape(%t) {shape = [4, 1]} : i64[4,1]
  %ct = iota() {shape = [4, 5], axis = 1} : i64[4,5]
  %e = compare(%ct, %t1) {direction = "eq"} : i1[4,5]
  %t4 = reshape(%t) {shape = [4]} : i64[4]
  %kt = compare(%t4, %ignore) {direction = "ne"} : i1[4]
  %n1 = reshape(%n) {shape = [4, 1]} : i64[4,1]
  %cn = iota() {shape = [4, 6], axis = 1} : i64[4,6]
  %l = compare(%cn, %n1) {direction = "lt"} : i1[4,6]
  return %a, %b, %k, %e, %kt, %l
}
)");
  ASSERT_TRUE(m);
  const Function& f = *m->functions()[0];
  EXPECT_EQ(programIndexBound(f.argument(0)), 10);
  EXPECT_EQ(programIndexBound(f.argument(1)), 0); // -100 is a valid label too
  EXPECT_EQ(programIndexBound(f.argument(2)), 0); // not an index
  EXPECT_EQ(programIndexBound(f.argument(3)), 0); // ignore_index, seen through a reshape
  EXPECT_EQ(programIndexBound(f.argument(4)), 0); // lengths (ReverseSequence): not a one-hot
}
