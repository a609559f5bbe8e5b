// Every algorithm of coll/, one per file under coll/<collective>/; each file's header comment
// states its steps, cost, preconditions and where the result lands. Registered in registry.cc.
#pragma once

#include "coll/coll_args.h"
#include "coll/team.h"
#include "common/status.h"

namespace overpass {

Status allreduceRecursiveDoubling(const CollArgs& args, Team& team);
Status allreduceRing(const CollArgs& args, Team& team);
Status bcastBinomial(const CollArgs& args, Team& team);
Status reduceBinomial(const CollArgs& args, Team& team);
Status gatherLinear(const CollArgs& args, Team& team);
Status scatterLinear(const CollArgs& args, Team& team);
Status allgatherRing(const CollArgs& args, Team& team);
Status alltoallPairwise(const CollArgs& args, Team& team);
Status reduceScatterBlockRing(const CollArgs& args, Team& team);
Status barrierDissemination(const CollArgs& args, Team& team);

}  // namespace overpass
