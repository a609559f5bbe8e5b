#include "coll/select/selector.h"

#include <algorithm>

#include <limits>
#include <utility>

namespace overpass {

// Measured choices where the cost model is wrong on a shared-memory node with 2-4 ranks (the
// only setting measured so far; docs/PERFORMANCE.md, "Algorithm selection", 2026-12-02). Larger
// teams are left to the cost model until they are measured.
const std::string_view kDefaultTune =
    // np 2: one exchange of the whole vector up to 512 KiB (rd 107 us vs ring 115 at 512 KiB),
    // the ring above (2 MiB: 595 us vs rd 885).
    "allreduce:np=2:@recursive_doubling#allreduce:1M-inf:np=2:@ring"
    // np 3-4, oversubscribed: one k-nomial level beats log2(p) rounds up to 512 KiB (np 4,
    // 2 KiB: 7.9 us vs rd 17.9); the ring above (np 3, 8 MiB: 8.5 ms vs knomial 10.7).
    "#allreduce:np=3-5:@knomial#allreduce:512K-inf:np=3-5:@ring"
    // Pipelined and scatter-based bcast, and the reduce-scatter-based reduce, lose to the
    // binomial trees when 4 ranks share 2 cores (np 4, 8 MiB bcast: chain 5.7 ms vs 3.4).
    "#bcast:np=2-5:@binomial#reduce:np=2-5:@binomial"
    // Linear gather/scatter: the root is the bottleneck either way; binomial trees add a
    // forwarding hop (np 4, 128 KiB scatter: linear 12.5 us vs binomial 28.8).
    "#gather:np=2-5:@linear#scatter:np=2-5:@linear"
    // The node's shared memory (rules that apply only where the team shares one node; the ones
    // above decide elsewhere), where it was measured faster (docs/PERFORMANCE.md, "Node shared
    // memory"). np 2: allreduce small, small rooted collectives (a one-round flag exchange);
    // reduce at every size (the other rank's vector pipelined into
    // the root's combination: np 2, every call after a barrier, 4 KiB 0.5 us against Open
    // MPI's 2.2, 32-64 KiB 1.2-1.5x, 256 KiB-4 MiB 1.05-1.4x); allreduce from 1 MiB by reading the
    // peer's memory (1.03-2.05x where the two cores sit close, 1.07-1.70x where a cache line's
    // round trip between them takes 0.5 us and the shm allreduce falls to 0.5x;
    // docs/PERFORMANCE.md, issue 19). Since the payloads sit on whole cache lines ("The payload's
    // place", two paired runs, the slow state): allreduce up to 128 KiB (16 / 64 KiB 3.7-3.9 /
    // 1.9-2.0x against recursive doubling's 1.8 / 1.7x; 256 KiB 1.2-1.3x against 1.5x), bcast
    // but at 128-512 KiB (16 KiB 2.1-2.2x, 64 KiB 1.2-1.3x, 1-16 MiB 1.2-5.1x against the MPI
    // library's 0.98-1.01x; 256 KiB 1.05x in one run, 0.85x in the other), scatter up to 64 KiB
    // blocks (8 / 32 KiB 2.4-2.6 / 1.5-1.6x against 0.98x; 128 KiB 0.92-0.97x against the linear
    // scatter's 1.1x); reduce_scatter_block up to 64 KiB blocks and from 8 MiB, where the cost
    // model took the ring from 16 KiB (32 KiB blocks: 4.7-4.8 us against the ring's 9.5-10.0;
    // 8 MiB: 1.9-2.0 ms against 2.4-2.5; the ring stays at 128 KiB-2 MiB: 2 MiB 186 us against
    // shm's 274-324). Since the own block stays out of the round ("The own block stays out of
    // the round", two paired runs each): reduce_scatter_block at every size (64 KiB-4 MiB blocks
    // 3.4-7.3x against the ring's 2.0-4.7x), scatter up to 512 KiB blocks (256 KiB 1.29 / 1.45x
    // against the linear scatter's 0.94 / 0.96x; 64 KiB 1.45x against 0.99x; 1 MiB 1.58 / 1.24x
    // against 1.27 / 1.26x, kept with the linear scatter). Since the cma allreduce's reduced blocks
    // go through the node's shared memory ("The cma allreduce's second half through shared
    // memory", three paired runs, the slow state): allreduce from 128 KiB by cma (128 / 256 / 512
    // KiB 2.13-2.20 / 1.96-2.17 / 1.62x against recursive doubling's 1.46-1.56 / 1.35-1.41 /
    // 1.15-1.25x; in one fast repetition 256 / 512 KiB 1.84 / 1.38x against 0.94 / 0.79x; 64 KiB
    // 2.16x against shm's 2.12x, kept with shm).
    "#allreduce:0-128K:np=2:@shm#allreduce:128K-inf:np=2:@cma"
    "#bcast:0-128K:np=2:@shm#bcast:512K-inf:np=2:@shm"
    "#reduce:np=2:@shm"
    "#reduce_scatter_block:np=2:@shm"
    "#scatter:1K-512K:np=2:@shm"
    // np 3-4 on 2 cores, waiting ranks yielding at once ("Small messages when ranks outnumber
    // cores"): allreduce, allgather, reduce_scatter_block and barrier everywhere (np 4, 4 KiB
    // allreduce: 9 us vs 36 for Open MPI); bcast from 512 B to 64 KiB, gather and scatter from
    // 1 KiB blocks, alltoall up to 32 KiB blocks (np 4, 512 B alltoall: 4.9 us vs 7.2); reduce
    // up to 32 KiB (since the paired campaign below, up to 1 MiB). Issue 19, every call after a
    // barrier (np 4): reduce below 512 B too (16-256 B 0.85-1.18x Open MPI against the binomial
    // tree's 0.75-0.80x); bcast from 64 KiB and reduce from 1 MiB by the binomial tree (bcast 1-64
    // MiB 1.24-4.4x against shm's 0.94-2.3x, reduce 1-16 MiB 1.38-1.54x against 0.63-1.25x). Tiny
    // rooted collectives go to the MPI library (gather and scatter at np 2 too; on one node only
    // while it sends them inline, below): its root returns without waiting for anyone (np 4, 8 B
    // bcast: 0.3 us; np 2, 64 B gather: 0.2 us against 0.7 through shm), where every shared-memory
    // round waits for the last rank's previous round. Since the payloads sit on whole cache lines
    // (two paired runs, np 4, the slow state; sizes in blocks): bcast at every size from 512 B (64
    // KiB 6.3-6.9x, 256 KiB 1.7-2.0x against the MPI library's 0.98x; 1-16 MiB 2.3-2.9x against the
    // binomial tree's 1.2-1.4x), gather from 1 KiB blocks, until 2026-12-07 but the linear gather
    // of 512 KiB-2 MiB blocks (16 KiB 1.8-2.0x against the linear gather's 1.2x, 64 KiB 1.2-1.5x
    // against the MPI library's 0.99x, 256 KiB 1.5-1.7x against 1.4x, 1 MiB 1.07x against 1.1-1.2x,
    // 4 MiB 1.8x against 0.9-1.0x), scatter up to 128 KiB blocks (64 KiB 1.25x against 0.95x; 256
    // KiB 0.6x against 1.0x), alltoall up to 128 KiB blocks (16 KiB 2.0-2.2x, 64 KiB 1.1x against
    // the MPI library's 0.98-1.0x; 256 KiB 0.6x). Since the gather's root copies nothing in from
    // two rounds (2026-12-07), its shm gather of 512 KiB-2 MiB blocks too: 1.21-1.66x against the
    // linear gather's 1.04-1.24x in three runs at np 3 and 4 (docs/PERFORMANCE.md, "The gather's
    // root copies nothing in").
    "#allreduce:np=3-5:@shm#allgather:np=3-5:@shm#reduce_scatter_block:np=3-5:@shm"
    "#barrier:np=3-5:@shm"
    "#bcast:0-512:np=3-5:@pmpi#bcast:512-inf:np=3-5:@shm"
    "#gather:0-1K:np=2-5:@pmpi#gather:1K-inf:np=3-5:@shm"
    "#scatter:0-1K:np=2-5:@pmpi#scatter:1K-128K:np=3-5:@shm"
    "#alltoall:0-128K:np=3-5:@shm"
    // Issue 19, every call after a barrier, each ratio to Open MPI's own call timed in the same
    // process in alternating batches (overpass-bench --paired), np 2 and 4, both states of the
    // machine (docs/PERFORMANCE.md, "Every call after a barrier"); sizes in blocks. np 2: gather
    // through shared memory up to 16 KiB blocks (8 KiB: 1.03-2.9x by the state, 3.8x back to
    // back; the linear gather 0.88-0.97x; 32 KiB: 0.23-0.61x). Where no algorithm of Overpass's
    // was faster than the MPI library on one node, the MPI library's own (nodes=1: only where it
    // was measured): np 2, gather from 16 KiB blocks (linear 0.96-1.0x), scatter of 8-64 KiB
    // blocks (linear 0.88-0.99x), alltoall from 8 KiB blocks (pairwise 0.88-0.98x; shm 1.67x or
    // 0.77x by the state), allgather from 16 KiB blocks (the ring 0.91-0.99x, shm 1.14x or 0.51x by
    // the state), bcast from 16 KiB (the binomial tree 0.92-0.98x, shm from 16 MiB 0.56-0.82x); np
    // 3-4, alltoall from 16 KiB blocks (shm 0.63x at 16 KiB in both states), allgather from 4 MiB
    // blocks (shm 0.70-1.10x, the ring 0.89-1.12x, the MPI library 0.97-1.11x), gather of 64-256
    // KiB blocks (linear 0.91-0.94x), bcast of 64 KiB-1 MiB (the binomial tree 0.41-0.55x, shm
    // 0.76-1.14x, the MPI library 0.98-1.0x). np 3-4, reduce through shared memory up to 1 MiB (no
    // reduction goes to the MPI library by a built-in rule; 64 KiB 1.10-1.28x against the binomial
    // tree's 0.94x; 256 KiB-1 MiB 0.83-0.87x in both states, where the tree gave 1.20-1.36x in one
    // and 0.49-0.50x in the other; from 1 MiB the cma reduce, below).
    // Since the payloads sit on whole cache lines (two paired runs, the slow state), np 2: gather
    // through shm up to 64 KiB blocks and from 8 MiB (32 KiB 1.4-1.6x, 8 MiB 1.7-2.0x against the
    // MPI library's 0.96-1.0x), allgather from 8 MiB blocks (1.2-1.5x against 1.0x; 128 KiB-2 MiB
    // 0.68-0.92x); bcast of 128-512 KiB stays with the MPI library (above; a race, below, since
    // 2026-12-07); np 3-4: allgather at every size (4 MiB blocks 1.9-2.2x against the MPI
    // library's 0.94-0.97x), the MPI library's alltoall from 128 KiB blocks only. np 2 gather of
    // 64 KiB-4 MiB blocks through shm too since 2026-12-07 (three runs, both states: 1.34-2.17x
    // against the MPI library's 0.97-1.00x, where two runs before had given shm 0.97-1.15x;
    // docs/PERFORMANCE.md, "The np 2 gather through shared memory at every size").
    "#gather:1K-inf:np=2:@shm"
    "#alltoall:8K-inf:np=2:nodes=1:@pmpi"
    "#allgather:16K-inf:np=2:nodes=1:@pmpi#allgather:8M-inf:np=2:@shm"
    "#bcast:128K-512K:np=2:nodes=1:@pmpi#alltoall:128K-inf:np=3-5:nodes=1:@pmpi"
    "#reduce:0-1M:np=3-5:@shm"
    // From 1 MiB at 3-4 ranks, the cma reduce (coll/phases/cma.h: each rank reduces its block of
    // the peers' vectors, read from their memory, and writes it into the root's). Paired runs,
    // np 4: 1 MiB 0.95-1.21x Open MPI in five runs of the slow state, where shm gave 0.55-0.99x
    // (0.83x in the fast rows of one run); 4-64 MiB 1.34-2.23x (1.44-1.53x in fast rows), where
    // the binomial tree gave 0.68-1.48x and shm 0.77-1.43x; np 3 at 1-64 MiB 0.93-1.28x, shm
    // 0.75-1.19x, the tree 0.68-0.98x. 256-512 KiB stay with shm: six runs at np 3 and 4 gave
    // cma 0.81-1.22x in the slow state (shm 0.67-0.96x) but 0.71-0.82x in the fast one (shm
    // 0.89-1.25x). Allreduce stayed with shm: cma was 0.93-1.46x at 1-64 MiB in the slow state,
    // shm 0.84-1.47x there and 1.23-1.82x in the fast rows; since the cma allreduce's reduced
    // blocks go through the node's shared memory ("The cma allreduce's second half through shared
    // memory", two paired runs, the slow state), np 3-4 from 512 KiB by cma (np 3, 512 KiB-32 MiB
    // 1.65-2.10x against shm's 1.49-1.81x, 16 MiB level in one run; np 4, 512 KiB / 1 / 2 / 16 /
    // 32 MiB 1.81 / 1.83-1.88 / 1.68 / 1.64-1.74 / 1.73x against 1.71 / 1.33-1.54 / 1.52 /
    // 1.51-1.56 / 1.42x, 4 MiB level; 256 KiB level at np 4, kept with shm below 512 KiB). The
    // fast state, where shm was ahead before, did not come back for a run.
    "#reduce:1M-inf:np=3-5:nodes=1:@cma#allreduce:512K-inf:np=3-5:nodes=1:@cma"
    // Where the MPI library's tiny rooted calls stop being quick (docs/PERFORMANCE.md, "Rooted
    // calls past the inline send"): its shared-memory transport sends a message of up to 256 B
    // inline (btl_vader_max_inline_send) and the sender returns at once; a larger one costs about
    // 1 us at np 2 and 12 us at np 3-4. Its bcast sends the whole message, its gather and scatter
    // one block per message at 2-3 ranks and up to two through their binomial trees at 4 (coll
    // tuned's fixed decision), so the cut lies above 256 B (bcast at np 3-4; gather and scatter
    // blocks at np 2-3) and 128 B (gather and scatter blocks at np 4). Below it a round loses back
    // to back (the MPI library is 2-20x shm there: posts, below); above it, up to the cuts of the
    // rules before, shm (paired runs, slow state; np 2, 260-512 B blocks: 1.4-2.0x after a barrier,
    // 2.8-3.9x back to back, against 0.97-0.99x handed back; np 4, 192-256 B: gather 1.2-1.4x
    // both ways, scatter 21-22x / 1.8-1.9x; np 3, 512 B: 2.0-3.7x back to back; bcast of 320 B at
    // np 3-4: 2.0-30x after a barrier, 2.0x back to back).
    "#gather:257-1K:np=2-4:@shm#gather:129-1K:np=4:@shm"
    "#scatter:257-1K:np=2-4:@shm#scatter:129-1K:np=4:@shm"
    "#bcast:257-512:np=3-5:@shm"
    // Below the cut, the post algorithms (coll/*/post.cc: no round, a root moves on as the MPI
    // library's does after an inline send; docs/PERFORMANCE.md, "Posts below the inline send").
    // np 4: posts for blocks from 16 B and bcast (after a barrier gather 1.05-1.36x, scatter and
    // bcast 5.5-11x, against the MPI library's 0.9-1.0x; back to back 1.0-3.1x), not for 4-byte
    // blocks, which the MPI library serves back to back in 0.43-0.51 us (posts 0.66-0.70x). np 2,
    // gather and scatter: a race of posts and the MPI library (after a barrier posts gave
    // 1.3-1.8x; back to back in the slow state 0.53-1.10x against 0.81-0.96x handed back, in the
    // fast state 0.75-1.02x against 0.77-0.89x; the race 1.11-1.78x and, in the fast state,
    // 0.73-0.89x against handing back's A/A 0.83-0.94x). np 3 stays with the MPI library (back to
    // back 0.53-0.64x at 8 B blocks, after a barrier the scatter no faster).
    "#gather:0-257:np=2:nodes=1:@post|pmpi#scatter:0-257:np=2:nodes=1:@post|pmpi"
    "#gather:16-129:np=4:@post#scatter:16-129:np=4:@post#bcast:0-257:np=4:@post"
    // Races (coll/select/race.h): where the faster of two changed with the state of the machine
    // between runs, beyond any reading of it (docs/PERFORMANCE.md, "Races"), both are timed on the
    // program's calls and the faster kept. np 2, allgather and alltoall of 4-16 KiB blocks, shm
    // or the MPI library (its single copy, one kernel round trip per message: allgather of 8 KiB
    // blocks shm 1.71-1.84x or 0.76-0.81x, in later slow states 2.2-2.4x against the MPI
    // library's 0.95-0.97x; 16 KiB blocks 0.51x or 1.38-1.52x; alltoall alike); np 3-4, reduce
    // of 128 KiB-1 MiB, shm or cma (256 KiB: shm 0.89-1.25x and cma 0.71-0.82x in one state,
    // 0.67-0.96x and 0.81-1.22x in the other). Since the payloads sit on whole cache lines,
    // allgather and alltoall race up to 64 KiB blocks (32 KiB: shm 1.6-1.8x against the MPI
    // library's 0.97-0.99x in two runs), and the np 2 reduce no longer races shm and the binomial
    // tree at 32 KiB-1 MiB (two runs: shm 1.07-1.17 / 1.13-1.21 / 1.38-1.51x at 64 / 256 / 512
    // KiB, the tree 0.94-0.97x at every size; reductions never race the MPI library, see below).
    // Since the shm alltoall moves only the blocks for other ranks (half the copies at np 2), the
    // alltoall races up to 128 KiB blocks (64 KiB: shm 1.43 / 1.74x against the MPI library's
    // 0.97x in two runs; 256 KiB 0.89 / 1.32x). Since 2026-12-07 the allgather races up to 8 MiB
    // blocks and the alltoall at every size from 4 KiB: at 64 KiB-4 MiB blocks shm gave 1.45-2.38x
    // in the fast state and 0.81-1.56x in the slow one, the MPI library 0.97-1.00x; in two slow
    // runs the race gave 0.97-1.56x, at most 0.02 below the MPI library's row and up to 0.58 above
    // (docs/PERFORMANCE.md, "Races up to the largest blocks at np 2"). The np 2 bcast of 128-512
    // KiB likewise since 2026-12-07 (four runs: shm 1.66-1.96x in the fast state, 0.88-1.00x in
    // the slow one, the MPI library 0.98-1.00x; the race 1.62-1.96x and 0.95-0.99x;
    // docs/PERFORMANCE.md, "The np 2 bcast of 128-512 KiB races").
    "#allgather:4K-8M:np=2:nodes=1:@shm|pmpi#alltoall:4K-inf:np=2:nodes=1:@shm|pmpi"
    "#bcast:128K-512K:np=2:nodes=1:@shm|pmpi"
    "#reduce:128K-1M:np=3-5:nodes=1:@shm|cma"
    // The vector collectives and the scans (docs/PERFORMANCE.md, "Vector collectives and scans",
    // one node, np 2 and 4, 2026-12-04). Alltoallv, gatherv and scatterv have no size every rank
    // knows (they are selected as calls of 0 bytes), so one algorithm serves all their sizes, and
    // only the shm alltoallv at 3-4 ranks matched the MPI library at every size (np 4: 1.2-2.2x
    // up to 4-32 KiB, 0.90-1.12x above, every count pattern; one round, the rest point to point;
    // since 2026-12-06 blocks past a slot are read from the sender's memory, "Alltoallv's large
    // blocks read from the sender"; at np 2 shm is still not chosen: 1.4-2.4x up to 4 KiB with
    // skewed counts, but 0.89-0.97x at 64 B-4 KiB and 2 MiB with uniform ones). np 4, the linear
    // scatterv 1.5-2.0x from 4 KiB blocks but 0.4-0.5x below 1 KiB, the shm gatherv and scatterv
    // 0.1-0.3x below 1 KiB. Allgatherv through shm at np 3-4 (1.3-4.3x at every
    // size); at np 2 the MPI library (its single copy; shm 0.46-0.5x from 256 KiB).
    // Reduce_scatter: shm (np 3-4 1.5-3.2x); at np 2 the ring until 2026-12-06 (1.65-2.5x from
    // 32 KiB, 0.6x below 4 KiB), since the shm reduce_scatter works on a piece of every block per
    // round as the shm reduce_scatter_block does, shm there too (paired runs, "Vector collectives
    // after a barrier": 1.1-5.5x after a barrier and 1.2-6.3x back to back at 64 B-4 MiB, the ring
    // 0.84-2.8x and 0.80-2.8x; level at 256 KiB after a barrier). Scan and exscan: the chain, and
    // shm from 512 B at np 3-4 (1.3-2.5x); at np 2 shm from 257 B (the exscan up to 32 KiB, above
    // which shm gave 0.8-0.95x and the chain 0.96-0.99x): scan 1.4-3.8x after a barrier and
    // 1.9-4.9x back to back from 1 KiB, the chain 0.8-1.5x. Up to 256 B the chain's prefixes go
    // through posts (since 2026-12-06, "The chain through posts"): np 2, 128-256 B, two runs,
    // 1.36-1.76x after a barrier and 0.96-1.20x back to back, shm 1.48-2.06x and 0.50-0.65x
    // (Open MPI's eager sends, 0.25 us); shm took 128-256 B before, when the chain went through
    // the MPI library's point to point (0.90-0.92x after a barrier). Reductions never go to the MPI
    // library by a built-in rule: deterministic mode needs the rank order, and Open MPI 4.1.4
    // computes MIN and MAX of MPI_OFFSET as unsigned (check_colls.c), which Overpass's kernels do
    // right.
    "#alltoallv:np=2-5:@pmpi#alltoallv:np=3-5:@shm#gatherv:np=2-5:@pmpi#scatterv:np=2-5:@pmpi"
    "#allgatherv:np=2:@pmpi#allgatherv:np=3-5:@shm"
    "#reduce_scatter:np=2-5:@shm"
    "#scan:np=2-5:@linear#scan:257-inf:np=2:@shm#scan:512-inf:np=3-5:@shm"
    "#exscan:np=2-5:@linear#exscan:257-32K:np=2:@shm#exscan:512-inf:np=3-5:@shm"
    // Teams over several nodes: node steps in shared memory, only each rank's slice between
    // nodes. Serves nothing on one node (the rules above decide there). Measured across real hosts
    // (docs/PERFORMANCE.md, "Across hosts": 2 x 2 over a 1 Gbit/s link, both placements): one
    // crossing instead of k-nomial's two, 1.07-1.37x at 16 B - 1 KiB, 1.6-2.0x at 4-16 KiB, parity
    // from 64 KiB; emulated 2 x 2 over TCP, 1.3-5.5x the flat ring from 64 KiB. These rules take
    // unequal nodes (2+1+1, 3+1) too, where they were not measured (docs/TUNING.md).
    "#allreduce:@hierarchical"
    // Likewise bcast at every size: across hosts 1.17-1.54x below 1 KiB host by host, 1.2-2.0x
    // at 1-16 KiB round-robin (the binomial tree crosses twice), parity elsewhere; emulated
    // nodes over TCP, 1.4-2.2x the binomial tree from 32 KiB.
    "#bcast:@hierarchical"
    // And reduce from 4 KiB: across hosts 1.95-2.0x round-robin at 4-64 KiB, parity host by host;
    // below 1 KiB its node round costs more than it saves (0.24-0.67x there).
    "#reduce:4K-inf:@hierarchical"
    // Gather and scatter of 8-128 KiB blocks: 1.6-2.7x the linear ones over TCP between emulated
    // nodes (one message per node instead of per rank); slower for small and 512 KiB blocks.
    "#gather:8K-128K:@hierarchical#scatter:8K-128K:@hierarchical"
    // Alltoallv with its small blocks forwarded through one rank per node and node, large ones
    // pairwise (docs/PERFORMANCE.md, "Alltoallv across hosts": 2 x 2 over 1 Gbit/s, both
    // placements, 1.45-1.87x for blocks up to 256 B, 1.2x at 1 KiB, parity where the link is the
    // bound, 1.2-1.7x from 64 KiB blocks; one skewed row at 0.72x). Serves several nodes only.
    "#alltoallv:@hierarchical"
    // Reduce_scatter of small vectors as the hierarchical allreduce, each rank keeping its block:
    // across hosts the flat ring crossed three times (0.27-0.49x Open MPI up to 1 KiB blocks).
    "#reduce_scatter:0-2K:@hierarchical"
    // The node steps of the hierarchical bcast, gather, scatter, gatherv and scatterv
    // (selectNodeStep; gatherv and scatterv as calls of 0 bytes, as every one of theirs): the
    // node's shared memory where it serves, else the tree or the linear algorithm on the node's
    // ranks, whatever the rules above say of calls of that size on that many ranks (they were
    // measured as whole calls on one node, not as a step after or before a crossing between nodes).
    "#bcast:level=node:@binomial#bcast:level=node:@shm"
    "#gather:level=node:@linear#gather:level=node:@shm"
    "#scatter:level=node:@linear#scatter:level=node:@shm"
    "#gatherv:level=node:@linear#gatherv:level=node:@shm"
    "#scatterv:level=node:@linear#scatterv:level=node:@shm";

std::string generatedTune(const Config& config) {
  std::string generated;
  // A communicator of one rank: the MPI library's own, whose copy (or nothing) took 0.01 us a call
  // where Overpass's algorithms took 0.03-0.15 (docs/PERFORMANCE.md, "One rank"); not for
  // reduce_scatter_block, where Overpass's algorithm was the faster of the two. Whole calls only:
  // a hierarchical algorithm's step on a node of one rank keeps its own. First: the device rules
  // after them win (a later rule comes first), so device buffers on one rank keep the pipeline.
  for (std::size_t c = 0; c < kNumCollectives; ++c)
    if (const auto coll = static_cast<Collective>(c); coll != Collective::kReduceScatterBlock)
      generated += "#" + std::string(collectiveName(coll)) + ":np=1:level=team:@pmpi";
  // Device buffers (docs/GPU.md): large splittable calls through the staging pipeline, and on one
  // node the IPC algorithms above it (a rule decides only where its algorithm serves the call:
  // device_ipc serves one-node teams only). Built from the configuration, in the same grammar.
  if (config.gpuChunk)
    for (const char* coll : {"allreduce", "reduce"})
      generated += std::string("#") + coll + ":mem=device:" + formatSize(2 * config.gpuChunk) +
                   "-inf:@staged_pipeline";
  // IPC from the sizes where it overtook staging around the host algorithm on an H200 shared by
  // 2-4 processes under MPS (docs/PERFORMANCE.md, "Device buffers on a GPU"): below them its fixed
  // cost (rounds, a kernel launch or copy per peer, an event wait) is more than staging's copies.
  if (config.gpuIpc)
    for (const auto& [coll, from] :
         {std::pair{"allreduce", "64K"}, {"bcast", "0"}, {"alltoall", "16K"}})
      generated += std::string("#") + coll + ":mem=device:" + from + "-inf:@device_ipc";
  return generated.substr(1);
}

std::optional<Selector> Selector::create(const Config& config, std::vector<std::string>* errors) {
  Selector s;
  s.model_ = {config.costLatency, 1 / config.costBandwidth, 1 / config.costReduceBandwidth};
  std::string error;
  auto defaults = parseTune(kDefaultTune, &error);
  if (!defaults) {  // a defect of this file; the unit tests parse the defaults
    errors->push_back("built-in tune rules: " + error);
    return std::nullopt;
  }
  s.rules_ = std::move(*defaults);
  if (auto rules = parseTune(generatedTune(config), &error)) {
    s.rules_.insert(s.rules_.end(), rules->begin(), rules->end());
  } else {  // a defect of this file, as for the defaults
    errors->push_back("generated tune rules: " + error);
    return std::nullopt;
  }
  if (auto user = parseTune(config.tune, &error)) {
    s.rules_.insert(s.rules_.end(), user->begin(), user->end());
  } else {
    errors->push_back("invalid OVERPASS_TUNE: " + error);
  }
  for (std::size_t c = 0; c < kNumCollectives; ++c) {
    if (config.forced[c].empty()) continue;
    const std::string name(collectiveName(static_cast<Collective>(c)));
    auto forced = parseTune(name + ":@" + config.forced[c], &error);
    if (forced) {
      s.rules_.push_back(std::move(forced->front()));
    } else {
      std::string var = "OVERPASS_" + name;
      for (char& ch : var) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      errors->push_back("invalid " + var + ": " + error.substr(error.find("': ") + 3));
    }
  }
  if (!errors->empty()) return std::nullopt;
  return s;
}

Selection Selector::select(const CallShape& call,
                           std::span<const Algorithm* const> excluded) const {
  Selection s;
  auto allowed = [&](const Algorithm& a) {
    return a.canServe(call) && std::find(excluded.begin(), excluded.end(), &a) == excluded.end();
  };
  for (auto it = rules_.rbegin(); it != rules_.rend(); ++it) {
    if (!it->matches(call)) continue;
    if (allowed(*it->algorithm)) {
      s.algorithm = it->algorithm;
      s.rule = &*it;
      // A race where its second algorithm serves too; in deterministic mode only between
      // algorithms that combine in rank order (which give the same bits).
      if (const Algorithm* rival = it->rival;
          rival && allowed(*rival) &&
          (!call.ordered || (rival->rankOrder && s.algorithm->rankOrder)))
        s.rival = rival;
      return s;
    }
    if (!s.skipped) s.skipped = &*it;
  }
  double best = std::numeric_limits<double>::infinity();
  for (const Algorithm& a : algorithms()) {
    if (a.coll != call.coll || a.cost == nullptr || !allowed(a)) continue;
    const double cost = a.cost(call, model_);
    if (cost < best) {
      best = cost;
      s.algorithm = &a;
    }
  }
  if (!s.algorithm) s.algorithm = &pmpiAlgorithm(call.coll);
  return s;
}

namespace {

// A step of a hierarchical algorithm on a sub-group, selected as a call of its own: the
// selector's choice where it is an Overpass algorithm, else `fallback` (the MPI library cannot
// run on a sub-group).
const Algorithm& selectSubGroup(const Selector* selector, const CollArgs& args, CallShape shape,
                                const Algorithm& fallback) {
  if (!selector) return fallback;
  shape.coll = args.coll;
  shape.bytes = args.bytes;
  shape.count = args.count;
  const Algorithm* chosen = selector->select(shape).algorithm;
  return chosen && !chosen->isPmpi() ? *chosen : fallback;
}

}  // namespace

const Algorithm& selectStep(const Selector* selector, const CollArgs& args, int teamSize,
                            const Algorithm& fallback) {
  CallShape shape;
  shape.teamSize = teamSize;
  shape.nodes = teamSize;
  shape.maxPerNode = 1;
  shape.acrossNodes = true;
  return selectSubGroup(selector, args, shape, fallback);
}

const Algorithm& selectNodeStep(const Selector* selector, const CollArgs& args, int nodeSize,
                                std::size_t shmBuffer, const Algorithm& fallback) {
  CallShape shape;
  shape.teamSize = nodeSize;
  shape.shmBuffer = shmBuffer;
  shape.nodes = 1;
  shape.maxPerNode = nodeSize;
  shape.withinNode = true;
  return selectSubGroup(selector, args, shape, fallback);
}

const Algorithm& selectNodeStep(const Team& team, const CollArgs& args, int nodeSize,
                                const Algorithm& flat) {
  const Algorithm* shm = team.nodeShm ? findAlgorithm(args.coll, "shm") : nullptr;
  return selectNodeStep(team.selector, args, nodeSize,
                        team.nodeShm ? team.nodeShm->bufferBytes() : 0, shm ? *shm : flat);
}

}  // namespace overpass
