// Stand-in for Gloo's gloo/algorithm.h: declarations only (see ../README.md).
#pragma once
#include "gloo/context.h"
