// probe_devices: what chip::find_devices answers for a DeviceChoice, asked in
// a throwaway child process (ipc::ChildProcess) so the parent never opens a
// device API itself. An OpenCL implementation may start threads and hold
// state when first asked for its platforms; a parent that did so before
// forking its chips would hand each chip a copy without those threads. The
// Worker asks before it forks chips that drive a device other than the
// simulated one, so a missing loader, platform or device is an error at
// init() rather than at the first task.
//
// Host layer: throws std::runtime_error with the child's message (what was
// looked for, and where), or naming how the child ended when it gave none
// or did not answer within `timeout`.
#pragma once

#include <chrono>
#include <vector>

#include "simpler/chip/device.h"

namespace simpler {

std::vector<chip::DeviceFacts> probe_devices(const chip::DeviceChoice& choice,
                                             std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace simpler
