// The stub signature every bound value type's __eq__ declares: Python's data
// model takes any object. Each __eq__ is bound with nb::is_operator(), so a
// value of another type compares unequal (NotImplemented) instead of raising.
#pragma once

namespace simpler::bindings {

inline constexpr const char* EQ_SIGNATURE = "def __eq__(self, other: object, /) -> bool";

}  // namespace simpler::bindings
