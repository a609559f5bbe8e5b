// The UCX layer's own unit tests (a test program of its own: the other unit tests, like coll/,
// link without UCX).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "transport/ucx/ucx_transport.h"

namespace overpass {
namespace {

TEST(UcxTag, FieldsKeepCommunicatorsTagsAndSourcesApart) {
  std::set<std::uint64_t> tags;
  for (std::uint32_t comm : {1u, 2u, (1u << 24) - 1})
    for (int tag : {0, 1, 8, 65535})
      for (int source : {0, 1, 4095, (1 << 24) - 1})
        EXPECT_TRUE(tags.insert(makeUcxTag(comm, tag, source)).second);
  EXPECT_EQ(makeUcxTag(1, 0, 0), std::uint64_t{1} << 40);
  EXPECT_EQ(makeUcxTag(0, 1, 0), std::uint64_t{1} << 24);
  EXPECT_EQ(makeUcxTag(0, 0, 1), 1u);
}

}  // namespace
}  // namespace overpass
