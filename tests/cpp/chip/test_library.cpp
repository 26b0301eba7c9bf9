// Kernel libraries: the content hash, building a library from C++ source into
// a content-keyed cache (a second build is a hit that runs no compiler),
// loading a prebuilt library with dlopen and running its orchestration, where
// the headers come from (the config, $SIMPLER_CHIP_INCLUDE_DIR, an installed
// include/ beside the binary), and clear refusals (compiler errors, no or a
// wrong include dir, a file with no table, duplicate names).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "chip_fixtures.h"
#include "simpler/chip/chip.h"
#include "simpler/chip/content_hash.h"
#include "simpler/chip/library_builder.h"

using namespace simpler::chip;
namespace fs = std::filesystem;

namespace {

const char* const USER_LIBRARY = R"(
#include "simpler/chip/library_abi.h"
using namespace simpler::chip;

static int32_t twice(const KernelArgs* a) {
    if (a->tensor_count != 2) return kernel_fail(a, "twice takes 2 tensors");
    const Tensor* const ts[2] = {&a->tensors[0], &a->tensors[1]};
    const float* x = base_ptr<float>(a->tensors[0]);
    float* y = base_ptr<float>(a->tensors[1]);
    for_each_row(ts, [&](const uint64_t* base, const uint32_t* s, uint32_t n) {
        for (uint32_t j = 0; j < n; ++j) y[base[1] + j * s[1]] = 2.0f * x[base[0] + j * s[0]];
    });
    return CHIP_OK;
}

static int32_t twice_orch(const OrchestrationContext* ctx) {
    Orchestration o(ctx);
    uint32_t k = 0;
    if (int32_t rc = o.kernel_id("user.twice", &k); rc != CHIP_OK) return rc;
    return o.submit(k, {{o.arg(0), TensorArgType::INPUT}, {o.arg(1), TensorArgType::OUTPUT_EXISTING}});
}

static const LibraryEntry ENTRIES[] = {
    kernel_entry("user.twice", twice),
    orchestration_entry("user.twice", twice_orch),
};
SIMPLER_CHIP_EXPORT_LIBRARY(ENTRIES)
)";

struct TempDir {
    fs::path path;
    TempDir() {
        char tmpl[] = "/tmp/simpler-chip-test-XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    fs::path write(const std::string& name, const std::string& text) const {
        std::ofstream(path / name) << text;
        return path / name;
    }
};

// The source tree's headers (tests/cpp/CMakeLists.txt): a test binary has no
// installed include/ beside it.
LibraryBuildConfig config_in(const TempDir& d) {
    LibraryBuildConfig c;
    c.cache_dir = (d.path / "cache").string();
    c.include_dir = SIMPLER_TEST_INCLUDE_DIR;
    return c;
}

// Sets (a value) or unsets (nullptr) an environment variable for one scope,
// restoring what was there.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value != nullptr)
            setenv(name, value, 1);
        else
            unsetenv(name);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;
    ~ScopedEnv() {
        if (old_)
            setenv(name_, old_->c_str(), 1);
        else
            unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

}  // namespace

TEST(Sha256, MatchesTheStandardTestVectors) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    Sha256 h;
    for (int i = 0; i < 1000; ++i) h.update(std::string(1000, 'a'));
    EXPECT_EQ(h.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(LibraryBuilder, BuildsFromSourceThenHitsTheCache) {
    TempDir d;
    const fs::path src = d.write("user.cpp", USER_LIBRARY);
    const LibraryBuild first = build_library(src.string(), config_in(d));
    EXPECT_FALSE(first.cache_hit);
    EXPECT_EQ(first.key.size(), 64u);
    EXPECT_TRUE(fs::exists(first.path));
    const auto built_at = fs::last_write_time(first.path);
    const LibraryBuild second = build_library(src.string(), config_in(d));
    EXPECT_TRUE(second.cache_hit);
    EXPECT_EQ(second.path, first.path);
    EXPECT_EQ(fs::last_write_time(second.path), built_at);
    // Different flags are a different key.
    LibraryBuildConfig other = config_in(d);
    other.flags = {"-O1"};
    EXPECT_NE(build_library(src.string(), other).key, first.key);
}

TEST(LibraryBuilder, LoadsAPrebuiltLibraryAndRunsItsOrchestration) {
    TempDir d;
    const fs::path src = d.write("user.cpp", USER_LIBRARY);
    const LibraryBuild built = build_library(src.string(), config_in(d));
    const fs::path prebuilt = d.path / "libuser_prebuilt.so";
    fs::copy_file(built.path, prebuilt);

    ChipConfig cc;
    cc.arena_bytes = 1 << 20;
    Chip chip(cc);
    chip.registry().load_library(prebuilt.string());
    std::vector<float> x(40), y(40, 0.0f);
    for (int i = 0; i < 40; ++i) x[i] = static_cast<float>(i) - 3.5f;
    ChipStorageTaskArgs args{};
    args.add_tensor(chip_test::dense(x, {5, 8}));
    args.add_tensor(chip_test::dense(y, {5, 8}));
    const TensorArgType tags[2] = {TensorArgType::INPUT, TensorArgType::OUTPUT_EXISTING};
    const RunResult r = chip.run("user.twice", args, tags);
    ASSERT_TRUE(r.ok) << r.error;
    for (int i = 0; i < 40; ++i) ASSERT_FLOAT_EQ(y[i], 2.0f * x[i]);
    // Loading it a second time would redefine its names: refused, nothing registered twice.
    EXPECT_THROW(chip.registry().load_library(prebuilt.string()), std::invalid_argument);
}

TEST(LibraryBuilder, ACompilerErrorCarriesTheDiagnostics) {
    TempDir d;
    const fs::path src =
        d.write("broken.cpp", "#include \"simpler/chip/library_abi.h\"\nint f() { return undeclared_name; }\n");
    try {
        build_library(src.string(), config_in(d));
        FAIL() << "expected a build failure";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("undeclared_name"), std::string::npos) << e.what();
    }
    EXPECT_THROW(build_library((d.path / "missing.cpp").string(), config_in(d)), std::invalid_argument);
}

TEST(LibraryBuilder, TheEnvironmentNamesTheHeadersWhenTheConfigDoesNot) {
    TempDir d;
    const fs::path src = d.write("user.cpp", USER_LIBRARY);
    const LibraryBuild explicit_dir = build_library(src.string(), config_in(d));
    const ScopedEnv env("SIMPLER_CHIP_INCLUDE_DIR", SIMPLER_TEST_INCLUDE_DIR);
    EXPECT_EQ(default_chip_include_dir(), SIMPLER_TEST_INCLUDE_DIR);
    LibraryBuildConfig from_env = config_in(d);
    from_env.include_dir.clear();
    const LibraryBuild built = build_library(src.string(), from_env);
    EXPECT_EQ(built.key, explicit_dir.key);  // the same headers: the same key
    EXPECT_TRUE(built.cache_hit);
}

TEST(LibraryBuilder, FindsInstalledHeadersBesideABinaryOnly) {
    TempDir d;
    const fs::path binary = d.path / "_core.so";
    EXPECT_EQ(chip_headers_beside(binary.string()), "");
    fs::create_directories(d.path / "include" / "simpler" / "chip");
    EXPECT_EQ(chip_headers_beside(binary.string()), "");  // a folder without the ABI header is not it
    d.write("include/simpler/chip/library_abi.h", "#pragma once\n");
    EXPECT_EQ(chip_headers_beside(binary.string()), (d.path / "include").string());
    EXPECT_EQ(chip_headers_beside(""), "");
}

TEST(LibraryBuilder, RefusesToBuildWithoutTheHeaders) {
    TempDir d;
    const fs::path src = d.write("user.cpp", USER_LIBRARY);
    // A test binary has no include/ beside it: with nothing set, nothing is found.
    const ScopedEnv env("SIMPLER_CHIP_INCLUDE_DIR", nullptr);
    EXPECT_EQ(default_chip_include_dir(), "");
    LibraryBuildConfig none = config_in(d);
    none.include_dir.clear();
    try {
        build_library(src.string(), none);
        FAIL() << "expected a refusal";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("SIMPLER_CHIP_INCLUDE_DIR"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("user.cpp"), std::string::npos) << e.what();
    }
    LibraryBuildConfig wrong = config_in(d);
    wrong.include_dir = d.path.string();
    try {
        build_library(src.string(), wrong);
        FAIL() << "expected a refusal";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(d.path.string() + " (from LibraryBuildConfig::include_dir) holds no "
                                                               "simpler/chip/library_abi.h"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(fs::exists(d.path / "cache"));  // nothing was built or cached
}

TEST(SharedLibrary, ALibraryWithoutATableIsRefused) {
    TempDir d;
    const fs::path src = d.write("plain.cpp", "extern \"C\" int unrelated() { return 1; }\n");
    const LibraryBuild built = build_library(src.string(), config_in(d));
    KernelRegistry registry;
    try {
        registry.load_library(built.path);
        FAIL() << "expected a refusal";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("exports no simpler_chip_library"), std::string::npos) << e.what();
    }
    EXPECT_THROW(registry.load_library((d.path / "nope.so").string()), std::runtime_error);
}

TEST(KernelRegistry, RefusesALibraryOfAnotherAbiOrWithDuplicateNames) {
    KernelRegistry registry;
    register_standard_library(registry);
    const uint32_t before = registry.kernel_count();
    static const LibraryEntry dup[] = {kernel_entry("fresh.kernel", [](const KernelArgs*) { return int32_t{0}; }),
                                       kernel_entry("std.copy", [](const KernelArgs*) { return int32_t{0}; })};
    EXPECT_THROW(registry.add_library(LibraryTable{CHIP_ABI_VERSION, 2, dup}, "dup"), std::invalid_argument);
    EXPECT_EQ(registry.kernel_count(), before);  // all or nothing
    EXPECT_THROW(registry.add_library(LibraryTable{CHIP_ABI_VERSION + 1, 1, dup}, "old"), std::invalid_argument);
    uint32_t id = 0;
    EXPECT_FALSE(registry.find_kernel("fresh.kernel", &id));
    EXPECT_TRUE(registry.find_kernel("std.matmul", &id));
    EXPECT_STREQ(registry.kernel_name(id), "std.matmul");
}
