#include "simpler/chip/opencl_source.h"

#include <cctype>

namespace simpler::chip {
namespace {

bool ident_char(char c) noexcept { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The source's identifiers and punctuation, with comments, string and
// character literals and preprocessor lines left out.
std::vector<std::string> tokens(std::string_view s) {
    std::vector<std::string> out;
    size_t i = 0;
    bool line_start = true;
    while (i < s.size()) {
        const char c = s[i];
        if (c == '\n') {
            line_start = true;
            ++i;
        } else if (std::isspace(static_cast<unsigned char>(c)) != 0) {
            ++i;
        } else if (s.compare(i, 2, "//") == 0) {
            while (i < s.size() && s[i] != '\n') ++i;
        } else if (s.compare(i, 2, "/*") == 0) {
            const size_t end = s.find("*/", i + 2);
            i = end == std::string_view::npos ? s.size() : end + 2;
        } else if (c == '#' && line_start) {
            // A directive, with its continuation lines.
            while (i < s.size() && s[i] != '\n') i += (s[i] == '\\' && i + 1 < s.size()) ? 2 : 1;
        } else if (c == '"' || c == '\'') {
            ++i;
            while (i < s.size() && s[i] != c) i += (s[i] == '\\' && i + 1 < s.size()) ? 2 : 1;
            ++i;
            line_start = false;
        } else if (ident_char(c)) {
            const size_t b = i;
            while (i < s.size() && ident_char(s[i])) ++i;
            out.emplace_back(s.substr(b, i - b));
            line_start = false;
        } else {
            out.emplace_back(1, c);
            ++i;
            line_start = false;
        }
    }
    return out;
}

}  // namespace

bool is_opencl_source_path(std::string_view path) noexcept {
    return path.size() > OPENCL_SOURCE_SUFFIX.size() &&
           path.compare(path.size() - OPENCL_SOURCE_SUFFIX.size(), OPENCL_SOURCE_SUFFIX.size(), OPENCL_SOURCE_SUFFIX) ==
               0;
}

std::vector<std::string> opencl_kernel_names(std::string_view source) {
    const std::vector<std::string> t = tokens(source);
    std::vector<std::string> names;
    for (size_t i = 0; i < t.size(); ++i) {
        if (t[i] != "__kernel" && t[i] != "kernel") continue;
        size_t j = i + 1;
        bool saw_void = false;
        // Attributes: __attribute__((...)), in any number, before or after `void`.
        for (;;) {
            if (j < t.size() && t[j] == "__attribute__") {
                int depth = 0;
                ++j;
                do {
                    if (j >= t.size()) break;
                    if (t[j] == "(") ++depth;
                    if (t[j] == ")") --depth;
                    ++j;
                } while (depth > 0);
            } else if (j < t.size() && t[j] == "void") {
                saw_void = true;
                ++j;
            } else {
                break;
            }
        }
        if (saw_void && j + 1 < t.size() && ident_char(t[j][0]) && t[j + 1] == "(") names.push_back(t[j]);
        i = j;
    }
    return names;
}

}  // namespace simpler::chip
