// Tests of common/text.h: trim, lower, the one size parser (every form it accepts, every way a
// size can be malformed, the bounds) and formatter, texts joined at compile time; and the texts
// built from the one list of collectives (common/collective.h).
#include "common/text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "common/collective.h"
#include "common/config.h"
#include "tools/size_text.h"

namespace overpass {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

TEST(Text, TrimDropsBlanksOnly) {
  EXPECT_EQ(trim(" \t a b \t "), "a b");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" \t"), "");
  EXPECT_EQ(trim("\na\r"), "\na\r");  // control characters are the callers' to reject
  static_assert(trim("  x ") == "x");
}

TEST(Text, LowerChangesAsciiLettersOnly) {
  EXPECT_EQ(lower("AllReduce_8K-Inf:@Ring"), "allreduce_8k-inf:@ring");
  EXPECT_EQ(lower(""), "");
  EXPECT_EQ(lower("\xC3\x89"), "\xC3\x89");  // not a letter to this function
}

TEST(SizeText, BaseFormIsDigitsWithAnOptionalBinarySuffix) {
  EXPECT_EQ(parseSize("0", kMax), 0u);
  EXPECT_EQ(parseSize("8", kMax), 8u);
  EXPECT_EQ(parseSize("0008", kMax), 8u);
  EXPECT_EQ(parseSize("8k", kMax), 8192u);
  EXPECT_EQ(parseSize("8K", kMax), 8192u);
  EXPECT_EQ(parseSize("3m", kMax), 3u << 20);
  EXPECT_EQ(parseSize("3M", kMax), 3u << 20);
  EXPECT_EQ(parseSize("2g", kMax), std::uint64_t{2} << 30);
  EXPECT_EQ(parseSize("2G", kMax), std::uint64_t{2} << 30);
  EXPECT_EQ(parseSize("0K", kMax), 0u);
  static_assert(parseSize("64K", kMax) == 65536u);  // usable in constant expressions
  for (const char* bad :
       {"",   "K",    "k",  "8KB",  "8B",  "8KiB", "inf", "8 K", " 8",    "8 ", "-8",
        "+8", "8.5K", "8.", "0x10", "1e3", "8T",   "8KK", "K8",  "8_000", "８"})
    EXPECT_EQ(parseSize(bad, kMax), std::nullopt) << bad;
}

TEST(SizeText, BoundsAndOverflow) {
  EXPECT_EQ(parseSize("8k", 8192), 8192u);
  EXPECT_EQ(parseSize("8k", 8191), std::nullopt);
  EXPECT_EQ(parseSize("0", 0), 0u);
  EXPECT_EQ(parseSize("1", 0), std::nullopt);
  EXPECT_EQ(parseSize("18446744073709551615", kMax), kMax);
  EXPECT_EQ(parseSize("18446744073709551616", kMax), std::nullopt);
  EXPECT_EQ(parseSize("99999999999999999999999", kMax), std::nullopt);
  EXPECT_EQ(parseSize("17179869183G", kMax), std::uint64_t{17179869183} << 30);
  EXPECT_EQ(parseSize("17179869184G", kMax), std::nullopt);  // 2^64: not a wrap to 0
  EXPECT_EQ(parseSize("17592186044415M", kMax), std::uint64_t{17592186044415} << 20);
  EXPECT_EQ(parseSize("17592186044416M", kMax), std::nullopt);
  EXPECT_EQ(parseSize("18014398509481983K", kMax), std::uint64_t{18014398509481983} << 10);
  EXPECT_EQ(parseSize("18014398509481984K", kMax), std::nullopt);
}

TEST(SizeText, InfIsTheLargestValueWhereAsked) {
  const SizeForms inf{.inf = true};
  for (const char* text : {"inf", "INF", "Inf", "iNf"}) EXPECT_EQ(parseSize(text, kMax, inf), kMax);
  EXPECT_EQ(parseSize("inf", kMax - 1, inf), std::nullopt);  // above the bound like any size
  EXPECT_EQ(parseSize("8K", kMax, inf), 8192u);              // the base form still
  for (const char* bad : {"infinity", "in", "-inf", "+inf", " inf", "inf ", "infK", "8inf", "8KB"})
    EXPECT_EQ(parseSize(bad, kMax, inf), std::nullopt) << bad;
}

TEST(SizeText, ByteSuffixesWhereAsked) {
  const SizeForms bytes{.bytes = true};
  const std::pair<const char*, std::uint64_t> good[] = {
      {"8", 8},          {"8B", 8},        {"8b", 8},         {"64K", 65536},
      {"64KB", 65536},   {"64kb", 65536},  {"64KiB", 65536},  {"64kib", 65536},
      {"1MiB", 1 << 20}, {"1mB", 1 << 20}, {"1GB", 1u << 30}, {"1Gib", 1u << 30}};
  for (const auto& [text, value] : good) EXPECT_EQ(parseSize(text, kMax, bytes), value) << text;
  for (const char* bad : {"B", "KB", "KiB", "8iB", "8ib", "8IB", "64KIB", "64KBB", "64 KB", "64K B",
                          "64Ki", "64BK", "inf", "8bytes"})
    EXPECT_EQ(parseSize(bad, kMax, bytes), std::nullopt) << bad;
  EXPECT_EQ(parseSize("inf", kMax, SizeForms{.inf = true, .bytes = true}), kMax);
  EXPECT_EQ(parseSize("1KiB", 1023, bytes), std::nullopt);
}

TEST(SizeText, ToolsTakeTheByteForms) {
  EXPECT_EQ(tools::parseSizeText("32M"), std::size_t{32} << 20);
  EXPECT_EQ(tools::parseSizeText("32768K"), std::size_t{32} << 20);  // a cache size in sysfs
  EXPECT_EQ(tools::parseSizeText("4MiB"), std::size_t{4} << 20);
  EXPECT_EQ(tools::parseSizeText("8B"), 8u);
  for (const char* bad : {"abc", "4x", "", "-1", "8iB", "16777216T"})
    EXPECT_EQ(tools::parseSizeText(bad), std::nullopt) << bad;
}

TEST(SizeText, FormatIsTheShortestExactForm) {
  EXPECT_EQ(formatSize(0), "0");
  EXPECT_EQ(formatSize(1000), "1000");
  EXPECT_EQ(formatSize(1024), "1K");
  EXPECT_EQ(formatSize(131072), "128K");
  EXPECT_EQ(formatSize(3u << 20), "3M");
  EXPECT_EQ(formatSize(std::uint64_t{5} << 30), "5G");
  EXPECT_EQ(formatSize(std::uint64_t{1} << 40), "1024G");
  EXPECT_EQ(formatSize(kMax), "inf");
  for (std::uint64_t v : {std::uint64_t{0}, std::uint64_t{1000}, std::uint64_t{3} << 20, kMax})
    EXPECT_EQ(parseSize(formatSize(v), kMax, SizeForms{.inf = true}), v) << v;  // read back
}

constexpr std::string_view kHead = "one, ", kMiddle = "two", kTail = ", three";

TEST(Text, JoinedAtCompileTime) {
  static_assert(JoinedText<kHead, kMiddle, kTail>::value == "one, two, three");
  static_assert(JoinedText<kMiddle>::value == "two");
  EXPECT_EQ((JoinedText<kHead, kTail>::value), "one, , three");
  EXPECT_EQ((JoinedText<kHead, kTail>::value.data()[12]), '\0');  // printable with %s
  static_assert(JoinedText<>::value.empty());
}

TEST(CollectiveList, NamesAndVariablesComeFromTheOneList) {
  EXPECT_EQ(kCollectiveList,
            "allreduce, bcast, scatter, gather, alltoall, reduce, allgather, "
            "reduce_scatter_block, barrier, allgatherv, alltoallv, gatherv, scatterv, "
            "reduce_scatter, scan, exscan");
  const ConfigVar* colls = nullptr;
  std::size_t forced = 0;
  for (const ConfigVar& v : configVars()) {
    if (v.name == "OVERPASS_COLLS") colls = &v;
    for (std::size_t c = 0; c < kNumCollectives; ++c) {
      const std::string name(kCollectiveNames[c]);
      std::string upper = name;
      for (char& ch : upper) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
      if (v.name != "OVERPASS_" + upper) continue;
      ++forced;
      EXPECT_NE(v.accepted.find("an algorithm of " + name + " "), std::string_view::npos);
      EXPECT_NE(v.help.find("'" + name + ":@ALGORITHM'"), std::string_view::npos);
      Config config;
      ASSERT_TRUE(v.parse("Ring", config)) << v.name;
      EXPECT_EQ(config.forced[c], "ring") << v.name;
    }
  }
  EXPECT_EQ(forced, kNumCollectives);
  ASSERT_NE(colls, nullptr);
  EXPECT_EQ(colls->accepted,
            "all or none alone, or a comma-separated list of allreduce, bcast, scatter, gather, "
            "alltoall, reduce, allgather, reduce_scatter_block, barrier, allgatherv, alltoallv, "
            "gatherv, scatterv, reduce_scatter, scan, exscan (each once); a leading ^ excludes "
            "the listed ones");
}

}  // namespace
}  // namespace overpass
