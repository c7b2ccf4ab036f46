// Every op of the registry either has a family of native kernels (the tables of lib/exec) or is
// listed here as running its reference kernel, with the reason: a new op must choose.
#include "shardc/exec/ExecPlan.h"
#include "shardc/ops/OpNames.h"
#include "shardc/ops/OpRegistry.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace shardc {
namespace {

// Ops with no native kernel, and why.
const std::map<std::string_view, const char*> kReferenceOnly = {
    {opname::kArgmax, "an index result; the loss and metrics paths do not need its speed"},
    {opname::kConstant, "bound once as a constant of the plan, never a step"},
};

TEST(KernelCoverageTest, EveryOpHasANativeFamilyOrIsListed) {
  for (const auto& def : OpRegistry::get().all()) {
    std::string_view family = nativeKernelFamily(*def);
    bool listed = kReferenceOnly.count(def->name) > 0;
    EXPECT_TRUE(!family.empty() || listed)
        << "op '" << def->name << "' has no native kernel family and is not listed as running "
        << "its reference kernel";
    EXPECT_FALSE(!family.empty() && listed)
        << "op '" << def->name << "' is listed as reference-only but has the native family '"
        << family << "'";
  }
}

TEST(KernelCoverageTest, ListedOpsAreRegistered) {
  for (const auto& [name, why] : kReferenceOnly)
    EXPECT_NE(OpRegistry::get().lookup(name), nullptr) << name;
}

} // namespace
} // namespace shardc
