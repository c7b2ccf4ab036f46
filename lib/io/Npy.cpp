#include "shardc/io/Npy.h"

#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace shardc {
namespace {

const char kMagic[] = "\x93NUMPY";

std::string descrOf(DType t) {
  switch (t) {
  case DType::F32:
  case DType::BF16:
    return "<f4";
  case DType::F64:
    return "<f8";
  case DType::F16:
    return "<f2";
  case DType::I64:
    return "<i8";
  case DType::I32:
    return "<i4";
  case DType::I1:
    return "|b1";
  }
  return "";
}

// The header: a Python dict literal of exactly 'descr' (a string), 'fortran_order' (True or
// False) and 'shape' (a tuple of non-negative integers), padded with spaces and a newline,
// read as strictly as numpy reads it.
struct Header {
  std::string descr, fortranOrder;
  Shape shape;
};

class HeaderReader {
public:
  HeaderReader(const std::string& s, const std::string& path) : s_(s), path_(path) {}

  Header read() {
    for (i_ = 0; i_ < s_.size(); ++i_)
      if (auto c = static_cast<unsigned char>(s_[i_]); (c < 0x20 && c != '\n') || c > 0x7e)
        fail(c > 0x7e ? "a byte that is not ASCII" : "a control character");
    i_ = 0;
    Header h;
    bool seen[3] = {false, false, false};
    expect('{');
    while (true) {
      spaces();
      if (peek() == '}') break;
      std::string key = quoted();
      spaces();
      expect(':');
      spaces();
      int k = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
      if (k < 0) fail("the key '" + key + "' (only descr, fortran_order and shape)");
      if (seen[k]) fail("the key '" + key + "' twice");
      seen[k] = true;
      if (k == 0) h.descr = quoted();
      if (k == 1) h.fortranOrder = word();
      if (k == 2) h.shape = tuple();
      spaces();
      if (peek() != ',') break;
      ++i_;
    }
    expect('}');
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n'))
      ++i_;
    if (i_ != s_.size()) fail("text after the dict");
    for (int k = 0; k < 3; ++k)
      if (!seen[k])
        throw Error(path_ + ": .npy header has no '" +
                    std::string(k == 0   ? "descr"
                                : k == 1 ? "fortran_order"
                                         : "shape") +
                    "' field");
    return h;
  }

private:
  [[noreturn]] void fail(const std::string& what) const {
    std::string shown;
    for (char c : s_.substr(0, s_.find_last_not_of(" \n") + 1)) {
      auto u = static_cast<unsigned char>(c);
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      shown += u < 0x20 || u > 0x7e ? std::string(hex) : std::string(1, c);
    }
    throw Error(path_ + ": malformed .npy header: " + what + " at byte " + std::to_string(i_) +
                " of " + shown);
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void spaces() {
    while (peek() == ' ')
      ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string quoted() {
    expect('\'');
    size_t e = s_.find('\'', i_);
    if (e == std::string::npos) fail("an unterminated string");
    std::string v = s_.substr(i_, e - i_);
    i_ = e + 1;
    return v;
  }
  std::string word() {
    size_t b = i_;
    while (std::isalpha(static_cast<unsigned char>(peek())))
      ++i_;
    return s_.substr(b, i_ - b);
  }
  // (), (n,) or (n, m, ...) with an optional trailing comma: (n) is a number, not a tuple.
  Shape tuple() {
    Shape shape;
    expect('(');
    bool comma = false;
    while (true) {
      spaces();
      if (peek() == ')') break;
      int64_t d;
      auto r = std::from_chars(s_.data() + i_, s_.data() + s_.size(), d);
      if (r.ec != std::errc() || d < 0 || !std::isdigit(static_cast<unsigned char>(peek())))
        fail("a dimension that is not a non-negative integer");
      i_ = static_cast<size_t>(r.ptr - s_.data());
      shape.push_back(d);
      spaces();
      comma = peek() == ',';
      if (!comma) break;
      ++i_;
    }
    expect(')');
    if (shape.size() == 1 && !comma) fail("a one-dimensional shape without its comma");
    return shape;
  }

  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
};

} // namespace

NpyHeader parseNpyHeader(std::string_view bytes, const std::string& path) {
  return parseNpyHeader(bytes, bytes.size(), path);
}

NpyHeader parseNpyHeader(std::string_view bytes, size_t fileSize, const std::string& path) {
  if (bytes.substr(0, 6) != std::string_view(kMagic, 6))
    throw Error(path + ": not a .npy file (bad magic)");
  if (bytes.size() < 10) throw Error(path + ": truncated .npy header");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen =
        static_cast<uint8_t>(bytes[8]) | (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(path + ": truncated .npy header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    throw Error(path + ": unsupported .npy format version " + std::to_string(major));
  }
  if (headerLen > bytes.size() - headerStart) throw Error(path + ": truncated .npy header");
  std::string header(bytes.substr(headerStart, headerLen));

  Header h = HeaderReader(header, path).read();
  const std::string descr = "'" + h.descr + "'";
  DType dtype;
  if (descr == "'<f4'")
    dtype = DType::F32;
  else if (descr == "'<f8'")
    dtype = DType::F64;
  else if (descr == "'<f2'")
    dtype = DType::F16;
  else if (descr == "'<i8'")
    dtype = DType::I64;
  else if (descr == "'<i4'")
    dtype = DType::I32;
  else if (descr == "'|b1'")
    dtype = DType::I1;
  else if (descr == "'<u2'") // numpy has no bfloat16: its bits, as the Python module hands them
    dtype = DType::BF16;
  else if (descr.size() > 1 && descr[1] == '>')
    throw Error(path + ": big-endian .npy dtype " + descr +
                " is not supported; save as little-endian");
  else
    throw Error(path + ": unsupported .npy dtype " + descr +
                " (supported: <f4 <f8 <f2 <i8 <i4 |b1, and <u2 for bfloat16 bits)");
  if (h.fortranOrder == "True")
    throw Error(path + ": Fortran-order .npy arrays are not supported; save with C order");
  if (h.fortranOrder != "False")
    throw Error(path + ": malformed .npy header: fortran_order is '" + h.fortranOrder +
                "', not True or False");
  Shape shape = h.shape;
  std::string shapeText = TensorType{dtype, shape}.str();
  if (!checkedNumel(shape)) throw Error(path + ": shape " + shapeText + " is too large");
  TensorType type{dtype, shape};
  size_t dataStart = headerStart + headerLen;
  // Check the length before anything allocates: the header alone may claim terabytes.
  if (fileSize - dataStart != static_cast<size_t>(type.bytes()))
    throw Error(path + ": expected " + std::to_string(type.bytes()) + " data bytes for " +
                type.str() + ", file has " + std::to_string(fileSize - dataStart));
  return {type, dataStart};
}

void checkNpyBools(const uint8_t* data, size_t size, const std::string& path) {
  for (size_t i = 0; i < size; ++i)
    if (data[i] > 1) throw Error(path + ": bool array holds a byte other than 0 or 1");
}

Tensor parseNpy(const std::string& bytes, const std::string& path) {
  NpyHeader h = parseNpyHeader(bytes, path);
  Tensor t(h.type);
  if (t.byteSize()) std::memcpy(t.data(), bytes.data() + h.dataOffset, t.byteSize());
  if (t.dtype() == DType::I1) checkNpyBools(t.data(), t.byteSize(), path);
  return t;
}

Tensor readNpy(const std::string& path) {
  return parseNpy(readFile(path), path);
}

std::string serializeNpy(const Tensor& in) {
  Tensor t = in;
  if (t.dtype() == DType::BF16)
    t = Tensor::fromDoubles(TensorType{DType::F32, in.shape()}, in.toDoubles());
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i)
    shape += std::to_string(t.shape()[i]) + ", ";
  if (t.shape().size() > 1)
    shape.resize(shape.size() - 2);
  else if (t.shape().size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header =
      "{'descr': '" + descrOf(t.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(t.data()), t.byteSize());
  return out;
}

void writeNpy(const std::string& path, const Tensor& t) {
  writeFileAtomic(path, serializeNpy(t));
}

} // namespace shardc
