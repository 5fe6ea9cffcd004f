//===- bench/distributed/CommReplay.h - A step's collectives, timed on their own -*- C++ -*-===//
//
// In a training step the collectives run beside the backward's kernels, so their kernel
// time includes waiting for SMs and for the peer: not what a cost model of the collectives
// (tessel-plan's, fitted to the all-reduce benchmark) predicts. To compare like with like,
// the harness records one step's collectives (ProcessGroup::recordCollectives) and issues
// them again here, alone, in the same order and sizes on the same group.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_COMMREPLAY_H
#define TESSEL_BENCH_DISTRIBUTED_COMMREPLAY_H

#include "bench/distributed/ProcessGroup.h"

#include <vector>

namespace tessel::dist {

/// Issues `calls` back to back (each waited on, as the step's wait() does), `iterations`
/// times after one untimed round, every rank together; returns the median round's wall
/// time in milliseconds (to a device synchronisation). Every rank must pass the same calls.
double timeCollectivesAlone(ProcessGroup &pg, const std::vector<CollectiveCall> &calls,
                            int iterations = 5);

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_COMMREPLAY_H
