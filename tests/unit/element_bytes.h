// Test helpers for comparing reduction results byte by byte: the C layout of MPI's pair types,
// and the meaningful bytes of elements with padding (x87 long double, pairs), padding zeroed.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/datatype.h"

namespace overpass::test {

template <class V, class I>
struct Pair {  // the C layout of MPI's pair types, {value; int}
  V value;
  I index;
};

// The meaningful bytes of `n` elements, padding zeroed (x87 long double has 6 bytes of padding,
// pairs have padding between value and index): what a comparison must look at.
template <class V, class I>
inline void canonicalPair(unsigned char* at) {
  using P = Pair<V, I>;
  constexpr std::size_t kIndexAt = offsetof(P, index);
  V value;
  I index;
  std::memcpy(&value, at, sizeof value);
  std::memcpy(&index, at + kIndexAt, sizeof index);
  std::memset(at, 0, sizeof(Pair<V, I>));
  if constexpr (std::is_same_v<V, long double>) {
    std::memcpy(at, &value, 10);
  } else {
    std::memcpy(at, &value, sizeof value);
  }
  std::memcpy(at + kIndexAt, &index, sizeof index);
}

inline std::vector<unsigned char> canonical(DataType type, const unsigned char* data,
                                            std::size_t n) {
  const std::size_t size = dataTypeSize(type);
  std::vector<unsigned char> v(data, data + n * size);
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char* at = v.data() + i * size;
    switch (type) {
      case DataType::kLongDouble:
        std::memset(at + 10, 0, size - 10);
        break;
      case DataType::kDoubleInt:
        canonicalPair<double, int>(at);
        break;
      case DataType::kLongInt:
        canonicalPair<long, int>(at);
        break;
      case DataType::kShortInt:
        canonicalPair<short, int>(at);
        break;
      case DataType::kLongDoubleInt:
        canonicalPair<long double, int>(at);
        break;
      default:
        break;
    }
  }
  return v;
}

}  // namespace overpass::test
