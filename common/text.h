// Small text helpers every layer and the tools share: blanks trimmed, lower case, the one parser
// and formatter of sizes ("64K", "1M", "inf", "8KiB"), and texts joined at compile time (help
// texts built from the lists of common/collective.h). Header-only and free of any Overpass
// library, so that overpass-bench and overpass-check, which link MPI only, use the same parser.
#pragma once

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace overpass {

// `s` without the blanks (spaces and tabs) around it.
constexpr std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// `s` in lower case (ASCII letters only: independent of the application's locale).
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// The forms of a size beyond the base one. Base: decimal digits with an optional K, M or G
// suffix (x1024, either case); no blanks, sign, point, exponent or hex. Overflow is out of range,
// never a wrap.
struct SizeForms {
  bool inf = false;    // "inf" (any case): the largest value, e.g. the open end of a tune range
  bool bytes = false;  // a trailing B or b ("8B", "64KB"), or iB/ib after K, M or G ("64KiB")
};

// The size `text` spells, if it is at most `hi` bytes.
constexpr std::optional<std::uint64_t> parseSize(std::string_view text, std::uint64_t hi,
                                                 SizeForms forms = {}) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  if (forms.inf && text.size() == 3 && (text[0] | 0x20) == 'i' && (text[1] | 0x20) == 'n' &&
      (text[2] | 0x20) == 'f') {
    if (kMax > hi) return std::nullopt;
    return kMax;
  }
  bool binary = false;  // an i before the B
  if (forms.bytes && !text.empty() && (text.back() == 'B' || text.back() == 'b')) {
    text.remove_suffix(1);
    if (!text.empty() && text.back() == 'i') {
      binary = true;
      text.remove_suffix(1);
    }
  }
  unsigned shift = 0;
  if (!text.empty()) {
    const char unit = static_cast<char>(text.back() | 0x20);
    shift = unit == 'k' ? 10 : unit == 'm' ? 20 : unit == 'g' ? 30 : 0;
    if (shift != 0) text.remove_suffix(1);
  }
  if (binary && shift == 0) return std::nullopt;  // "8iB": an i needs a K, M or G before it
  if (text.empty()) return std::nullopt;
  std::uint64_t n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (n > (kMax - digit) / 10) return std::nullopt;
    n = n * 10 + digit;
  }
  if (n > (kMax >> shift) || (n << shift) > hi) return std::nullopt;
  return n << shift;
}

// As the size grammar writes it: 131072 -> "128K", 1000 -> "1000", the largest value -> "inf".
inline std::string formatSize(std::uint64_t bytes) {
  if (bytes == std::numeric_limits<std::uint64_t>::max()) return "inf";
  for (const auto& [shift, unit] : {std::pair{30u, "G"}, std::pair{20u, "M"}, std::pair{10u, "K"}})
    if (bytes != 0 && bytes % (std::uint64_t{1} << shift) == 0)
      return std::to_string(bytes >> shift) + unit;
  return std::to_string(bytes);
}

// The texts kParts... joined, in static storage: a help text that names the items of a list, as
// a constant (JoinedText<kA, kB>::value). A NUL follows it, as it follows a string literal, for
// callers that print ConfigVar texts with %s.
template <const std::string_view&... kParts>
struct JoinedText {
  static constexpr std::array<char, (kParts.size() + ... + 1)> kStorage = [] {
    std::array<char, (kParts.size() + ... + 1)> out{};
    std::size_t at = 0;
    for (std::string_view part : std::array<std::string_view, sizeof...(kParts)>{kParts...})
      for (char c : part) out[at++] = c;
    out[at] = '\0';
    return out;
  }();
  static constexpr std::string_view value{kStorage.data(), kStorage.size() - 1};
};

}  // namespace overpass
