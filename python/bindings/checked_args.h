// Python values checked into C++ values at the binding boundary. A refusal
// names the field, the rule and the offending value in docs/reference/errors.md's format
// (`<Type>.<field>[<slot>]: <rule> (got <value>)`): a value of the wrong type
// raises TypeError, a value out of the field's range ValueError.
//
// A parameter typed IntArg, DimsArg, BoolArg, EnumArg<E> or ObjArg<T> accepts any Python object
// (None included) during overload resolution, so a bad argument reaches the function body and
// is refused there by name instead of by nanobind's signature dump; the stub
// shows the real type (int, Sequence[int], the enum, the class) through nb::sig.
//
// The rules: an int is a Python int or an object with __index__ (a NumPy
// integer scalar); a bool, a float (NaN included) or anything else is a
// TypeError; a negative int, or one past the field's maximum, a ValueError. A
// sequence of ints is a list, a tuple or another iterable (a NumPy array, a
// generator), never a str, bytes, a dict or a set. An enum value must be a member of that enum: an int is not one.
//
// Strings crossing from Python into C++ (an exception's text, a name) go
// through utf8_of, which backslash-escapes what UTF-8 cannot encode (a lone
// surrogate) instead of failing.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <vector>

namespace simpler::bindings {

struct IntArg {
    nanobind::handle h;
};
struct DimsArg {
    nanobind::handle h;
};
struct BoolArg {
    nanobind::handle h;
};
template <class E>
struct EnumArg {
    nanobind::handle h;
};
template <class T>
struct ObjArg {
    nanobind::handle h;
};

// A str as UTF-8, lone surrogates and other unencodable code points written
// as backslash escapes; for anything else, its str(). Never throws a cast error;
// returns "<unprintable TYPE>" when even str() fails.
std::string utf8_of(nanobind::handle v);

// repr(v) through utf8_of, cut to at most 200 bytes: the "(got ...)" of a message.
std::string repr_of(nanobind::handle v);

// `v` as an unsigned integer <= max. `field` is the full name
// ("Tensor.byte_offset"); slot >= 0 appends "[slot]". max_rule is the rule
// stated when v > max ("must fit u32").
uint64_t uint_of(nanobind::handle v, const char* field, int slot = -1, uint64_t max = UINT64_MAX,
                 const char* max_rule = "must fit u64");

inline uint64_t u64_of(IntArg v, const char* field) { return uint_of(v.h, field); }
inline uint32_t u32_of(IntArg v, const char* field) {
    return static_cast<uint32_t>(uint_of(v.h, field, -1, UINT32_MAX, "must fit u32"));
}

// `v` as a bool: True or False (a NumPy bool too); TypeError naming `field`
// for anything else (1 is not a bool).
bool bool_of(BoolArg v, const char* field);

// A sequence of ints, each <= max (the rule max_rule); the elements are named
// field[i].
std::vector<uint64_t> uints_of(nanobind::handle v, const char* field, uint64_t max = UINT64_MAX,
                               const char* max_rule = "must fit u64");

// A shapes or strides argument as u32 dims; `field` is the full name ("Tensor.shapes").
std::vector<uint32_t> dims_of(DimsArg in, const char* field);

// The got-clause of a message: "float 1.5", "None", "True".
std::string got_of(nanobind::handle v);

// A type's __name__ ("DataType", not "simpler._core.DataType").
std::string short_type_name(nanobind::handle type);
// "a Tensor", "an AccessMode": a type's name with its article.
std::string with_article(const std::string& name);

// TypeError naming `field`, the expected type and the offending value.
[[noreturn]] void throw_type_error(const char* field, int slot, const char* expected, nanobind::handle got);

template <class E>
E enum_of(EnumArg<E> v, const char* field) {
    if (!nanobind::isinstance<E>(v.h)) {
        throw_type_error(field, -1, with_article(short_type_name(nanobind::type<E>())).c_str(), v.h);
    }
    return nanobind::cast<E>(v.h);
}

// The bound C++ object behind v; TypeError naming `field` when v is not a T.
template <class T>
const T& obj_of(ObjArg<T> v, const char* field) {
    if (!nanobind::isinstance<T>(v.h)) {
        throw_type_error(field, -1, with_article(short_type_name(nanobind::type<T>())).c_str(), v.h);
    }
    return nanobind::cast<const T&>(v.h);
}

}  // namespace simpler::bindings

namespace nanobind::detail {

// Each takes any object; the function body checks it (see above).
template <>
struct type_caster<simpler::bindings::IntArg> {
    NB_TYPE_CASTER(simpler::bindings::IntArg, const_name("int"))
    bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
        value.h = src;
        return true;
    }
};

template <>
struct type_caster<simpler::bindings::DimsArg> {
    NB_TYPE_CASTER(simpler::bindings::DimsArg, io_name("collections.abc.Sequence", "list") + const_name("[int]"))
    bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
        value.h = src;
        return true;
    }
};

template <>
struct type_caster<simpler::bindings::BoolArg> {
    NB_TYPE_CASTER(simpler::bindings::BoolArg, const_name("bool"))
    bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
        value.h = src;
        return true;
    }
};

template <class E>
struct type_caster<simpler::bindings::EnumArg<E>> {
    NB_TYPE_CASTER(simpler::bindings::EnumArg<E>, make_caster<E>::Name)
    bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
        value.h = src;
        return true;
    }
};

template <class T>
struct type_caster<simpler::bindings::ObjArg<T>> {
    NB_TYPE_CASTER(simpler::bindings::ObjArg<T>, make_caster<T>::Name)
    bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
        value.h = src;
        return true;
    }
};

// None reaches the casters too (nanobind refuses it before any caster unless
// the parameter accepts None), so the body names the field it was passed for.
// A function taking these sets its stub signature with nb::sig: nanobind would
// otherwise print each such parameter as "| None".
template <>
struct has_arg_defaults<simpler::bindings::IntArg> : std::true_type {};
template <>
struct has_arg_defaults<simpler::bindings::DimsArg> : std::true_type {};
template <>
struct has_arg_defaults<simpler::bindings::BoolArg> : std::true_type {};
template <class E>
struct has_arg_defaults<simpler::bindings::EnumArg<E>> : std::true_type {};
template <class T>
struct has_arg_defaults<simpler::bindings::ObjArg<T>> : std::true_type {};

}  // namespace nanobind::detail
