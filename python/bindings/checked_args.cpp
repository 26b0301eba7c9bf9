#include "checked_args.h"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sequence_items.h"

namespace nb = nanobind;

namespace simpler::bindings {

namespace {

constexpr size_t REPR_MAX_BYTES = 200;

std::string field_name(const char* field, int slot) {
    std::string s = field;
    if (slot >= 0) s += "[" + std::to_string(slot) + "]";
    return s;
}

std::string type_name_of(nb::handle v) { return short_type_name(v.type()); }

// An exact int (after __index__) as an unsigned value <= max; ValueError otherwise.
uint64_t uint_of_index(nb::handle index, nb::handle original, const char* field, int slot, uint64_t max,
                       const char* max_rule) {
    int overflow = 0;
    const long long x = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (x == -1 && PyErr_Occurred()) throw nb::python_error();
    uint64_t u = 0;
    if (overflow < 0 || (overflow == 0 && x < 0))
        throw std::invalid_argument(field_name(field, slot) + ": must be >= 0 (got " + repr_of(original) + ")");
    if (overflow > 0) {
        u = PyLong_AsUnsignedLongLong(index.ptr());
        if (u == static_cast<uint64_t>(-1) && PyErr_Occurred()) {
            PyErr_Clear();
            throw std::invalid_argument(field_name(field, slot) + ": " + max_rule + " (got " + repr_of(original) + ")");
        }
    } else {
        u = static_cast<uint64_t>(x);
    }
    if (u > max)
        throw std::invalid_argument(field_name(field, slot) + ": " + max_rule + " (got " + repr_of(original) + ")");
    return u;
}

}  // namespace

std::string utf8_of(nb::handle v) {
    nb::object text;
    if (PyUnicode_Check(v.ptr())) {
        text = nb::borrow(v);
    } else {
        text = nb::steal(PyObject_Str(v.ptr()));
        if (!text.is_valid()) {
            PyErr_Clear();
            return "<unprintable " + type_name_of(v) + ">";
        }
    }
    nb::object bytes = nb::steal(PyUnicode_AsEncodedString(text.ptr(), "utf-8", "backslashreplace"));
    if (!bytes.is_valid()) {
        PyErr_Clear();
        return "<unprintable " + type_name_of(v) + ">";
    }
    return {PyBytes_AsString(bytes.ptr()), static_cast<size_t>(PyBytes_Size(bytes.ptr()))};
}

std::string repr_of(nb::handle v) {
    nb::object r = nb::steal(PyObject_Repr(v.ptr()));
    if (!r.is_valid()) {
        PyErr_Clear();
        return "<unprintable " + type_name_of(v) + ">";
    }
    std::string s = utf8_of(r);
    if (s.size() > REPR_MAX_BYTES) {
        size_t cut = REPR_MAX_BYTES;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
        s = s.substr(0, cut) + "...";
    }
    return s;
}

std::string got_of(nb::handle v) {
    if (v.is_none() || PyBool_Check(v.ptr())) return repr_of(v);
    return type_name_of(v) + " " + repr_of(v);
}

std::string short_type_name(nb::handle type) { return utf8_of(nb::getattr(type, "__name__", nb::str("?"))); }

std::string with_article(const std::string& name) {
    const bool vowel = !name.empty() && std::string_view("AEIOUaeiou").find(name[0]) != std::string_view::npos;
    return (vowel ? "an " : "a ") + name;
}

void throw_type_error(const char* field, int slot, const char* expected, nb::handle got) {
    throw nb::type_error((field_name(field, slot) + ": expected " + expected + " (got " + got_of(got) + ")").c_str());
}

uint64_t uint_of(nb::handle v, const char* field, int slot, uint64_t max, const char* max_rule) {
    PyObject* p = v.ptr();
    if (PyLong_CheckExact(p)) {
        int overflow = 0;
        const long long x = PyLong_AsLongLongAndOverflow(p, &overflow);
        if (overflow == 0 && x >= 0 && static_cast<unsigned long long>(x) <= max) return static_cast<uint64_t>(x);
        return uint_of_index(v, v, field, slot, max, max_rule);
    }
    if (PyBool_Check(p)) throw_type_error(field, slot, "an int, not a bool", v);
    if (PyLong_Check(p)) return uint_of_index(v, v, field, slot, max, max_rule);
    if (PyIndex_Check(p)) {
        nb::object index = nb::steal(PyNumber_Index(p));
        if (!index.is_valid()) {
            PyErr_Clear();
            throw_type_error(field, slot, "an int", v);
        }
        return uint_of_index(index, v, field, slot, max, max_rule);
    }
    throw_type_error(field, slot, "an int", v);
}

bool bool_of(BoolArg v, const char* field) {
    PyObject* p = v.h.ptr();
    if (p == Py_True) return true;
    if (p == Py_False) return false;
    const std::string type = short_type_name(v.h.type());
    if (type == "bool" || type == "bool_") {  // numpy.bool (NumPy 2) or numpy.bool_ (NumPy 1)
        const int truth = PyObject_IsTrue(p);
        if (truth < 0) throw nb::python_error();
        return truth == 1;
    }
    throw_type_error(field, -1, "a bool", v.h);
}

std::vector<uint64_t> uints_of(nb::handle v, const char* field, uint64_t max, const char* max_rule) {
    PyObject* p = v.ptr();
    if (PyUnicode_Check(p) || PyBytes_Check(p) || PyByteArray_Check(p) || PyDict_Check(p) || PyAnySet_Check(p))
        throw_type_error(field, -1, "a sequence of ints", v);
    nb::object seq = nb::steal(PySequence_Fast(p, "a sequence"));  // a list or tuple as is; an iterable read once
    if (!seq.is_valid()) {
        PyErr_Clear();
        throw_type_error(field, -1, "a sequence of ints", v);
    }
    const SequenceItems items(seq.ptr());
    const Py_ssize_t n = items.size();
    std::vector<uint64_t> out;
    out.reserve(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) out.push_back(uint_of(items[i], field, static_cast<int>(i), max, max_rule));
    return out;
}

std::vector<uint32_t> dims_of(DimsArg in, const char* field) {
    const std::vector<uint64_t> v = uints_of(in.h, field, UINT32_MAX, "must fit u32");
    return std::vector<uint32_t>(v.begin(), v.end());
}

}  // namespace simpler::bindings
