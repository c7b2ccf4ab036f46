// Reading and writing numpy .npy files (format versions 1.0 to 3.0, little-endian,
// C order): f32, f64, f16, i64, i32 and bool. bfloat16 has no numpy dtype: it is read from
// uint16 arrays of its bits (<u2) and written as f32.
#pragma once

#include "shardc/ir/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace shardc {

// Throws shardc::Error naming the file and what is wrong with it.
Tensor readNpy(const std::string& path);
// The array a whole .npy file's bytes hold: its type and where its data starts (the data
// length checked against the type).
struct NpyHeader {
  TensorType type;
  size_t dataOffset = 0;
};
NpyHeader parseNpyHeader(std::string_view bytes, const std::string& path);
// The same from the file's first bytes (at least the whole header) and its size.
NpyHeader parseNpyHeader(std::string_view bytes, size_t fileSize, const std::string& path);
// Refuses a bool array holding a byte other than 0 or 1.
void checkNpyBools(const uint8_t* data, size_t size, const std::string& path);
Tensor parseNpy(const std::string& bytes, const std::string& path);
// Writes atomically (temporary file, then rename). Throws shardc::Error on I/O failure.
void writeNpy(const std::string& path, const Tensor& t);
std::string serializeNpy(const Tensor& t);

} // namespace shardc
