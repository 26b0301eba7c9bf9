// Reading nanobind's stub signatures (`__nb_signature__`) as text, for the
// refusals (refused_arguments.h): a form's parameters with their kinds, types
// and defaults; a type as a message says it ("a DataType", "an int or None", "a
// sequence of ints"); text cut at the separators outside brackets and quotes.
// Pure string work on what nanobind wrote; nothing here checks a value.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <string_view>
#include <vector>

namespace simpler::bindings {

std::string_view trim(std::string_view s);

// `s` (balanced) cut at each `sep` outside brackets and quotes.
std::vector<std::string_view> split_top(std::string_view s, char sep);

// The position of the first top-level `c` in `s`, or npos.
size_t find_top(std::string_view s, char c);

// A type as the stub writes it, without the module prefixes a reader does not need.
std::string short_type(std::string_view t);

// The part of a dotted name after its last dot ("DataType" of "simpler._core.DataType").
std::string_view last_component(std::string_view name);

// Whether a type's base (before any '[') is a sequence or list type.
bool is_sequence_type(std::string_view base);

// "a DataType", "an int or None", "a sequence of ints".
std::string describe(std::string_view t);

struct Param {
    enum class Kind { positional_only, positional_or_keyword, keyword_only, var_positional, var_keyword };
    std::string name;
    std::string type;  // "" when the stub writes none
    std::string default_text;
    bool has_default = false;
    Kind kind = Kind::positional_or_keyword;
};

struct Form {
    std::vector<Param> params;  // self left out
    std::string shown;  // "Tensor(buffer: BufferDescriptor, ...)"
};

// One stub signature ("def f(self, a: int, b: str = 'x') -> None") as its parameters.
Form parse_form(std::string_view sig, bool is_method, const std::string& shown_name);

// A signature with each default nanobind wrote as a placeholder (backslash and the
// index into `defaults`) written as its repr.
std::string with_defaults(const std::string& sig, nanobind::handle defaults);

}  // namespace simpler::bindings
