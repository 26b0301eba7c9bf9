// A duration as the seconds an error message states ("0.25").
#pragma once

#include <chrono>
#include <sstream>
#include <string>

namespace simpler {

inline std::string seconds_text(std::chrono::nanoseconds t) {
    std::ostringstream out;
    out << std::chrono::duration<double>(t).count();
    return out.str();
}

}  // namespace simpler
