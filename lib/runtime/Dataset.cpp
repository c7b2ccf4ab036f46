#include "shardc/runtime/Dataset.h"

#include "shardc/runtime/Npy.h"
#include "shardc/support/Digest.h"
#include "shardc/support/Error.h"
#include "shardc/support/FileUtil.h"

#include <cerrno>
#include <cstring>
#include <set>
#include <sys/mman.h>
#include <unistd.h>

namespace shardc {

MappedNpy::MappedNpy(const std::string& path) : path_(path) {
  int fd = openRegularFile(path, size_);
  if (size_ == 0) {
    ::close(fd);
    throw Error(path + ": not a .npy file (empty)");
  }
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  int e = errno;
  ::close(fd);
  if (p == MAP_FAILED) throw Error(path + ": cannot map: " + std::strerror(e));
  base_ = static_cast<const uint8_t*>(p);
  try {
    NpyHeader h =
        parseNpyHeader(std::string_view(reinterpret_cast<const char*>(base_), size_), path);
    type_ = h.type;
    offset_ = h.dataOffset;
  } catch (...) {
    ::munmap(const_cast<uint8_t*>(base_), size_);
    throw;
  }
}

MappedNpy::~MappedNpy() {
  ::munmap(const_cast<uint8_t*>(base_), size_);
}

Dataset::Dataset(const std::vector<std::string>& specs, const std::vector<DataInput>& inputs,
                 const std::string& option) {
  for (const std::string& spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw Error(option + " '" + spec + "' must be NAME=FILE.npy");
    std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    // The input is checked before its file is opened: a wrong name is the likelier mistake.
    add(name, SampleArray{file, {}, nullptr, nullptr}, inputs, option);
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
    auto mapped = std::make_shared<MappedNpy>(array.source);
    array.type = mapped->type();
    array.data = mapped->data();
    array.owner = std::move(mapped);
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
  if (t.dtype == DType::I1) checkNpyBools(array.data, static_cast<size_t>(t.bytes()), file);
  // Labels outside the classes would silently add nothing to the loss.
  if (int64_t bound = in->indexBound; bound > 0)
    checkLabels(array.data, t.dtype, t.numel(), bound, file);
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
    for (int64_t k = 0; k < batch_; ++k)
      if (row)
        std::memcpy(t.data() + static_cast<size_t>(k) * row,
                    a.data + static_cast<size_t>(order[static_cast<size_t>(first + k)]) * row, row);
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
    d = digestBytes(a.data, static_cast<size_t>(a.type.bytes()), d);
  }
  return d;
}

void checkLabels(const uint8_t* data, DType dtype, int64_t count, int64_t bound,
                 const std::string& file) {
  for (int64_t k = 0; k < count; ++k)
    if (int64_t v = loadInt(data, dtype, k); v < 0 || v >= bound)
      throw Error(file + ": label " + std::to_string(v) + " at index " + std::to_string(k) +
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
