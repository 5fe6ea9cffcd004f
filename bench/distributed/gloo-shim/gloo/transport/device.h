// Stand-in for Gloo's gloo/transport/device.h: declarations only (see ../../README.md).
#pragma once

namespace gloo::transport {
class Device;
class UnboundBuffer;
} // namespace gloo::transport
