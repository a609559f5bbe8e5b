// Checked file access for the files Overpass reads and writes on the user's behalf (the topology
// file and dump, the statistics file): only regular files are read, with a size cap, so that
// /dev/zero or a FIFO cannot exhaust memory or hang a rank; every write and close is checked.
// Each function returns "" on success, otherwise the problem in words (with the OS error).
#pragma once

#include <cstddef>
#include <string>

namespace overpass {

inline constexpr std::size_t kMaxReadFileBytes = std::size_t{64} << 20;

// Reads the whole of `path` into `text`: a regular file of at most `maxBytes` bytes.
std::string readRegularFile(const std::string& path, std::string* text,
                            std::size_t maxBytes = kMaxReadFileBytes);

// Opens `path` for writing (creating it if missing) without blocking and closes it again: what
// writeWholeFile will need later, checked now. A FIFO without a reader is refused rather than
// waited for.
std::string checkWritable(const std::string& path);

// Replaces the contents of `path` with `text` (creating it if missing), every write and the close
// checked.
std::string writeWholeFile(const std::string& path, const std::string& text);

}  // namespace overpass
