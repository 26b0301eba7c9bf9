// The standard kernels' test fixture: a Chip in each way it moves bytes
// (staged in place, zero-copy, staged through a device the chip process does
// not reach, and on an OpenCL device where one is found), and a run helper.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "opencl_fixture.h"
#include "simpler/chip/chip.h"

namespace std_kernel_test {

using namespace simpler::chip;

constexpr TensorArgType IN = TensorArgType::INPUT;
constexpr TensorArgType OUT = TensorArgType::OUTPUT_EXISTING;
constexpr TensorArgType INOUT = TensorArgType::INOUT;

inline ChipConfig config(StagingMode mode, bool host_addressable = true, DeviceKind device = DeviceKind::SIMULATED) {
    ChipConfig c;
    c.arena_bytes = 64 << 20;
    c.staging = mode;
    c.host_addressable = host_addressable;
    c.runtime.core_threads = 2;
    c.device.kind = device;
    return c;
}

// How the chip moves bytes: staged in place, zero-copy, staged through a
// device whose memory the chip process does not reach (copies only), or on
// an OpenCL device (the standard set in OpenCL C).
struct Setup {
    StagingMode mode;
    bool host_addressable;
    DeviceKind device;
    const char* name;
};

inline std::vector<Setup> setups() {
    std::vector<Setup> out{{StagingMode::STAGE, true, DeviceKind::SIMULATED, "Staged"},
                           {StagingMode::ZERO_COPY, true, DeviceKind::SIMULATED, "ZeroCopy"},
                           {StagingMode::STAGE, false, DeviceKind::SIMULATED, "StagedDiscrete"}};
    if (opencl_tests_run()) out.push_back({StagingMode::STAGE, false, DeviceKind::OPENCL, "OpenCl"});
    return out;
}

inline std::string setup_name(const ::testing::TestParamInfo<Setup>& p) { return p.param.name; }

// Runs orchestration `orch` on `chip` over these tensors, tags and scalars; what the run says.
inline RunResult run_on(Chip& chip, const char* orch, std::initializer_list<ChipTensor> tensors,
                        std::initializer_list<TensorArgType> tags, std::initializer_list<uint64_t> scalars = {}) {
    ChipStorageTaskArgs args{};
    for (const ChipTensor& t : tensors) args.add_tensor(t);
    for (uint64_t s : scalars) args.add_scalar(s);
    const std::vector<TensorArgType> tag_vec(tags);
    return chip.run(orch, args, tag_vec);
}

class StdKernelFixture : public ::testing::TestWithParam<Setup> {
protected:
    Chip chip{config(GetParam().mode, GetParam().host_addressable, GetParam().device)};

    // Runs `orch`; returns how many kernel tasks it submitted (0 when the run failed).
    uint64_t run(const char* orch, std::initializer_list<ChipTensor> tensors, std::initializer_list<TensorArgType> tags,
                 std::initializer_list<uint64_t> scalars = {}) {
        const RunResult r = try_run(orch, tensors, tags, scalars);
        EXPECT_TRUE(r.ok) << r.error;
        EXPECT_GE(r.tasks_submitted, 1u);
        return r.ok ? r.tasks_submitted : 0;
    }

    // Runs `orch` and returns what the run says, failed or not.
    RunResult try_run(const char* orch, std::initializer_list<ChipTensor> tensors,
                      std::initializer_list<TensorArgType> tags, std::initializer_list<uint64_t> scalars = {}) {
        return run_on(chip, orch, tensors, tags, scalars);
    }
};

}  // namespace std_kernel_test
