// --hypersection-pattern: the blocks of a model named by a pattern on where its ops came from
// (ONNX node names, which carry the exporter's module scope; text IR value names) become
// calls of one function per distinct block.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

namespace shardc {
class Function;
class Op;

// `pattern` holds one `N`, standing for the block's index: "/h.N/" makes the ops whose origin
// contains "/h.0/" block 0, "/h.1/" block 1, and so on (constants stay outside: a block copies
// those it reads). Blocks that are the same function (same ops, attributes, types, inner data
// flow and outside reads) share one function of the module, @<f>_block[_2...], and each
// becomes a call of it; a block that differs from every other, or that reads back what it
// computes through an op outside it, stays inline. Returns the log: the bodies, their blocks,
// and why a block could not share one. Throws shardc::Error for a pattern without exactly one N.
std::vector<std::string> outlineBlocks(Function& f,
                                       const std::unordered_map<const Op*, std::string>& origins,
                                       const std::string& pattern);

} // namespace shardc
