// numpy .npz archives (np.savez: a zip of .npy members, stored uncompressed), for weights.
#pragma once

#include "shardc/ir/Tensor.h"

#include <string>
#include <utility>
#include <vector>

namespace shardc {

// Members in file order, named without the ".npy" suffix. Reads zip64 entries as numpy
// writes them; compressed members (np.savez_compressed) are refused. Throws shardc::Error.
std::vector<std::pair<std::string, Tensor>> readNpz(const std::string& path);
// The same from the archive's bytes; `path` names it in errors.
std::vector<std::pair<std::string, Tensor>> parseNpz(const std::string& bytes,
                                                     const std::string& path);
// Writes atomically, uncompressed, in the given order.
void writeNpz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors);
// The archive writeNpz writes (`path` names it in errors).
std::string serializeNpz(const std::vector<std::pair<std::string, Tensor>>& tensors,
                         const std::string& path);

} // namespace shardc
