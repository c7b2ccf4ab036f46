// The name of every op in the registry, as a constant: code that tests an op's kind compares
// with these, so a misspelled name does not compile, and OpRegistryTest checks that the list
// and the registry agree.
#pragma once

#include <string_view>

namespace shardc::opname {

inline constexpr std::string_view kNeg = "neg";
inline constexpr std::string_view kAbs = "abs";
inline constexpr std::string_view kRelu = "relu";
inline constexpr std::string_view kExp = "exp";
inline constexpr std::string_view kLog = "log";
inline constexpr std::string_view kSqrt = "sqrt";
inline constexpr std::string_view kRsqrt = "rsqrt";
inline constexpr std::string_view kReciprocal = "reciprocal";
inline constexpr std::string_view kTanh = "tanh";
inline constexpr std::string_view kErf = "erf";
inline constexpr std::string_view kSigmoid = "sigmoid";
inline constexpr std::string_view kFloor = "floor";
inline constexpr std::string_view kCeil = "ceil";
inline constexpr std::string_view kNot = "not";
inline constexpr std::string_view kGelu = "gelu";
inline constexpr std::string_view kGeluGrad = "gelu_grad";
inline constexpr std::string_view kAdd = "add";
inline constexpr std::string_view kSub = "sub";
inline constexpr std::string_view kMul = "mul";
inline constexpr std::string_view kDiv = "div";
inline constexpr std::string_view kPow = "pow";
inline constexpr std::string_view kMax = "max";
inline constexpr std::string_view kMin = "min";
inline constexpr std::string_view kAnd = "and";
inline constexpr std::string_view kOr = "or";
inline constexpr std::string_view kCompare = "compare";
inline constexpr std::string_view kWhere = "where";
inline constexpr std::string_view kCast = "cast";
inline constexpr std::string_view kMatmul = "matmul";
inline constexpr std::string_view kReduceSum = "reduce_sum";
inline constexpr std::string_view kReduceMean = "reduce_mean";
inline constexpr std::string_view kReduceMax = "reduce_max";
inline constexpr std::string_view kReduceMin = "reduce_min";
inline constexpr std::string_view kArgmax = "argmax";
inline constexpr std::string_view kSoftmax = "softmax";
inline constexpr std::string_view kLogSoftmax = "log_softmax";
inline constexpr std::string_view kLayerNorm = "layer_norm";
inline constexpr std::string_view kTranspose = "transpose";
inline constexpr std::string_view kReshape = "reshape";
inline constexpr std::string_view kBroadcast = "broadcast";
inline constexpr std::string_view kSlice = "slice";
inline constexpr std::string_view kReverse = "reverse";
inline constexpr std::string_view kConcat = "concat";
inline constexpr std::string_view kSplit = "split";
inline constexpr std::string_view kPad = "pad";
inline constexpr std::string_view kConstant = "constant";
inline constexpr std::string_view kIota = "iota";
inline constexpr std::string_view kGather = "gather";
inline constexpr std::string_view kScatterAdd = "scatter_add";
inline constexpr std::string_view kConv2d = "conv2d";
inline constexpr std::string_view kConv2dBackwardInput = "conv2d_backward_input";
inline constexpr std::string_view kConv2dBackwardFilter = "conv2d_backward_filter";
inline constexpr std::string_view kMaxPool2d = "max_pool2d";
inline constexpr std::string_view kAvgPool2d = "avg_pool2d";
inline constexpr std::string_view kMaxPool2dBackward = "max_pool2d_backward";
inline constexpr std::string_view kAvgPool2dBackward = "avg_pool2d_backward";
inline constexpr std::string_view kAllReduce = "all_reduce";
inline constexpr std::string_view kAllGather = "all_gather";
inline constexpr std::string_view kReduceScatter = "reduce_scatter";
inline constexpr std::string_view kAllToAll = "all_to_all";
inline constexpr std::string_view kCollectivePermute = "collective_permute";
inline constexpr std::string_view kShardSlice = "shard_slice";
inline constexpr std::string_view kDropout = "dropout";
inline constexpr std::string_view kCall = "call";
inline constexpr std::string_view kScan = "scan";

// Every name above, for the test that the list and the registry agree.
inline constexpr std::string_view kAll[] = {kNeg,
                                            kAbs,
                                            kRelu,
                                            kExp,
                                            kLog,
                                            kSqrt,
                                            kRsqrt,
                                            kReciprocal,
                                            kTanh,
                                            kErf,
                                            kSigmoid,
                                            kFloor,
                                            kCeil,
                                            kNot,
                                            kGelu,
                                            kGeluGrad,
                                            kAdd,
                                            kSub,
                                            kMul,
                                            kDiv,
                                            kPow,
                                            kMax,
                                            kMin,
                                            kAnd,
                                            kOr,
                                            kCompare,
                                            kWhere,
                                            kCast,
                                            kMatmul,
                                            kReduceSum,
                                            kReduceMean,
                                            kReduceMax,
                                            kReduceMin,
                                            kArgmax,
                                            kSoftmax,
                                            kLogSoftmax,
                                            kLayerNorm,
                                            kTranspose,
                                            kReshape,
                                            kBroadcast,
                                            kSlice,
                                            kReverse,
                                            kConcat,
                                            kSplit,
                                            kPad,
                                            kConstant,
                                            kIota,
                                            kGather,
                                            kScatterAdd,
                                            kConv2d,
                                            kConv2dBackwardInput,
                                            kConv2dBackwardFilter,
                                            kMaxPool2d,
                                            kAvgPool2d,
                                            kMaxPool2dBackward,
                                            kAvgPool2dBackward,
                                            kAllReduce,
                                            kAllGather,
                                            kReduceScatter,
                                            kAllToAll,
                                            kCollectivePermute,
                                            kShardSlice,
                                            kDropout,
                                            kCall,
                                            kScan};

} // namespace shardc::opname
