// The tools' size arguments: "8", "64K", "32M", "1G" (powers of 1024, any case; an optional
// trailing B or iB). One parser for overpass-bench and overpass-check.
#pragma once

#include <charconv>
#include <cstddef>
#include <limits>
#include <optional>
#include <string_view>

namespace overpass::tools {

inline std::optional<std::size_t> parseSizeText(std::string_view text) {
  std::size_t value = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || p == text.data()) return std::nullopt;
  std::string_view suffix(p, static_cast<std::size_t>(end - p));
  std::size_t scale = 1;
  if (!suffix.empty()) {
    const char c = suffix[0];
    scale = c == 'k' || c == 'K'   ? std::size_t{1} << 10
            : c == 'm' || c == 'M' ? std::size_t{1} << 20
            : c == 'g' || c == 'G' ? std::size_t{1} << 30
                                   : 1;
    if (scale != 1) suffix.remove_prefix(1);
    if (suffix != "" && suffix != "B" && suffix != "b" && suffix != "iB" && suffix != "ib")
      return std::nullopt;
  }
  if (value > std::numeric_limits<std::size_t>::max() / scale) return std::nullopt;
  return value * scale;
}

}  // namespace overpass::tools
