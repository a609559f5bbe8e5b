// The tools' size arguments: "8", "64K", "32M", "1G" (powers of 1024, any case; an optional
// trailing B, or iB after K, M or G). overpass-bench and overpass-check use common/text.h's size
// parser, header-only, so they still link no Overpass library.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string_view>

#include "common/text.h"

namespace overpass::tools {

inline std::optional<std::size_t> parseSizeText(std::string_view text) {
  const auto bytes = parseSize(text, std::numeric_limits<std::size_t>::max(), {.bytes = true});
  if (!bytes) return std::nullopt;
  return static_cast<std::size_t>(*bytes);
}

}  // namespace overpass::tools
