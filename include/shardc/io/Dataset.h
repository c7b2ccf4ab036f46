// Training data: .npy arrays with a leading sample axis, read in batches.
#pragma once

#include "shardc/ir/Tensor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace shardc {

// One .npy file read with checked reads (never mapped: a file truncated under a mapping
// kills the process with SIGBUS). After its reads, a batch checks that the file is still the
// one opened (same size and modification time), so that a data file rewritten or truncated
// during a run stops it with an error naming the file instead of feeding it other samples.
class NpyFile {
public:
  explicit NpyFile(const std::string& path); // throws shardc::Error naming the file
  ~NpyFile();
  NpyFile(const NpyFile&) = delete;
  NpyFile& operator=(const NpyFile&) = delete;
  const std::string& path() const { return path_; }
  const TensorType& type() const { return type_; }
  // Copies `size` bytes of the array's data from byte `offset` into `out`; a file that ended
  // early is an error.
  void read(size_t offset, size_t size, uint8_t* out) const;
  // Refuses a file whose size or modification time changed since it was opened (checked after
  // the reads of a batch: what they read is then known to be the file that was checked).
  void checkUnchanged() const;

private:
  std::string path_;
  TensorType type_;
  int fd_ = -1;
  size_t size_ = 0, dataOffset_ = 0;
  int64_t modified_ = 0; // nanoseconds
};

// The model input an array feeds: its name, whole-batch type, and for class labels the
// bound their values must lie under (0: any).
struct DataInput {
  std::string name;
  TensorType type;
  int64_t indexBound = 0;
};

// Samples of one input along the leading axis: the array's type, and its bytes in memory
// (with what keeps them alive: the caller's array) or in a file; `source` is what errors call
// it (a file's path).
struct SampleArray {
  std::string source;
  TensorType type;
  const uint8_t* data = nullptr;
  std::shared_ptr<const void> owner;
  std::shared_ptr<const NpyFile> file;
  // Copies `size` bytes of the samples from byte `offset` into `out`.
  void read(size_t offset, size_t size, uint8_t* out) const;
  void checkUnchanged() const; // NpyFile::checkUnchanged for a file; nothing for memory
};

// NAME=FILE.npy arrays (or arrays in memory), one per model input, read as batches of the
// inputs' leading dimension. Every array must hold the same number of samples, each of the input's
// dtype and per-sample shape; class labels must lie in their bound. All is checked when
// constructed, before any step runs. `option` names the flag in errors (--data, --eval-data).
class Dataset {
public:
  Dataset(const std::vector<std::string>& specs, const std::vector<DataInput>& inputs,
          const std::string& option);
  // The same from arrays in memory (the Python module's), each fed to the input it names.
  Dataset(std::vector<std::pair<std::string, SampleArray>> arrays,
          const std::vector<DataInput>& inputs, const std::string& option);
  ~Dataset();
  int64_t samples() const { return samples_; }
  int64_t batchSize() const { return batch_; }
  int64_t batchesPerEpoch() const { return samples_ / batch_; }
  // The input names the arrays feed.
  std::vector<std::string> names() const;
  // The batch of the samples order[first .. first + batchSize()), per input name.
  std::map<std::string, Tensor> batch(const std::vector<int64_t>& order, int64_t first) const;
  // A digest of every array's name, type and bytes (ranks check that they read the same).
  uint64_t digest() const;

private:
  void add(const std::string& name, SampleArray array, const std::vector<DataInput>& inputs,
           const std::string& option);
  void checkOneBatch() const; // refuses fewer samples than one batch
  std::vector<std::pair<std::string, SampleArray>> arrays_;
  std::map<std::string, TensorType> types_;
  int64_t samples_ = 0, batch_ = 0;
};

// Refuses class labels outside [0, bound) (they would silently add nothing to the loss;
// PyTorch's ignore_index, -100, is not supported either: the mean would count it), naming
// `file` and the first bad label's index (data[0] being element `first`).
void checkLabels(const uint8_t* data, DType dtype, int64_t count, int64_t bound,
                 const std::string& file, int64_t first = 0);

// The order epoch `epoch` visits `n` samples in: 0..n-1, or with `shuffle` a Fisher-Yates
// shuffle of it driven by SplitMix64 seeded with seed + 0x9E3779B97F4A7C15 * (epoch + 1):
// for i = n-1 down to 1, j = next() % (i + 1), swap(order[i], order[j]). The rule is
// documented (README) so that other tools can replay the same order.
std::vector<int64_t> sampleOrder(int64_t n, bool shuffle, uint64_t seed, int64_t epoch);

} // namespace shardc
