// shm/stream_copy.h: every byte arrives, nothing around the destination is touched, at every
// alignment of source and destination and every length around the streaming block sizes.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "shm/stream_copy.h"

namespace overpass {
namespace {

TEST(StreamCopy, CopiesExactlyTheBytesAtEveryAlignment) {
  std::vector<unsigned char> src(8192 + 64), dst(8192 + 128);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + 3);
  for (std::size_t bytes : {0, 1, 15, 63, 64, 255, 256, 257, 1000, 4095, 8192})
    for (std::size_t from = 0; from < 20; from += 3)
      for (std::size_t to = 0; to < 20; to += 5) {
        std::fill(dst.begin(), dst.end(), 0xEE);
        streamCopy(dst.data() + 32 + to, src.data() + from, bytes);
        for (std::size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= 32 + to && i < 32 + to + bytes;
          ASSERT_EQ(dst[i], inside ? src[from + i - 32 - to] : 0xEE)
              << "bytes " << bytes << " from +" << from << " to +" << to << " at " << i;
        }
      }
}

}  // namespace
}  // namespace overpass
