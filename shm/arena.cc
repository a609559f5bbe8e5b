#include "shm/arena.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace overpass {
namespace {

constexpr std::uint64_t kMagic = 0x4f56455250415353ull;  // "OVERPASS"

struct Header {
  std::uint64_t magic;
  std::uint64_t ranks;
  std::uint64_t bufferBytes;
  std::uint64_t totalBytes;
};

constexpr std::size_t roundUp(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

std::size_t controlOffset() {
  return roundUp(sizeof(Header), ShmArena::kLine);
}

std::string errnoText(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// Bytes from one buffer's stamp to the next's.
std::size_t slotStride(std::size_t bufferBytes) {
  return roundUp(ShmArena::kStampLine + bufferBytes, 4096);
}

std::size_t buffersOffset(int ranks) {
  return roundUp(controlOffset() + ranks * ShmArena::kLine, 4096);
}

// One post box: its slots, then the line of the receiver's count.
constexpr std::size_t kBoxBytes = ShmArena::kPostSlots * ShmArena::kPostSlotBytes + ShmArena::kLine;
static_assert(ShmArena::kPostSlotBytes >= 8 + ShmArena::kPostBytes &&
              ShmArena::kPostSlotBytes % ShmArena::kStampLine == 0);

std::size_t postsOffset(int ranks, std::size_t bufferBytes) {
  return buffersOffset(ranks) + static_cast<std::size_t>(ranks) * 2 * slotStride(bufferBytes);
}

std::size_t postsBytes(int ranks) {
  return ranks <= ShmArena::kPostRanks ? static_cast<std::size_t>(ranks) * ranks * kBoxBytes : 0;
}

}  // namespace

std::size_t ShmArena::layoutBytes(int ranks, std::size_t bufferBytes) {
  return postsOffset(ranks, bufferBytes) + postsBytes(ranks);
}

void ShmArena::initAtomics(int ranks) {
  for (int r = 0; r < ranks; ++r)
    for (int which : {0, 1}) new (&stamp(r, which)) std::atomic<std::uint64_t>(0);
  if (!hasPosts()) return;
  for (int from = 0; from < ranks; ++from)
    for (int to = 0; to < ranks; ++to) {
      for (std::size_t slot = 0; slot < kPostSlots; ++slot)
        new (&postStamp(from, to, slot)) std::atomic<std::uint64_t>(0);
      new (&postsTaken(from, to)) std::atomic<std::uint64_t>(0);
    }
}

ShmArena::~ShmArena() {
  if (base_) munmap(base_, bytes_);
}

std::unique_ptr<ShmArena> ShmArena::create(const std::string& name, int ranks,
                                           std::size_t bufferBytes, std::string* why) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    *why = errnoText("shm_open");
    return nullptr;
  }
  const std::size_t bytes = layoutBytes(ranks, bufferBytes);
  // Reserve the pages now: a full /dev/shm fails here, not with SIGBUS on first touch.
  if (const int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes)); rc != 0) {
    errno = rc;
    *why = errnoText("posix_fallocate");
    close(fd);
    shm_unlink(name.c_str());
    return nullptr;
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    *why = errnoText("mmap");
    shm_unlink(name.c_str());
    return nullptr;
  }
  auto* header = new (base) Header{kMagic, static_cast<std::uint64_t>(ranks), bufferBytes, bytes};
  (void)header;
  std::unique_ptr<ShmArena> arena(new ShmArena(base, bytes));
  for (int r = 0; r < ranks; ++r) {
    Control* c = new (static_cast<unsigned char*>(base) + controlOffset() + r * kLine) Control;
    c->pid.store(0, std::memory_order_relaxed);
  }
  arena->initAtomics(ranks);
  std::atomic_thread_fence(std::memory_order_release);
  return arena;
}

std::unique_ptr<ShmArena> ShmArena::attach(const std::string& name, std::string* why) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) {
    *why = errnoText("shm_open");
    return nullptr;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < sizeof(Header)) {
    *why = "the segment is too small";
    close(fd);
    return nullptr;
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    *why = errnoText("mmap");
    return nullptr;
  }
  std::unique_ptr<ShmArena> arena(new ShmArena(base, bytes));
  const auto* header = static_cast<const Header*>(base);
  if (header->magic != kMagic || header->totalBytes != bytes) {
    *why = "not an Overpass segment";
    return nullptr;
  }
  return arena;
}

std::unique_ptr<ShmArena> ShmArena::anonymous(int ranks, std::size_t bufferBytes) {
  const std::size_t bytes = layoutBytes(ranks, bufferBytes);
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  new (base) Header{kMagic, static_cast<std::uint64_t>(ranks), bufferBytes, bytes};
  std::unique_ptr<ShmArena> arena(new ShmArena(base, bytes));
  for (int r = 0; r < ranks; ++r)
    new (static_cast<unsigned char*>(base) + controlOffset() + r * kLine) Control{{0}};
  arena->initAtomics(ranks);
  return arena;
}

void ShmArena::unlink(const std::string& name) {
  shm_unlink(name.c_str());
}

int ShmArena::ranks() const {
  return static_cast<int>(reinterpret_cast<const Header*>(base_)->ranks);
}

std::size_t ShmArena::bufferBytes() const {
  return reinterpret_cast<const Header*>(base_)->bufferBytes;
}

ShmArena::Control& ShmArena::control(int rank) const {
  return *reinterpret_cast<Control*>(base_ + controlOffset() + rank * kLine);
}

std::atomic<std::uint64_t>& ShmArena::stamp(int rank, int which) const {
  return *reinterpret_cast<std::atomic<std::uint64_t>*>(
      base_ + buffersOffset(ranks()) +
      (static_cast<std::size_t>(rank) * 2 + which) * slotStride(bufferBytes()));
}

unsigned char* ShmArena::box(int from, int to) const {
  return base_ + postsOffset(ranks(), bufferBytes()) +
         (static_cast<std::size_t>(from) * ranks() + to) * kBoxBytes;
}

std::atomic<std::uint64_t>& ShmArena::postStamp(int from, int to, std::size_t slot) const {
  return *reinterpret_cast<std::atomic<std::uint64_t>*>(box(from, to) + slot * kPostSlotBytes);
}

std::atomic<std::uint64_t>& ShmArena::postsTaken(int from, int to) const {
  return *reinterpret_cast<std::atomic<std::uint64_t>*>(box(from, to) +
                                                        kPostSlots * kPostSlotBytes);
}

unsigned char* ShmArena::beside(int rank, int which) const {
  return reinterpret_cast<unsigned char*>(&stamp(rank, which)) + kStampBytes;
}

unsigned char* ShmArena::buffer(int rank, int which) const {
  return reinterpret_cast<unsigned char*>(&stamp(rank, which)) + kStampLine;
}

}  // namespace overpass
