// The items of a list or a tuple (what PySequence_Fast hands back), read with
// nanobind's NB_LIST_* / NB_TUPLE_* macros: the full API's field reads in a
// version-specific build, the limited API's calls in the stable-ABI one
// (_core.abi3.so, Python 3.12 and later), which has no PySequence_Fast_ITEMS.
#pragma once

#include <nanobind/nanobind.h>

namespace simpler::bindings {

class SequenceItems {
public:
    // `list_or_tuple` must be a list or a tuple (checked by the caller).
    explicit SequenceItems(PyObject* list_or_tuple) : seq_(list_or_tuple), list_(PyList_Check(list_or_tuple)) {}

    [[nodiscard]] Py_ssize_t size() const { return list_ ? NB_LIST_GET_SIZE(seq_) : NB_TUPLE_GET_SIZE(seq_); }
    // A borrowed reference; 0 <= i < size().
    [[nodiscard]] PyObject* operator[](Py_ssize_t i) const {
        return list_ ? NB_LIST_GET_ITEM(seq_, i) : NB_TUPLE_GET_ITEM(seq_, i);
    }

private:
    PyObject* seq_;
    bool list_;
};

}  // namespace simpler::bindings
