// .npy reading and writing: round trips of every supported dtype and shape, files written
// by numpy itself (unittests/fixtures/npy, from scripts/gen_npy_fixtures.py), and a clear
// error naming the file for every kind of bad input.
#include "shardc/io/Npy.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <unistd.h>

using namespace shardc;
namespace fs = std::filesystem;

namespace {

std::string fixturePath(const std::string& name) {
  return std::string(SHARDC_FIXTURE_DIR) + "/npy/" + name + ".npy";
}

std::vector<uint16_t> bits16(const Tensor& t) {
  std::vector<uint16_t> out(static_cast<size_t>(t.numel()));
  std::memcpy(out.data(), t.data(), t.byteSize());
  return out;
}

// The message of the shardc::Error that parseNpy throws, or "" if it succeeds.
std::string npyError(const std::string& bytes, const std::string& path = "x.npy") {
  try {
    parseNpy(bytes, path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A version 1.0 file with the given header dict and data, padded as numpy pads it.
std::string npyBytes(const std::string& dict, const std::string& data, char major = 1) {
  std::string header = dict;
  size_t lenBytes = major == 1 ? 2 : 4;
  size_t total = 8 + lenBytes + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + major + '\0';
  for (size_t i = 0; i < lenBytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string f32Data(std::initializer_list<float> v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

class TempDir {
public:
  TempDir() : path_(fs::temp_directory_path() / ("shardc-npy-test-" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
  fs::path path_;
};

void expectRoundTrip(const Tensor& t) {
  Tensor back = parseNpy(serializeNpy(t), "mem.npy");
  EXPECT_TRUE(back.identical(t)) << t.type().str() << " came back as " << back.type().str();
}

TEST(NpyTest, RoundTripsEverySupportedDtype) {
  expectRoundTrip(Tensor::fromDoubles({DType::F32, {2, 3}}, {-1.5, 0, 0.25, 3e38, -0.0, 1e-45}));
  expectRoundTrip(Tensor::fromDoubles({DType::F64, {3}}, {1.0 / 3.0, -2.5e300, 5e-324}));
  expectRoundTrip(Tensor::fromDoubles({DType::F16, {4}}, {1.0, -2.0, 65504.0, INFINITY}));
  expectRoundTrip(Tensor::fromInts({DType::I64, {3}}, {INT64_MIN, 0, INT64_MAX}));
  expectRoundTrip(Tensor::fromInts({DType::I32, {2, 2}}, {INT32_MIN, -1, 0, INT32_MAX}));
  expectRoundTrip(Tensor::fromInts({DType::I1, {5}}, {1, 0, 0, 1, 1}));
}

TEST(NpyTest, RoundTripKeepsNaNBits) {
  Tensor t(TensorType{DType::F32, {2}});
  uint32_t nans[2] = {0x7fc00001u, 0xffc00000u};
  std::memcpy(t.data(), nans, sizeof nans);
  expectRoundTrip(t);
}

TEST(NpyTest, RoundTripsScalarsAndEmptyShapes) {
  expectRoundTrip(Tensor::fromDoubles({DType::F32, {}}, {3.5}));
  expectRoundTrip(Tensor::fromInts({DType::I1, {}}, {1}));
  expectRoundTrip(Tensor::fromInts({DType::I64, {}}, {-7}));
  expectRoundTrip(Tensor(TensorType{DType::F32, {0}}));
  expectRoundTrip(Tensor(TensorType{DType::F64, {3, 0, 2}}));
  expectRoundTrip(Tensor(TensorType{DType::I32, {0, 0}}));
}

TEST(NpyTest, RoundTripsThroughFiles) {
  TempDir dir;
  Tensor t = Tensor::fromDoubles({DType::F64, {2, 2}}, {1, 2, 3, 4});
  writeNpy(dir.file("t.npy"), t);
  EXPECT_TRUE(readNpy(dir.file("t.npy")).identical(t));
  // Overwriting replaces the file whole.
  Tensor u = Tensor::fromInts({DType::I1, {1}}, {1});
  writeNpy(dir.file("t.npy"), u);
  EXPECT_TRUE(readNpy(dir.file("t.npy")).identical(u));
}

TEST(NpyTest, BF16IsWrittenAsF32) {
  Tensor t = Tensor::fromDoubles({DType::BF16, {3}}, {1.0, -0.5, 3.140625});
  Tensor back = parseNpy(serializeNpy(t), "mem.npy");
  EXPECT_EQ(back.type(), (TensorType{DType::F32, {3}}));
  EXPECT_EQ(back.toDoubles(), t.toDoubles());
}

TEST(NpyTest, HeaderIsNumpyVersion1Aligned) {
  for (const Shape& shape : {Shape{}, Shape{7}, Shape{2, 3}, Shape{1, 1, 1, 1, 1, 1, 1, 1}}) {
    std::string s = serializeNpy(Tensor(TensorType{DType::F32, shape}));
    ASSERT_GE(s.size(), 10u);
    EXPECT_EQ(s.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    size_t headerLen =
        static_cast<uint8_t>(s[8]) | (static_cast<size_t>(static_cast<uint8_t>(s[9])) << 8);
    EXPECT_EQ((10 + headerLen) % 64, 0u) << shapeStr(shape);
    EXPECT_EQ(s[10 + headerLen - 1], '\n');
  }
  std::string one = serializeNpy(Tensor(TensorType{DType::F32, {7}}));
  EXPECT_NE(one.find("'shape': (7,)"), std::string::npos) << "a 1-d shape needs the trailing comma";
  std::string scalar = serializeNpy(Tensor(TensorType{DType::F32, {}}));
  EXPECT_NE(scalar.find("'shape': ()"), std::string::npos);
}

// Files written by numpy.save (see scripts/gen_npy_fixtures.py for the values).
TEST(NpyTest, ReadsNumpyFloatFiles) {
  Tensor f32 = readNpy(fixturePath("f32_2x3"));
  EXPECT_TRUE(f32.identical(
      Tensor::fromDoubles({DType::F32, {2, 3}}, {-1.5, 0.0, 0.25, 3.0, -0.0, 1e-30})));
  Tensor f64 = readNpy(fixturePath("f64_3"));
  EXPECT_TRUE(f64.identical(Tensor::fromDoubles({DType::F64, {3}}, {1.0 / 3.0, -2.5e300, 5e-324})));
  Tensor f16 = readNpy(fixturePath("f16_5"));
  EXPECT_EQ(f16.type(), (TensorType{DType::F16, {5}}));
  EXPECT_EQ(bits16(f16), (std::vector<uint16_t>{0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00}));
}

TEST(NpyTest, ReadsNumpyIntegerAndBoolFiles) {
  EXPECT_TRUE(readNpy(fixturePath("i64_3"))
                  .identical(Tensor::fromInts({DType::I64, {3}}, {INT64_MIN, 0, INT64_MAX})));
  EXPECT_TRUE(
      readNpy(fixturePath("i32_2x2"))
          .identical(Tensor::fromInts({DType::I32, {2, 2}}, {INT32_MIN, -1, 0, INT32_MAX})));
  EXPECT_TRUE(
      readNpy(fixturePath("bool_4")).identical(Tensor::fromInts({DType::I1, {4}}, {1, 0, 0, 1})));
}

TEST(NpyTest, ReadsNumpyScalarAndEmptyFiles) {
  EXPECT_TRUE(
      readNpy(fixturePath("scalar_f32")).identical(Tensor::fromDoubles({DType::F32, {}}, {3.5})));
  EXPECT_EQ(readNpy(fixturePath("empty_f32_0x3")).type(), (TensorType{DType::F32, {0, 3}}));
  EXPECT_EQ(readNpy(fixturePath("empty_i64_2x0x2")).type(), (TensorType{DType::I64, {2, 0, 2}}));
}

TEST(NpyTest, ReadsHeaderVersions2And3) {
  Tensor want = Tensor::fromDoubles({DType::F32, {3}}, {1, 2, 3});
  EXPECT_TRUE(readNpy(fixturePath("v2_f32_3")).identical(want));
  EXPECT_TRUE(readNpy(fixturePath("v3_f32_3")).identical(want));
}

TEST(NpyTest, OurFilesMatchNumpysBytes) {
  // numpy.save and writeNpy agree byte for byte on a simple array.
  std::string numpy = readFile(fixturePath("scalar_f32"));
  EXPECT_EQ(serializeNpy(Tensor::fromDoubles({DType::F32, {}}, {3.5})), numpy);
  std::string numpy2 = readFile(fixturePath("f32_2x3"));
  EXPECT_EQ(serializeNpy(readNpy(fixturePath("f32_2x3"))), numpy2);
}

TEST(NpyTest, RejectsUnsupportedNumpyFiles) {
  auto err = [](const std::string& name) {
    try {
      readNpy(fixturePath(name));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string f = err("fortran_f32_2x3");
  EXPECT_NE(
      f.find(fixturePath("fortran_f32_2x3") + ": Fortran-order .npy arrays are not supported"),
      std::string::npos)
      << f;
  std::string b = err("bigendian_f32_3");
  EXPECT_NE(
      b.find(fixturePath("bigendian_f32_3") + ": big-endian .npy dtype '>f4' is not supported"),
      std::string::npos)
      << b;
  std::string u = err("u8_3");
  EXPECT_NE(u.find(fixturePath("u8_3") + ": unsupported .npy dtype '|u1' (supported:"),
            std::string::npos)
      << u;
  std::string c = err("c64_2");
  EXPECT_NE(c.find("unsupported .npy dtype '<c8'"), std::string::npos) << c;
}

TEST(NpyTest, RejectsBadMagic) {
  EXPECT_EQ(npyError(""), "x.npy: not a .npy file (bad magic)");
  EXPECT_EQ(npyError("\x93NUM"), "x.npy: not a .npy file (bad magic)");
  EXPECT_EQ(npyError("PK\x03\x04 this is a zip"), "x.npy: not a .npy file (bad magic)");
  std::string good = serializeNpy(Tensor(TensorType{DType::F32, {2}}));
  good[1] = 'n';
  EXPECT_EQ(npyError(good), "x.npy: not a .npy file (bad magic)");
}

TEST(NpyTest, RejectsTruncatedFilesAtEveryLength) {
  std::string good = serializeNpy(Tensor::fromDoubles({DType::F32, {2, 2}}, {1, 2, 3, 4}));
  for (size_t n = 0; n < good.size(); ++n) {
    std::string e = npyError(good.substr(0, n));
    EXPECT_FALSE(e.empty()) << "truncated to " << n << " bytes was accepted";
    EXPECT_EQ(e.rfind("x.npy: ", 0), 0u) << e;
  }
  EXPECT_EQ(npyError(good.substr(0, 8)), "x.npy: truncated .npy header");
  EXPECT_EQ(npyError(good.substr(0, 40)), "x.npy: truncated .npy header");
  EXPECT_EQ(npyError(good.substr(0, good.size() - 1)),
            "x.npy: expected 16 data bytes for f32[2,2], file has 15");
  // The same for the 4-byte header length of version 2.
  std::string v2 = readFile(fixturePath("v2_f32_3"));
  EXPECT_EQ(npyError(v2.substr(0, 11)), "x.npy: truncated .npy header");
  EXPECT_EQ(npyError(v2.substr(0, 30)), "x.npy: truncated .npy header");
}

TEST(NpyTest, RejectsWrongDataLength) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  EXPECT_EQ(npyError(npyBytes(dict, f32Data({1, 2}))),
            "x.npy: expected 12 data bytes for f32[3], file has 8");
  EXPECT_EQ(npyError(npyBytes(dict, f32Data({1, 2, 3, 4}))),
            "x.npy: expected 12 data bytes for f32[3], file has 16");
  EXPECT_EQ(npyError(npyBytes(dict, f32Data({1, 2, 3}))), "");
}

TEST(NpyTest, HugeShapeInHeaderIsAnErrorNotAnAllocation) {
  // A few bytes claiming 4 TB must fail on the length check, before any allocation.
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }";
  EXPECT_EQ(npyError(npyBytes(dict, f32Data({1}))),
            "x.npy: expected 4000000000000 data bytes for f32[1000000,1000000], file has 4");
  std::string tooBig =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }";
  EXPECT_EQ(npyError(npyBytes(tooBig, "")),
            "x.npy: shape f32[99999999999,99999999999] is too large");
}

TEST(NpyTest, RejectsMalformedHeaders) {
  auto withShape = [](const std::string& shape) {
    return npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", "");
  };
  // As strictly as numpy: what it refuses is refused, naming where.
  auto bad = [&](const std::string& shape, const std::string& what, int at) {
    return "x.npy: malformed .npy header: " + what + " at byte " + std::to_string(at) +
           " of {'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  };
  const std::string notInt = "a dimension that is not a non-negative integer";
  EXPECT_EQ(npyError(withShape("(-1,)")), bad("(-1,)", notInt, 51));
  EXPECT_EQ(npyError(withShape("(a, 2)")), bad("(a, 2)", notInt, 51));
  EXPECT_EQ(npyError(withShape("3")), bad("3", "expected '('", 50));
  EXPECT_EQ(npyError(withShape("(2 8)")), bad("(2 8)", "expected ')'", 53));
  EXPECT_EQ(npyError(withShape("(2,, 8)")), bad("(2,, 8)", notInt, 53));
  EXPECT_EQ(npyError(withShape("(5)")),
            bad("(5)", "a one-dimensional shape without its comma", 53));
  EXPECT_EQ(npyError(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", "")),
            "x.npy: malformed .npy header: the key 'x' (only descr, fortran_order and shape) at "
            "byte 59 of {'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}");
  std::string withNul = "{'descr': '<f4', 'fortran_order': False, 'shape': ()}";
  withNul += '\0';
  EXPECT_EQ(npyError(npyBytes(withNul, "")),
            "x.npy: malformed .npy header: a control character at byte 53 of {'descr': '<f4', "
            "'fortran_order': False, 'shape': ()}\\x00");
  EXPECT_EQ(npyError(npyBytes("{'fortran_order': False, 'shape': (), }", "")),
            "x.npy: .npy header has no 'descr' field");
  EXPECT_EQ(npyError(npyBytes("{'descr': '<f4', 'shape': (), }", "")),
            "x.npy: .npy header has no 'fortran_order' field");
  EXPECT_EQ(npyError(npyBytes("{'descr': '<f4', 'fortran_order': False, }", "")),
            "x.npy: .npy header has no 'shape' field");
  EXPECT_EQ(npyError(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (}", "")),
            "x.npy: malformed .npy header: " + notInt +
                " at byte 51 of {'descr': '<f4', 'fortran_order': False, 'shape': (}");
  EXPECT_EQ(npyError(npyBytes("{'descr': '<f2', 'fortran_order': False, 'shape': (), }", "", 4)),
            "x.npy: unsupported .npy format version 4");
}

TEST(NpyTest, RejectsBoolBytesOtherThanZeroOrOne) {
  std::string dict = "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }";
  EXPECT_EQ(npyError(npyBytes(dict, std::string("\x01\x00\x01", 3))), "");
  EXPECT_EQ(npyError(npyBytes(dict, std::string("\x01\x02\x00", 3))),
            "x.npy: bool array holds a byte other than 0 or 1");
}

TEST(NpyTest, FileErrorsNameTheFile) {
  TempDir dir;
  try {
    readNpy(dir.file("missing.npy"));
    ADD_FAILURE() << "reading a missing file succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              dir.file("missing.npy") + ": cannot open: No such file or directory");
  }
  try {
    writeNpy(dir.file("no/such/dir/t.npy"), Tensor(TensorType{DType::F32, {1}}));
    ADD_FAILURE() << "writing into a missing directory succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(dir.file("no/such/dir/t.npy") + ": cannot write", 0), 0u)
        << e.what();
  }
}

} // namespace
