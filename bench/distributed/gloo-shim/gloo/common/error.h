// Stand-in for Gloo's gloo/common/error.h: declarations only (see ../../README.md).
#pragma once
