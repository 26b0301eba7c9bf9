// The raw MPI baseline of the remote benchmarks (benchmarks/run_remote_bench.py):
// what the MPI job itself costs, with nothing of simpler's on the path, run
// under the same mpirun flags as bench_remote.py so both use one transport.
//
//   mpirun -n 2 ... build/py/benchmarks/mpi_raw [--round-trips N] [--repeats R]
//                                               [--bytes B] [--bw-repeats R]
//
// Two ranks, MPI's C API only, MPI_THREAD_MULTIPLE as the transport asks for:
//   - ping-pong: rank 0 sends PING_BYTES (an empty task's TASK frame), rank 1
//     answers PONG_BYTES (its DONE frame); per round trip in µs, the median over
//     R repetitions of N round trips each. "blocking" waits in MPI_Send /
//     MPI_Recv (MPI spins a core); "polled" waits as MpiTransport does: an
//     MPI_Isend or an MPI_Improbe looked at with MPI_Test / MPI_Improbe,
//     spinning for MpiTransport::spin_budget(the message's bytes), then sleeping
//     MpiTransport::nap_after(the time waited) between looks (the receiver takes the frame with MPI_Mrecv).
//   - bandwidth: B bytes rank 0 -> 1, then B bytes back; GiB/s of the 2B
//     bytes, the median over R repetitions, blocking and polled as above.
// Rank 0 prints the results as one line of JSON on stdout.
#include <mpi.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "simpler/remote/mpi/mpi_transport.h"
#include "simpler/remote/remote_frame.h"
#include "simpler/task_interface/call_config.h"
#include "simpler/task_interface/task_args_wire.h"

namespace {

using Clock = std::chrono::steady_clock;
using simpler::MpiTransport;

// An empty task's TASK frame (header, call config, the blob's header) and its DONE.
constexpr size_t PING_BYTES =
    simpler::REMOTE_FRAME_HEADER_BYTES + simpler::CALL_CONFIG_SIZE + simpler::BLOB_HEADER_BYTES;
constexpr size_t PONG_BYTES = simpler::REMOTE_FRAME_HEADER_BYTES;
constexpr int TAG = 1;

struct Options {
    int round_trips = 10'000;
    int repeats = 9;
    size_t bytes = size_t{64} << 20;
    int bw_repeats = 5;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr, "mpi_raw: %s\nusage: mpi_raw [--round-trips N] [--repeats R] [--bytes B] [--bw-repeats R]\n",
                 why);
    MPI_Abort(MPI_COMM_WORLD, 2);
    std::exit(2);
}

long long positive(const char* name, const char* text) {
    char* end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || v < 1 || v > (1LL << 31) - 1)
        usage((std::string(name) + " takes a whole number from 1 to 2^31-1, not '" + text + "'").c_str());
    return v;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (i + 1 >= argc) usage(("missing the value of " + std::string(a)).c_str());
        const char* v = argv[++i];
        if (a == "--round-trips")
            o.round_trips = static_cast<int>(positive("--round-trips", v));
        else if (a == "--repeats")
            o.repeats = static_cast<int>(positive("--repeats", v));
        else if (a == "--bytes")
            o.bytes = static_cast<size_t>(positive("--bytes", v));
        else if (a == "--bw-repeats")
            o.bw_repeats = static_cast<int>(positive("--bw-repeats", v));
        else
            usage(("unknown option " + std::string(a)).c_str());
    }
    return o;
}

// Spins for `spin`, then sleeps MpiTransport::nap_after(the time waited) between looks, as MpiTransport::await.
template <class Done>
void await(std::chrono::nanoseconds spin, Done&& done) {
    thread_local const bool precise_naps = ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL) == 0;  // as MpiTransport
    static_cast<void>(precise_naps);
    const Clock::time_point start = Clock::now();
    for (;;) {
        if (done()) return;
        const Clock::duration waited = Clock::now() - start;
        if (waited < spin) continue;
        std::this_thread::sleep_for(MpiTransport::nap_after(waited));
    }
}

void send_polled(const void* data, int n, int peer) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Isend(data, n, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &req);
    await(MpiTransport::spin_budget(static_cast<uint64_t>(n)), [&] {
        int flag = 0;
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        return flag != 0;
    });
}

// A frame of unknown length, as MpiTransport::receive_frame takes it (probe, then receive).
void receive_frame_polled(std::vector<char>& out, int peer) {
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status{};
    await(MpiTransport::SPIN_BUDGET, [&] {
        int flag = 0;
        MPI_Improbe(peer, TAG, MPI_COMM_WORLD, &flag, &message, &status);
        return flag != 0;
    });
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    out.resize(static_cast<size_t>(count));
    MPI_Mrecv(out.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
}

// A payload of known length, as MpiTransport::receive takes it.
void receive_polled(void* data, int n, int peer) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Irecv(data, n, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &req);
    await(MpiTransport::spin_budget(static_cast<uint64_t>(n)), [&] {
        int flag = 0;
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        return flag != 0;
    });
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 != 0 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// µs per round trip of `n` round trips (rank 0's clock; rank 1 answers).
double ping_pong_us(int rank, int n, bool polled) {
    std::vector<char> ping(PING_BYTES, 'p');
    std::vector<char> pong(PONG_BYTES, 'd');
    std::vector<char> in;
    MPI_Barrier(MPI_COMM_WORLD);
    const Clock::time_point t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
        if (rank == 0) {
            if (polled) {
                send_polled(ping.data(), static_cast<int>(ping.size()), 1);
                receive_frame_polled(in, 1);
            } else {
                MPI_Send(ping.data(), static_cast<int>(ping.size()), MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
                MPI_Recv(pong.data(), static_cast<int>(pong.size()), MPI_BYTE, 1, TAG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            }
        } else {
            if (polled) {
                receive_frame_polled(in, 0);
                send_polled(pong.data(), static_cast<int>(pong.size()), 0);
            } else {
                MPI_Recv(ping.data(), static_cast<int>(ping.size()), MPI_BYTE, 0, TAG, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Send(pong.data(), static_cast<int>(pong.size()), MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
            }
        }
    }
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    return us / n;
}

// GiB/s of `bytes` there and `bytes` back.
double bandwidth_gib_s(int rank, std::vector<char>& buf, bool polled) {
    const int n = static_cast<int>(buf.size());
    MPI_Barrier(MPI_COMM_WORLD);
    const Clock::time_point t0 = Clock::now();
    if (polled) {
        if (rank == 0) {
            send_polled(buf.data(), n, 1);
            receive_polled(buf.data(), n, 1);
        } else {
            receive_polled(buf.data(), n, 0);
            send_polled(buf.data(), n, 0);
        }
    } else if (rank == 0) {
        MPI_Send(buf.data(), n, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), n, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf.data(), n, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), n, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return 2.0 * static_cast<double>(buf.size()) / s / static_cast<double>(1u << 30);
}

}  // namespace

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = 0;
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const Options o = parse(argc, argv);
    if (o.bytes > size_t{1} << 30) usage("--bytes is at most 1 GiB (one MPI message)");
    if (size != 2) usage(("runs on exactly 2 ranks, not " + std::to_string(size)).c_str());

    std::vector<double> blocking_us;
    std::vector<double> polled_us;
    ping_pong_us(rank, std::max(1, o.round_trips / 10), false);  // warm-up: connections, first touches
    ping_pong_us(rank, std::max(1, o.round_trips / 10), true);
    for (int r = 0; r < o.repeats; ++r) {  // alternated, so load changes fall on both alike
        blocking_us.push_back(ping_pong_us(rank, o.round_trips, false));
        polled_us.push_back(ping_pong_us(rank, o.round_trips, true));
    }
    std::vector<char> buf(o.bytes, 'b');
    std::vector<double> blocking_bw;
    std::vector<double> polled_bw;
    bandwidth_gib_s(rank, buf, false);  // warm-up
    for (int r = 0; r < o.bw_repeats; ++r) {
        blocking_bw.push_back(bandwidth_gib_s(rank, buf, false));
        polled_bw.push_back(bandwidth_gib_s(rank, buf, true));
    }
    if (rank == 0) {
        std::printf(
            "{\"ping_bytes\": %zu, \"pong_bytes\": %zu, \"round_trips\": %d, \"repeats\": %d, "
            "\"blocking_round_trip_us\": %.3f, \"polled_round_trip_us\": %.3f, "
            "\"bytes\": %zu, \"bw_repeats\": %d, \"blocking_gib_s\": %.3f, \"polled_gib_s\": %.3f, "
            "\"thread_level\": %d}\n",
            PING_BYTES, PONG_BYTES, o.round_trips, o.repeats, median(blocking_us), median(polled_us), o.bytes,
            o.bw_repeats, median(blocking_bw), median(polled_bw), provided);
        std::fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
