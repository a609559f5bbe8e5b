#include "shm/stream_copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace overpass {

void streamCopy(void* dst, const void* src, std::size_t bytes) {
#if defined(__x86_64__)
  constexpr std::size_t kLine = 64;
  if (bytes >= 4 * kLine) {
    auto* d = static_cast<unsigned char*>(dst);
    const auto* s = static_cast<const unsigned char*>(src);
    // Head: up to the destination's next 16-byte boundary (streaming stores need it).
    const std::size_t head = (16 - reinterpret_cast<std::uintptr_t>(d) % 16) % 16;
    std::memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    const std::size_t body = bytes & ~(kLine - 1);
    for (std::size_t i = 0; i < body; i += kLine) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
      const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
    }
    _mm_sfence();  // the stores are weakly ordered: complete them before anyone reads dst
    std::memcpy(d + body, s + body, bytes - body);
    return;
  }
#endif
  std::memcpy(dst, src, bytes);
}

}  // namespace overpass
