// Two threads increment one counter. "race" uses a plain int (a data race: undefined
// behaviour that ThreadSanitizer reports); "atomic" uses std::atomic. Prints the count.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    const bool race = std::strcmp(argv[1], "race") == 0;
    const long per_thread = std::atol(argv[2]);
    long plain = 0;
    std::atomic<long> atomic{0};
    auto work = [&] {
        for (long i = 0; i < per_thread; ++i) {
            if (race) ++plain;
            else atomic.fetch_add(1, std::memory_order_relaxed);
        }
    };
    std::thread a(work), b(work);
    a.join();
    b.join();
    std::printf("%ld\n", race ? plain : atomic.load());
    return 0;
}
