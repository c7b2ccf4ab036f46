// Registration entry points, one per file of op definitions.
#pragma once

namespace shardc {
class OpRegistry;
void registerElementwiseOps(OpRegistry& r);
void registerMatmulOps(OpRegistry& r);
void registerReduceOps(OpRegistry& r);
void registerNormOps(OpRegistry& r);
void registerShapeOps(OpRegistry& r);
void registerIndexOps(OpRegistry& r);
void registerConvOps(OpRegistry& r);
void registerPoolOps(OpRegistry& r);
void registerCollectiveOps(OpRegistry& r);
void registerRandomOps(OpRegistry& r);
void registerCallOps(OpRegistry& r);
} // namespace shardc
