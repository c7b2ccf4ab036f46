#include "shardc/io/Npz.h"

#include "shardc/io/Npy.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <array>

namespace shardc {
namespace {

uint32_t crc32(const std::string& data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (unsigned char ch : data)
    c = table[(c ^ ch) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

// Appends each (value, byte count) little-endian.
void putFields(std::string& s, std::initializer_list<std::pair<uint64_t, int>> fields) {
  for (auto [v, bytes] : fields)
    for (int i = 0; i < bytes; ++i)
      s += static_cast<char>((v >> (8 * i)) & 0xff);
}

uint64_t get(const std::string& s, size_t at, int bytes, const std::string& path) {
  if (at + static_cast<size_t>(bytes) > s.size()) throw Error(path + ": truncated .npz archive");
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(s[at + static_cast<size_t>(i)])) << (8 * i);
  return v;
}

} // namespace

std::string serializeNpz(const std::vector<std::pair<std::string, Tensor>>& tensors,
                         const std::string& path) {
  std::string out, central;
  for (const auto& [name, t] : tensors) {
    std::string member = name + ".npy", data = serializeNpy(t);
    if (data.size() >= 0xffffffffu || out.size() >= 0xffffffffu)
      throw Error(path + ": archives over 4 GiB are not supported");
    uint32_t crc = crc32(data);
    uint64_t offset = out.size();
    // Fields the local header and the central directory entry share: version 2.0 needed,
    // no flags, stored, DOS time 0 of 1980-01-01, CRC, sizes, name length, no extra field.
    auto common = [&](std::string& s) {
      putFields(s, {{20, 2},
                    {0, 2},
                    {0, 2},
                    {0, 2},
                    {0x21, 2},
                    {crc, 4},
                    {data.size(), 4},
                    {data.size(), 4},
                    {member.size(), 2},
                    {0, 2}});
    };
    putFields(out, {{0x04034b50, 4}});
    common(out);
    out += member;
    out += data;
    putFields(central, {{0x02014b50, 4}, {20, 2}}); // signature, made by version 2.0
    common(central);
    // No comment, disk 0, no attributes, then where the local header starts.
    putFields(central, {{0, 2}, {0, 2}, {0, 2}, {0, 4}, {offset, 4}});
    central += member;
  }
  uint64_t cdOffset = out.size();
  out += central;
  // End of central directory: one disk, the entry counts, directory size and offset.
  putFields(out, {{0x06054b50, 4},
                  {0, 2},
                  {0, 2},
                  {tensors.size(), 2},
                  {tensors.size(), 2},
                  {central.size(), 4},
                  {cdOffset, 4},
                  {0, 2}});
  return out;
}

void writeNpz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors) {
  writeFileAtomic(path, serializeNpz(tensors, path));
}

std::vector<std::pair<std::string, Tensor>> readNpz(const std::string& path) {
  return parseNpz(readFile(path), path);
}

std::vector<std::pair<std::string, Tensor>> parseNpz(const std::string& s,
                                                     const std::string& path) {
  if (s.size() < 22) throw Error(path + ": not a .npz archive (too short)");
  size_t eocd = std::string::npos;
  for (size_t i = s.size() - 22 + 1; i-- > 0 && s.size() - i <= 22 + 65535;)
    if (get(s, i, 4, path) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) throw Error(path + ": not a .npz archive (no zip directory)");
  uint64_t count = get(s, eocd + 10, 2, path), cd = get(s, eocd + 16, 4, path);
  std::vector<std::pair<std::string, Tensor>> out;
  for (uint64_t k = 0; k < count; ++k) {
    if (get(s, cd, 4, path) != 0x02014b50) throw Error(path + ": corrupt zip directory");
    uint64_t method = get(s, cd + 10, 2, path), crc = get(s, cd + 16, 4, path);
    uint64_t size = get(s, cd + 20, 4, path), nameLen = get(s, cd + 28, 2, path);
    uint64_t extraLen = get(s, cd + 30, 2, path), commentLen = get(s, cd + 32, 2, path);
    uint64_t offset = get(s, cd + 42, 4, path);
    if (cd + 46 + nameLen > s.size()) throw Error(path + ": truncated .npz archive");
    std::string name = s.substr(cd + 46, nameLen);
    // zip64: sizes and offset of 0xffffffff live in extra field 0x0001, in this order.
    for (size_t e = cd + 46 + nameLen; e + 4 <= cd + 46 + nameLen + extraLen;) {
      uint64_t id = get(s, e, 2, path), len = get(s, e + 2, 2, path);
      if (id == 1) {
        size_t at = e + 4;
        if (size == 0xffffffffu)
          size = get(s, at, 8, path), at += 16; // uncompressed, then compressed
        if (offset == 0xffffffffu) offset = get(s, at, 8, path);
      }
      e += 4 + len;
    }
    if (method != 0)
      throw Error(path + ": member '" + name +
                  "' is compressed; save with np.savez, not np.savez_compressed");
    if (offset > s.size() - 30) throw Error(path + ": corrupt or truncated member '" + name + "'");
    uint64_t localName = get(s, offset + 26, 2, path), localExtra = get(s, offset + 28, 2, path);
    uint64_t dataAt = offset + 30 + localName + localExtra;
    // Compared without forming dataAt + size, which a forged zip64 size wraps.
    if (get(s, offset, 4, path) != 0x04034b50 || dataAt > s.size() || size > s.size() - dataAt)
      throw Error(path + ": corrupt or truncated member '" + name + "'");
    std::string data = s.substr(dataAt, size);
    if (crc32(data) != crc) throw Error(path + ": member '" + name + "' fails its CRC check");
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
      name.resize(name.size() - 4);
    out.emplace_back(name, parseNpy(data, path + ":" + name));
    cd += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

} // namespace shardc
