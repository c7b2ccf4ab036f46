#include "TestUtil.h"

using namespace shardc;
using namespace shardc::testing;

TEST(MatmulOpTest, HandWorked2x2) {
  // [1 2; 3 4] @ [5 6; 7 8] = [19 22; 43 50]
  EXPECT_TRUE(allClose(run1("matmul", {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {5, 6, 7, 8})}),
                       f32({2, 2}, {19, 22, 43, 50})));
}

TEST(MatmulOpTest, BroadcastsBatchDims) {
  // a: [2,1,2] batches, b: [2,1] shared; each row dotted with [1, -1].
  Tensor a = f32({2, 1, 2}, {3, 1, 10, 4});
  Tensor b = f32({2, 1}, {1, -1});
  EXPECT_TRUE(allClose(run1("matmul", {a, b}), f32({2, 1, 1}, {2, 6})));
}
