// The chip cache's private folders and files (private_cache.h): which folders
// and files are refused and why, a refused root's files going to the per-user
// fallback, reads that neither follow a link nor trust a file others may
// write, and writes that replace a planted link instead of following it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "simpler/chip/private_cache.h"

using namespace simpler::chip;
namespace fs = std::filesystem;

namespace {

class PrivateCache : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = (fs::temp_directory_path() / "private-cache-test.XXXXXX").string();
        ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    static void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
    static std::string read(const fs::path& p) {
        std::ifstream in(p, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }
    fs::path dir_;
};

TEST_F(PrivateCache, AFolderGroupOrOthersMayWriteIsRefusedNamingItsMode) {
    const fs::path open_folder = dir_ / "open";
    fs::create_directory(open_folder);
    chmod(open_folder.c_str(), 0777);
    EXPECT_EQ(folder_problem(open_folder),
              "folder " + open_folder.string() + " (mode 0777) may be written by group or others");
    chmod(open_folder.c_str(), 0770);
    EXPECT_NE(folder_problem(open_folder).find("(mode 0770)"), std::string::npos);
    chmod(open_folder.c_str(), 0755);
    EXPECT_EQ(folder_problem(open_folder), "");
    write(dir_ / "file", "x");
    EXPECT_EQ(folder_problem(dir_ / "file"), "folder " + (dir_ / "file").string() + " is not a directory");
    EXPECT_NE(folder_problem(dir_ / "absent").find("No such file"), std::string::npos);
}

TEST_F(PrivateCache, AMissingFolderIsMadeMode0700AndARefusedOneGivesWayToTheFallback) {
    const std::string made = private_cache_folder((dir_ / "root").string(), "chip-libs");
    EXPECT_EQ(made, (dir_ / "root" / "chip-libs").string());
    struct stat st{};
    ASSERT_EQ(stat(made.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    EXPECT_EQ(st.st_uid, geteuid());
    const fs::path open_root = dir_ / "open";
    fs::create_directory(open_root);
    chmod(open_root.c_str(), 0777);
    const std::string instead = private_cache_folder(open_root.string(), "opencl");
    EXPECT_EQ(instead.rfind(fallback_cache_dir(), 0), 0u) << instead;
    EXPECT_EQ(folder_problem(instead), "");
    EXPECT_TRUE(fs::is_empty(open_root));
}

TEST_F(PrivateCache, AFileIsReadOnlyWhenThisUserAloneMayWriteItAndNeverThroughALink) {
    const fs::path f = dir_ / "f.bin";
    write(f, "bytes");
    chmod(f.c_str(), 0644);
    EXPECT_EQ(file_problem(f), "");
    EXPECT_EQ(read_private_file(f), std::optional<std::string>("bytes"));
    chmod(f.c_str(), 0666);
    EXPECT_NE(file_problem(f).find("(mode 0666) may be written by group or others"), std::string::npos);
    EXPECT_EQ(read_private_file(f), std::nullopt);
    chmod(f.c_str(), 0600);
    const fs::path link = dir_ / "link.bin";
    fs::create_symlink(f, link);
    EXPECT_EQ(file_problem(link), "file " + link.string() + " is a symbolic link");
    EXPECT_EQ(read_private_file(link), std::nullopt);
    EXPECT_EQ(read_private_file(dir_ / "absent"), std::nullopt);
}

TEST_F(PrivateCache, AWriteReplacesALinkPlantedAtItsNameAndLeavesNoTemporary) {
    const fs::path victim = dir_ / "victim";
    write(victim, "untouched");
    const fs::path target = dir_ / "cached.bin";
    fs::create_symlink(victim, target);
    EXPECT_EQ(write_private_file(target, "new bytes"), "");
    EXPECT_EQ(read(victim), "untouched");
    EXPECT_FALSE(fs::is_symlink(target));
    EXPECT_EQ(read_private_file(target), std::optional<std::string>("new bytes"));
    struct stat st{};
    ASSERT_EQ(stat(target.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    const std::string why = write_private_file(dir_ / "absent" / "x.bin", "bytes");
    EXPECT_NE(why.find("cannot create a temporary beside"), std::string::npos) << why;
    size_t entries = 0;
    for (const auto& e : fs::directory_iterator(dir_)) entries += e.path().filename().string().front() == '.';
    EXPECT_EQ(entries, 0u) << "a temporary was left behind";
}

TEST_F(PrivateCache, ATemporaryFolderIsPrivateAndNamedAnew) {
    const std::string a = make_private_temp_folder(dir_.string());
    const std::string b = make_private_temp_folder(dir_.string());
    EXPECT_NE(a, b);
    EXPECT_EQ(folder_problem(a), "");
    struct stat st{};
    ASSERT_EQ(stat(a.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);
    EXPECT_THROW(make_private_temp_folder((dir_ / "absent").string()), std::runtime_error);
}

}  // namespace
