#include "shardc/io/Dataset.h"

#include "shardc/io/Npy.h"
#include "shardc/support/Digest.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace shardc {

namespace {

int64_t modifiedNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Calls fn(bytes, offset, size) over an array's data in pieces of at most 8 MiB (a multiple of
// every element size), so that checking a file's samples never holds all of them.
template <typename Fn> void forEachPiece(const SampleArray& a, Fn fn) {
  size_t total = static_cast<size_t>(a.type.bytes());
  if (a.data) {
    fn(a.data, size_t{0}, total);
    return;
  }
  constexpr size_t kPiece = size_t{8} << 20;
  std::vector<uint8_t> buffer(std::min(total, kPiece));
  for (size_t at = 0; at < total; at += kPiece) {
    size_t n = std::min(kPiece, total - at);
    a.read(at, n, buffer.data());
    a.checkUnchanged();
    fn(buffer.data(), at, n);
  }
}

} // namespace

NpyFile::NpyFile(const std::string& path) : path_(path) {
  fd_ = openRegularFile(path, size_);
  try {
    if (size_ == 0) throw Error(path + ": not a .npy file (empty)");
    struct stat st {};
    if (::fstat(fd_, &st) != 0) throw Error(path + ": cannot stat: " + std::strerror(errno));
    modified_ = modifiedNs(st);
    // The header: what numpy writes is under 4 KiB; format 2 allows 4 GiB, refused beyond
    // 1 MiB as a truncated header.
    std::string head(std::min<size_t>(size_, size_t{1} << 20), '\0');
    read(0, head.size(), reinterpret_cast<uint8_t*>(head.data()));
    NpyHeader h = parseNpyHeader(head, size_, path);
    type_ = h.type;
    dataOffset_ = h.dataOffset;
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

NpyFile::~NpyFile() {
  ::close(fd_);
}

void NpyFile::read(size_t offset, size_t size, uint8_t* out) const {
  size_t at = dataOffset_ + offset, done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd_, out + done, size - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(path_ + ": read error: " + std::strerror(errno));
    if (n == 0) { // the file is shorter than it was
      checkUnchanged();
      throw Error(path_ + ": ended early");
    }
    done += static_cast<size_t>(n);
  }
}

void NpyFile::checkUnchanged() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw Error(path_ + ": cannot stat: " + std::strerror(errno));
  if (static_cast<size_t>(st.st_size) != size_)
    throw Error(path_ + ": changed size during the run (" + std::to_string(size_) + " bytes, now " +
                std::to_string(st.st_size) + "); its samples are no longer those checked");
  if (modifiedNs(st) != modified_)
    throw Error(path_ + ": was rewritten during the run; its samples are no longer those checked");
}

void SampleArray::read(size_t offset, size_t size, uint8_t* out) const {
  if (data)
    std::memcpy(out, data + offset, size);
  else
    file->read(offset, size, out);
}

void SampleArray::checkUnchanged() const {
  if (file) file->checkUnchanged();
}

Dataset::Dataset(const std::vector<std::string>& specs, const std::vector<DataInput>& inputs,
                 const std::string& option) {
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error(option + " '" + spec + "' must be NAME=FILE.npy");
    std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    // The input is checked before its file is opened: a wrong name is the likelier mistake.
    add(name, SampleArray{file, {}, nullptr, nullptr, nullptr}, inputs, option);
  }
  checkOneBatch();
}

Dataset::Dataset(std::vector<std::pair<std::string, SampleArray>> arrays,
                 const std::vector<DataInput>& inputs, const std::string& option) {
  for (auto& [name, array] : arrays)
    add(name, std::move(array), inputs, option);
  checkOneBatch();
}

void Dataset::checkOneBatch() const {
  if (!arrays_.empty() && samples_ < batch_)
    throw Error(arrays_[0].second.source + " holds " + std::to_string(samples_) +
                " samples, fewer than one batch of " + std::to_string(batch_));
}

// `array` without data: its source is a .npy file to map.
void Dataset::add(const std::string& name, SampleArray array, const std::vector<DataInput>& inputs,
                  const std::string& option) {
  std::string known;
  for (const DataInput& in : inputs)
    known += (known.empty() ? "" : ", ") + in.name;
  const DataInput* in = nullptr;
  for (const DataInput& candidate : inputs)
    if (candidate.name == name) in = &candidate;
  if (!in)
    throw Error(option + " '" + name + "': the PEF has no such input (its inputs: " + known + ")");
  for (const auto& [seen, a] : arrays_)
    if (seen == name) throw Error(option + " '" + name + "' is given twice");
  if (in->type.rank() == 0)
    throw Error(option + " '" + name + "': the input is a scalar (" + in->type.str() +
                "), it has no batch dimension to read samples along");
  if (!array.data) {
    array.file = std::make_shared<NpyFile>(array.source);
    array.type = array.file->type();
  }
  const std::string& file = array.source;
  const TensorType& t = array.type;
  Shape sample(in->type.shape.begin() + 1, in->type.shape.end());
  bool fits = t.dtype == in->type.dtype && t.rank() == in->type.rank() &&
              Shape(t.shape.begin() + 1, t.shape.end()) == sample;
  if (!fits) {
    std::string per = TensorType{in->type.dtype, sample}.str();
    throw Error(file + " holds " + t.str() + "; input '" + name + "' (" + in->type.str() +
                ", a batch of " + std::to_string(in->type.shape[0]) + ") needs samples of " + per +
                " along a leading axis, i.e. " + per.substr(0, per.find('[') + 1) + "N" +
                (sample.empty() ? "" : ",") + per.substr(per.find('[') + 1));
  }
  int64_t n = t.shape[0];
  if (!arrays_.empty() && n != samples_)
    throw Error(file + " holds " + std::to_string(n) + " samples, " + arrays_[0].second.source +
                " holds " + std::to_string(samples_) + ": every " + option +
                " array needs the same number");
  samples_ = n;
  batch_ = in->type.shape[0];
  int64_t bound = in->indexBound;
  forEachPiece(array, [&](const uint8_t* bytes, size_t offset, size_t size) {
    if (t.dtype == DType::I1) checkNpyBools(bytes, size, file);
    // Labels outside the classes would silently add nothing to the loss.
    if (bound > 0) {
      auto width = static_cast<int64_t>(dtypeSize(t.dtype));
      checkLabels(bytes, t.dtype, static_cast<int64_t>(size) / width, bound, file,
                  static_cast<int64_t>(offset) / width);
    }
  });
  types_[name] = in->type;
  arrays_.emplace_back(name, std::move(array));
}

Dataset::~Dataset() = default;

std::vector<std::string> Dataset::names() const {
  std::vector<std::string> out;
  for (const auto& [name, a] : arrays_)
    out.push_back(name);
  return out;
}

std::map<std::string, Tensor> Dataset::batch(const std::vector<int64_t>& order,
                                             int64_t first) const {
  std::map<std::string, Tensor> out;
  for (const auto& [name, a] : arrays_) {
    Tensor t(types_.at(name));
    size_t row = static_cast<size_t>(t.byteSize() / static_cast<size_t>(batch_));
    // Runs of consecutive samples (all of a batch without --shuffle) in one read each.
    for (int64_t k = 0; k < batch_ && row;) {
      int64_t start = order[static_cast<size_t>(first + k)], n = 1;
      while (k + n < batch_ && order[static_cast<size_t>(first + k + n)] == start + n)
        ++n;
      a.read(static_cast<size_t>(start) * row, static_cast<size_t>(n) * row,
             t.data() + static_cast<size_t>(k) * row);
      k += n;
    }
    a.checkUnchanged(); // once per batch, not per read: a shuffled batch reads sample by sample
    out.emplace(name, std::move(t));
  }
  return out;
}

uint64_t Dataset::digest() const {
  uint64_t d = 0;
  for (const auto& [name, a] : arrays_) {
    d = digestBytes(name.data(), name.size(), d);
    std::string type = a.type.str();
    d = digestBytes(type.data(), type.size(), d);
    forEachPiece(
        a, [&](const uint8_t* bytes, size_t, size_t size) { d = digestBytes(bytes, size, d); });
  }
  return d;
}

void checkLabels(const uint8_t* data, DType dtype, int64_t count, int64_t bound,
                 const std::string& file, int64_t first) {
  for (int64_t k = 0; k < count; ++k)
    if (int64_t v = loadInt(data, dtype, k); v < 0 || v >= bound)
      throw Error(file + ": label " + std::to_string(v) + " at index " + std::to_string(first + k) +
                  " is not one of the model's " + std::to_string(bound) + " classes [0, " +
                  std::to_string(bound) + ")" +
                  (v == -100 ? " (PyTorch's ignore_index is not supported)" : ""));
}

std::vector<int64_t> sampleOrder(int64_t n, bool shuffle, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    order[static_cast<size_t>(i)] = i;
  if (!shuffle) return order;
  uint64_t state = seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(epoch + 1);
  auto next = [&state] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(order[static_cast<size_t>(i)],
              order[static_cast<size_t>(next() % static_cast<uint64_t>(i + 1))]);
  return order;
}

} // namespace shardc
