// Destruction order: three locals, then a struct with three members. "early" ends b's
// life first by holding it in a std::optional and resetting it.
#include <cstdio>
#include <cstring>
#include <optional>

struct Noisy {
    const char* name;
    explicit Noisy(const char* n) : name(n) {}
    ~Noisy() { std::printf("drop %s\n", name); }
};

struct Fields {
    Noisy field_1{"field_1"};
    Noisy field_2{"field_2"};
    Noisy field_3{"field_3"};
};

int main(int argc, char** argv) {
    const bool early = argc > 1 && std::strcmp(argv[1], "early") == 0;
    {
        Noisy a("a");
        std::optional<Noisy> b;
        b.emplace("b");
        Noisy c("c");
        if (early) b.reset();
    }
    {
        Fields fields;
    }
    return 0;
}
