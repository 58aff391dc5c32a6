// Array of structs against struct of arrays: the sum of one field over n particles.
// Arguments: n, passes, and optionally "aos-twice" (time sum_aos in both slots). Prints the fastest nanoseconds per element of each layout
// (passes alternate AoS and SoA) and a checksum of every sum.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Particle {
    int64_t x, y, z, vx, vy, vz, mass, charge;
};

extern "C" __attribute__((noinline)) int64_t sum_aos(const Particle* p, size_t n) {
    uint64_t total = 0;  // unsigned: wrapping addition, as in the Rust program
    for (size_t i = 0; i < n; ++i) total += static_cast<uint64_t>(p[i].x);
    return static_cast<int64_t>(total);
}

extern "C" __attribute__((noinline)) int64_t sum_soa(const int64_t* xs, size_t n) {
    uint64_t total = 0;
    for (size_t i = 0; i < n; ++i) total += static_cast<uint64_t>(xs[i]);
    return static_cast<int64_t>(total);
}

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    const size_t n = std::strtoull(argv[1], nullptr, 10);
    const size_t passes = std::strtoull(argv[2], nullptr, 10);
    const bool aos_twice = argc > 3 && std::strcmp(argv[3], "aos-twice") == 0;
    std::vector<Particle> aos(n);
    std::vector<int64_t> xs(n);
    for (size_t i = 0; i < n; ++i) {
        aos[i] = Particle{static_cast<int64_t>(i), 1, 2, 3, 4, 5, 6, 7};
        xs[i] = static_cast<int64_t>(i);
    }
    double best_aos = 1e300, best_soa = 1e300;
    uint64_t checksum = 0;
    using clock = std::chrono::steady_clock;
    for (size_t pass = 0; pass < passes; ++pass) {
        aos[pass % n].x += 1;  // a different sum every pass: no call can be skipped
        xs[pass % n] += 1;
        const auto start = clock::now();
        checksum += static_cast<uint64_t>(sum_aos(aos.data(), n));
        const auto middle = clock::now();
        checksum += static_cast<uint64_t>(aos_twice ? sum_aos(aos.data(), n)
                                                    : sum_soa(xs.data(), n));
        const auto end = clock::now();
        const double ns_aos = std::chrono::duration<double, std::nano>(middle - start).count();
        const double ns_soa = std::chrono::duration<double, std::nano>(end - middle).count();
        best_aos = std::min(best_aos, ns_aos / n);
        best_soa = std::min(best_soa, ns_soa / n);
    }
    std::printf("%.4f %.4f %lld\n", best_aos, best_soa, static_cast<long long>(checksum));
    return 0;
}
