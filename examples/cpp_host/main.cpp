// A C++ host program on simpler's runtime (simpler::core): one Worker with one
// simulated chip runs the chip orchestration example.axpb of a kernel library
// (kernels.cpp) over two fork-shared host buffers, y = 3 x + 1, and checks
// every element. Exit status 0 and a line "cpp_host: ok ..." when all match;
// 1 with the reason otherwise.
//
// Usage: cpp_host [kernel library]   (default: the one this build made)
#include <bit>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "simpler/backing/fork_owner.h"
#include "simpler/engine/worker.h"

using namespace simpler;

int main(int argc, char** argv) {
    const std::string library = argc > 1 ? argv[1] : EXAMPLE_KERNEL_LIBRARY;
    constexpr uint32_t ROWS = 64, COLS = 48;
    constexpr float ALPHA = 3.0f, BETA = 1.0f;
    try {
        // Host memory the chip child sees: created before init(), which forks it.
        const auto x = ForkOwner::create_shared(uint64_t{ROWS} * COLS * sizeof(float));
        const auto y = ForkOwner::create_shared(uint64_t{ROWS} * COLS * sizeof(float));

        WorkerConfig config;
        config.num_chips = 1;
        config.chip_lane.chip.libraries = {library};
        config.chip_lane.chip.orchestrations = {"example.axpb"};  // callable id 0
        Worker worker(config);
        worker.init();

        auto* px = reinterpret_cast<float*>(x->data());
        auto* py = reinterpret_cast<float*>(y->data());
        for (uint32_t i = 0; i < ROWS * COLS; ++i) px[i] = static_cast<float>(i % 97) - 40.0f, py[i] = -1.0f;

        const uint32_t shape[] = {ROWS, COLS};
        TaskArgs args;
        args.add_tensor(make_tensor(x->descriptor(), shape, DataType::FLOAT32), TensorArgType::INPUT);
        args.add_tensor(make_tensor(y->descriptor(), shape, DataType::FLOAT32), TensorArgType::OUTPUT_EXISTING);
        args.add_scalar(std::bit_cast<uint32_t>(ALPHA));  // a float scalar: its IEEE-754 bits, low 32
        args.add_scalar(std::bit_cast<uint32_t>(BETA));
        const MemberSubmit on_chip_0{&args, 0};
        const TaskHandle task = worker.submit(TaskKind::NEXT_LEVEL, 0, {&on_chip_0, 1}, TaskConfig{});
        worker.wait();  // throws RunError naming the task, the chip and the cause
        worker.close();

        for (uint32_t i = 0; i < ROWS * COLS; ++i) {
            const float want = ALPHA * px[i] + BETA;
            if (py[i] != want) {
                std::fprintf(stderr, "cpp_host: y[%u] = %g, want %g\n", i, static_cast<double>(py[i]),
                             static_cast<double>(want));
                return 1;
            }
        }
        std::printf("cpp_host: ok, task %llu ran example.axpb on chip 0: %u elements of y = %g x + %g\n",
                    static_cast<unsigned long long>(task.id), ROWS * COLS, static_cast<double>(ALPHA),
                    static_cast<double>(BETA));
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cpp_host: %s\n", e.what());
        return 1;
    }
}
