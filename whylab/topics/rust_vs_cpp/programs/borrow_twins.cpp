// The C++ twins of borrow_rejected.rs. They compile; "bad" runs the bug, "fixed" the
// repaired version. Run under AddressSanitizer, the bad ones are reported.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

static std::vector<int> make_vector() { return {1, 2, 3}; }

static void print(const std::vector<int>& out) {
    for (size_t i = 0; i < out.size(); ++i) std::printf(i ? " %d" : "%d", out[i]);
    std::printf("\n");
}

// E0499's twin: pushing into v while iterating over it invalidates the iterator.
static void e0499(bool bad) {
    std::vector<int> v{1, 2, 3};
    if (bad) {
        for (auto it = v.begin(); it != v.end() && v.size() < 6; ++it) v.push_back(*it);
    } else {
        const size_t n = v.size();
        for (size_t i = 0; i < n; ++i) v.push_back(v[i]);
    }
    print(v);
}

// E0502's twin: a reference into the buffer, then push_back reallocates it.
static void e0502(bool bad) {
    std::vector<int> v{1, 2, 3};
    if (bad) {
        const int& first = v[0];
        v.push_back(4);
        print({first, static_cast<int>(v.size())});
    } else {
        const int first = v[0];
        v.push_back(4);
        print({first, static_cast<int>(v.size())});
    }
}

// E0505's twin: the owner is moved away and destroyed; the reference still points in.
static void e0505(bool bad) {
    auto b = std::make_unique<std::vector<int>>(std::vector<int>{1, 2, 3});
    if (bad) {
        const int& r = (*b)[0];
        auto moved = std::move(b);
        moved.reset();
        print({r});
    } else {
        const int value = (*b)[0];
        b.reset();
        print({value});
    }
}

// E0597's twin: a reference into a temporary that dies at the end of the statement.
static void e0597(bool bad) {
    if (bad) {
        const int& r = make_vector()[0];
        print({r});
    } else {
        const auto v = make_vector();
        const int& r = v[0];
        print({r});
    }
}

// E0382's twin: a moved-from vector is empty; indexing it reads through a null pointer.
static void e0382(bool bad) {
    std::vector<int> v{1, 2, 3};
    if (bad) {
        std::vector<int> w = std::move(v);
        print({v.data()[0], static_cast<int>(w.size())});
    } else {
        std::vector<int> w = v;
        print({static_cast<int>(v.size()), static_cast<int>(w.size())});
    }
}

int main(int argc, char** argv) {
    if (argc < 3) return 2;
    const bool bad = std::strcmp(argv[2], "bad") == 0;
    const std::string c = argv[1];
    if (c == "E0499") e0499(bad);
    else if (c == "E0502") e0502(bad);
    else if (c == "E0505") e0505(bad);
    else if (c == "E0597") e0597(bad);
    else if (c == "E0382") e0382(bad);
    else return 2;
    return 0;
}
