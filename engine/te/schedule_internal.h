// Helpers shared by the schedule primitives and lowering; not part of the
// public te API.
#pragma once

#include <string>
#include <vector>

#include "engine/te/schedule.h"

namespace kiln::te::internal {

IterVar MakeIterVar(std::string name, int64_t extent, bool is_reduce);
const std::string& AxisName(const IterVar& axis);
// The stage whose output is `buffer`, or -1.
int FindStageIndex(const std::vector<StagePtr>& stages, const loop::Buffer& buffer);
// Stages the stage's op reads, without repeats, in order of first use.
std::vector<int> InputStageIndices(const std::vector<StagePtr>& stages, const Stage& stage);

// True when some stage is computed at one of `target`'s loops.
bool HasAttachedStages(const std::vector<StagePtr>& stages, const Stage& target);

}  // namespace kiln::te::internal
