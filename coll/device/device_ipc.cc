#include "coll/device/device_ipc.h"

#include <cstring>
#include <vector>

#include "coll/math/blocks.h"

namespace overpass {
namespace {

// What each rank publishes in round 1 (in its channel buffer).
struct Offer {
  std::uint32_t able;  // whether this rank can take part
  IpcHandle in;        // the buffer peers read: send buffer (allreduce, alltoall), root's buffer
  IpcHandle out;       // allreduce: the receive buffer, whose slices peers copy
};

// This rank's offer for `args` (whose buffers the shim found on the device: args.onDevice).
Offer offer(const CollArgs& args, int rank, int size, DeviceMemory& memory) {
  Offer o{};
  if (!args.onDevice) return o;
  const std::size_t all = args.bytes * static_cast<std::size_t>(size);
  switch (args.coll) {
    case Collective::kAllreduce:
      o.able = memory.canReduce(args.type, args.op) &&
               memory.exportIpc(args.sendbuf, args.bytes, &o.in) &&
               memory.exportIpc(args.recvbuf, args.bytes, &o.out);
      break;
    case Collective::kBcast:
      o.able = rank == args.root ? memory.exportIpc(args.recvbuf, args.bytes, &o.in) : 1;
      break;
    case Collective::kAlltoall:
      o.able = args.sendbuf != args.recvbuf && memory.exportIpc(args.sendbuf, all, &o.in);
      break;
    default:
      break;
  }
  return o;
}

// One round in which each rank publishes `bytes` of `data`, a flag first; whether every rank's
// flag is set.
Status agree(ShmChannel& ch, const void* data, std::size_t bytes, bool* all) {
  OVERPASS_CHECK(ch.reserve());
  std::memcpy(ch.next(bytes), data, bytes);
  OVERPASS_CHECK(ch.sync());
  *all = true;
  for (int q = 0; q < ch.size(); ++q) {
    std::uint32_t able = 0;
    std::memcpy(&able, ch.peer(q, bytes), sizeof able);
    *all = *all && able;
  }
  return Status::kOk;
}

// A round with nothing to publish: every rank has reached it.
Status meet(ShmChannel& ch) {
  OVERPASS_CHECK(ch.reserve());
  return ch.sync();
}

Status allreduce(const CollArgs& a, ShmChannel& ch, DeviceMemory& memory, DeviceScratch& scratch,
                 const std::vector<const unsigned char*>& in,
                 const std::vector<unsigned char*>& out) {
  const int p = ch.size(), r = ch.rank();
  const BlockSplit slices(a, p);  // slice q: rank q's
  const std::size_t at = slices.offset(r), count = slices.elements(r);
  auto* dest = static_cast<unsigned char*>(a.recvbuf) + at;
  // In place, this slice is rank r's own input: from r >= 2 it is read after the first step wrote
  // the running result, which must therefore go elsewhere.
  unsigned char* target = dest;
  if (a.sendbuf == a.recvbuf && r >= 2) {
    target = static_cast<unsigned char*>(scratch.get(0, slices.bytes(r), memory));
    if (!target) return Status::kNoMemory;
  }
  DeviceMemory::Ticket ticket;
  if (count) {
    const unsigned char* acc = in[0] + at;
    for (int q = 1; q < p; ++q) {
      OVERPASS_CHECK(memory.startReduce(DeviceMemory::kDown, acc, in[q] + at, target, count, a.type,
                                        a.op, &ticket));
      acc = target;
    }
    if (target != dest)
      OVERPASS_CHECK(memory.startCopy(DeviceMemory::kDown, dest, target, slices.bytes(r), &ticket));
  }
  OVERPASS_CHECK(memory.wait(ticket));
  OVERPASS_CHECK(meet(ch));  // every slice is final
  for (int q = 0; q < p; ++q) {
    if (q == r || !slices.elements(q)) continue;
    OVERPASS_CHECK(memory.startCopy(DeviceMemory::kDown,
                                    static_cast<unsigned char*>(a.recvbuf) + slices.offset(q),
                                    out[q] + slices.offset(q), slices.bytes(q), &ticket));
  }
  return memory.wait(ticket);
}

Status bcast(const CollArgs& a, ShmChannel& ch, DeviceMemory& memory,
             const std::vector<const unsigned char*>& in) {
  DeviceMemory::Ticket ticket;
  if (ch.rank() != a.root)
    OVERPASS_CHECK(memory.startCopy(DeviceMemory::kDown, a.recvbuf, in[a.root], a.bytes, &ticket));
  return memory.wait(ticket);
}

Status alltoall(const CollArgs& a, ShmChannel& ch, DeviceMemory& memory,
                const std::vector<const unsigned char*>& in) {
  DeviceMemory::Ticket ticket;
  const std::size_t mine = a.bytes * static_cast<std::size_t>(ch.rank());
  for (int q = 0; q < ch.size(); ++q)
    OVERPASS_CHECK(memory.startCopy(DeviceMemory::kDown,
                                    static_cast<unsigned char*>(a.recvbuf) + q * a.bytes,
                                    in[q] + mine, a.bytes, &ticket));
  return memory.wait(ticket);
}

}  // namespace

Status deviceIpc(const CollArgs& a, Team& team) {
  // The same on every rank: the team's channel, and its size.
  if (!team.shm || !team.deviceScratch || team.shm->size() < 2) return Status::kDeclined;
  ShmChannel& ch = *team.shm;
  DeviceMemory* memory = team.device;
  const int p = ch.size(), r = ch.rank();
  const bool fits = ch.bufferBytes() >= sizeof(Offer);
  const Offer mine = memory && a.bytes && fits ? offer(a, r, p, *memory) : Offer{};
  bool able = false;
  OVERPASS_CHECK(agree(ch, &mine, fits ? sizeof(Offer) : sizeof mine.able, &able));
  if (!able) return Status::kDeclined;

  // Round 2: the peers' buffers this rank reads, mapped here (its own used directly).
  std::vector<const unsigned char*> in(p);
  std::vector<unsigned char*> out(p);
  std::uint32_t mapped = 1;
  for (int q = 0; q < p && mapped; ++q) {
    const Offer& o = *reinterpret_cast<const Offer*>(ch.peer(q, sizeof(Offer)));
    const bool reads = a.coll != Collective::kBcast || q == a.root;
    if (q == r) {
      in[q] = static_cast<const unsigned char*>(
          a.coll == Collective::kAllreduce || a.coll == Collective::kAlltoall ? a.sendbuf
                                                                              : a.recvbuf);
      out[q] = static_cast<unsigned char*>(a.recvbuf);
    } else if (reads) {
      in[q] = static_cast<const unsigned char*>(memory->openIpc(o.in));
      if (a.coll == Collective::kAllreduce)
        out[q] = static_cast<unsigned char*>(memory->openIpc(o.out));
      mapped = in[q] && (a.coll != Collective::kAllreduce || out[q]);
    }
  }
  OVERPASS_CHECK(agree(ch, &mapped, sizeof mapped, &able));
  if (!able) return Status::kDeclined;

  switch (a.coll) {
    case Collective::kAllreduce:
      OVERPASS_CHECK(allreduce(a, ch, *memory, *team.deviceScratch, in, out));
      break;
    case Collective::kBcast:
      OVERPASS_CHECK(bcast(a, ch, *memory, in));
      break;
    default:
      OVERPASS_CHECK(alltoall(a, ch, *memory, in));
      break;
  }
  return meet(ch);  // no peer reads this rank's buffers any more
}

}  // namespace overpass
