#include "shardc/runtime/Npy.h"

#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <charconv>
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

// Value of `key` in the header dict, as raw text up to the matching delimiter.
std::string field(const std::string& header, const std::string& key, const std::string& path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error(path + ": .npy header has no '" + key + "' field");
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) throw Error(path + ": malformed .npy header");
  size_t b = header.find_first_not_of(' ', colon + 1);
  if (b == std::string::npos) throw Error(path + ": malformed .npy header");
  char open = header[b];
  size_t e;
  if (open == '\'')
    e = header.find('\'', b + 1);
  else if (open == '(')
    e = header.find(')', b + 1);
  else
    e = header.find_first_of(",}", b);
  if (e == std::string::npos) throw Error(path + ": malformed .npy header");
  return header.substr(b, e - b + (open == '\'' || open == '(' ? 1 : 0));
}

} // namespace

Tensor parseNpy(const std::string& bytes, const std::string& path) {
  if (bytes.compare(0, 6, kMagic, 6) != 0) throw Error(path + ": not a .npy file (bad magic)");
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
  std::string header = bytes.substr(headerStart, headerLen);

  std::string descr = field(header, "descr", path);
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
  else if (descr.size() > 1 && descr[1] == '>')
    throw Error(path + ": big-endian .npy dtype " + descr +
                " is not supported; save as little-endian");
  else
    throw Error(path + ": unsupported .npy dtype " + descr +
                " (supported: <f4 <f8 <f2 <i8 <i4 |b1)");
  if (field(header, "fortran_order", path) != "False")
    throw Error(path + ": Fortran-order .npy arrays are not supported; save with C order");

  std::string shapeText = field(header, "shape", path);
  Shape shape;
  if (shapeText.size() < 2 || shapeText.front() != '(' || shapeText.back() != ')')
    throw Error(path + ": malformed shape " + shapeText);
  for (size_t i = 1; i + 1 < shapeText.size();) {
    while (i + 1 < shapeText.size() && (shapeText[i] == ' ' || shapeText[i] == ','))
      ++i;
    if (i + 1 >= shapeText.size()) break;
    int64_t d;
    auto r = std::from_chars(shapeText.data() + i, shapeText.data() + shapeText.size() - 1, d);
    if (r.ec != std::errc() || d < 0) throw Error(path + ": malformed shape " + shapeText);
    shape.push_back(d);
    i = static_cast<size_t>(r.ptr - shapeText.data());
  }
  if (!checkedNumel(shape)) throw Error(path + ": shape " + shapeText + " is too large");
  TensorType type{dtype, shape};
  size_t dataStart = headerStart + headerLen;
  // Check the length before allocating: the header alone may claim terabytes.
  if (bytes.size() - dataStart != static_cast<size_t>(type.bytes()))
    throw Error(path + ": expected " + std::to_string(type.bytes()) + " data bytes for " +
                type.str() + ", file has " + std::to_string(bytes.size() - dataStart));
  Tensor t(type);
  if (t.byteSize()) std::memcpy(t.data(), bytes.data() + dataStart, t.byteSize());
  if (dtype == DType::I1)
    for (size_t i = 0; i < t.byteSize(); ++i)
      if (t.data()[i] > 1) throw Error(path + ": bool array holds a byte other than 0 or 1");
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
