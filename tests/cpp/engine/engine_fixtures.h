// Helpers shared by the engine's process-level tests.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <iterator>
#include <string>

namespace engine_test {

// Whether `pid` is a live process: it exists and is neither a zombie nor dead (/proc/<pid>/stat's state).
inline bool alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return false;
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t paren = text.rfind(')');
    return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z' && text[paren + 2] != 'X';
}

}  // namespace engine_test
