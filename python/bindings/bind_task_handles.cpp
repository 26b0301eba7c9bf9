// TaskHandles: what Orchestrator.submit_many / submit_sub_many return — a
// read-only sequence of TaskHandle over (first id, step, count, run) that makes
// a TaskHandle only when one is asked for (indexing, iteration), so a batch of
// 100,000 tasks costs one Python object, not 100,000. A slice is a TaskHandles
// again. Equal to another TaskHandles, a list or a tuple holding the same
// handles in the same order (as the list it replaces was); unhashable, as a
// list is. reversed() uses len() and [i]; index() raises ValueError for a handle
// that is not there. Registered as a collections.abc.Sequence
// (python/simpler/model/submitted_tasks.py).
#include <nanobind/make_iterator.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <Python.h>

#include <cstdint>
#include <optional>
#include <string>

#include "sequence_items.h"
#include "simpler/engine/task_handles.h"
#include "value_eq.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::TaskHandle;
using simpler::TaskHandles;
using simpler::bindings::SequenceItems;

namespace {

// Walks a TaskHandles by position; holds the (small) value, so an iterator
// needs nothing kept alive.
struct Cursor {
    TaskHandles handles;
    size_t at = 0;
    TaskHandle operator*() const { return handles[at]; }
    Cursor& operator++() {
        ++at;
        return *this;
    }
    bool operator==(const Cursor& other) const { return at == other.at; }
};

nb::object iterate(const TaskHandles& h) {
    return nb::make_iterator(nb::type<TaskHandles>(), "TaskHandlesIterator", Cursor{h, 0}, Cursor{h, h.size()});
}

// Position `i` of `h` (negative counts from the end); IndexError naming the index and the length.
size_t position(const TaskHandles& h, Py_ssize_t i) {
    const auto n = static_cast<Py_ssize_t>(h.size());
    const Py_ssize_t at = i < 0 ? i + n : i;
    if (at < 0 || at >= n)
        throw nb::index_error(("TaskHandles index " + std::to_string(i) + " out of range (the batch holds " +
                               std::to_string(n) + (n == 1 ? " task)" : " tasks)"))
                                  .c_str());
    return static_cast<size_t>(at);
}

// Where `value` (any Python object) is in `h`, if it is a TaskHandle there.
std::optional<size_t> find(const TaskHandles& h, const nb::handle& value) {
    const TaskHandle* handle = nullptr;
    if (!nb::try_cast<const TaskHandle*>(value, handle) || handle == nullptr) return std::nullopt;
    const TaskHandle& t = *handle;
    if (h.empty() || t.run != h.run) return std::nullopt;
    const auto offset = static_cast<int64_t>(t.id - h.first);  // ids are far below 2^63
    if (offset % h.step != 0) return std::nullopt;
    const int64_t i = offset / h.step;
    if (i < 0 || static_cast<uint64_t>(i) >= h.count) return std::nullopt;
    return static_cast<size_t>(i);
}

// `h` against a list or tuple: element-wise, each item a TaskHandle equal to the one at its position.
bool equals_sequence(const TaskHandles& h, const nb::handle& seq) {
    const SequenceItems items(seq.ptr());
    const Py_ssize_t n = items.size();
    if (static_cast<size_t>(n) != h.size()) return false;
    for (Py_ssize_t i = 0; i < n; ++i) {
        const TaskHandle* t = nullptr;
        if (!nb::try_cast<const TaskHandle*>(nb::handle(items[i]), t) || t == nullptr) return false;
        if (!(*t == h[static_cast<size_t>(i)])) return false;
    }
    return true;
}

bool same(const TaskHandles& a, const TaskHandles& b) {
    if (a.count != b.count) return false;
    if (a.count == 0) return true;
    return a.run == b.run && a.first == b.first && (a.count == 1 || a.step == b.step);
}

}  // namespace

void bind_task_handles(nb::module_& m) {
    auto handles =
        nb::class_<TaskHandles>(
            m, "TaskHandles", nb::sig("class TaskHandles(collections.abc.Sequence[TaskHandle])"),
            "The handles of a batch (what submit_many / submit_sub_many return): a read-only sequence of TaskHandle, "
            "one made only when asked for. len(), [i] (negative from the end; IndexError past either end), [a:b:c] "
            "(a TaskHandles), iteration, `in`, index(), count(); list(batch) is every handle in submit order. Equal to "
            "a TaskHandles, list or tuple of the same handles in the same order.")
            .def("__len__", &TaskHandles::size)
            .def(
                "__getitem__", [](const TaskHandles& h, Py_ssize_t i) { return h[position(h, i)]; }, "i"_a)
            .def(
                "__getitem__",
                [](const TaskHandles& h, const nb::slice& s) {
                    const auto [start, stop, step, length] = s.compute(h.size());
                    (void)stop;
                    return TaskHandles{h.first + static_cast<uint64_t>(static_cast<int64_t>(start) * h.step),
                                       h.step * static_cast<int64_t>(step), static_cast<uint64_t>(length), h.run};
                },
                "s"_a)
            .def("__iter__", &iterate, nb::sig("def __iter__(self) -> collections.abc.Iterator[TaskHandle]"))
            .def(
                "__contains__",
                [](const TaskHandles& h, const nb::handle& value) { return find(h, value).has_value(); }, "value"_a,
                nb::sig("def __contains__(self, value: object, /) -> bool"))
            .def(
                "index",
                [](const TaskHandles& h, const nb::handle& value, Py_ssize_t start, std::optional<Py_ssize_t> stop) {
                    const auto n = static_cast<Py_ssize_t>(h.size());
                    const auto clamp = [n](Py_ssize_t i) { return i < 0 ? (i + n < 0 ? 0 : i + n) : (i > n ? n : i); };
                    const std::optional<size_t> at = find(h, value);
                    if (at && static_cast<Py_ssize_t>(*at) >= clamp(start) &&
                        static_cast<Py_ssize_t>(*at) < clamp(stop.value_or(n)))
                        return *at;
                    throw nb::value_error(
                        (nb::repr(value).c_str() + std::string(" is not in the TaskHandles")).c_str());
                },
                "value"_a, "start"_a = 0, "stop"_a.none() = nb::none(),
                nb::sig("def index(self, value: object, start: int = 0, stop: int | None = None, /) -> int"),
                "The position of handle `value` (within [start, stop)); ValueError when it is not there.")
            .def(
                "count",
                [](const TaskHandles& h, const nb::handle& value) { return find(h, value).has_value() ? 1 : 0; },
                "value"_a, nb::sig("def count(self, value: object, /) -> int"),
                "How many times handle `value` is in the batch (0 or 1).")
            .def(
                "__eq__",
                [](const TaskHandles& h, const nb::handle& other) -> nb::object {
                    const TaskHandles* o = nullptr;
                    if (nb::try_cast<const TaskHandles*>(other, o) && o != nullptr) return nb::bool_(same(h, *o));
                    if (PyList_Check(other.ptr()) || PyTuple_Check(other.ptr()))
                        return nb::bool_(equals_sequence(h, other));
                    return nb::borrow(Py_NotImplemented);
                },
                nb::is_operator(), nb::sig(simpler::bindings::EQ_SIGNATURE))
            .def("__repr__", [](const TaskHandles& h) {
                std::string out = "TaskHandles(" + std::to_string(h.count) + (h.count == 1 ? " task" : " tasks");
                if (!h.empty()) {
                    out += ": task " + std::to_string(h.first);
                    if (h.count > 1)
                        out += (h.count == 2 ? ", task " : ", ..., task ") + std::to_string(h[h.size() - 1].id);
                    out += " of run " + std::to_string(h.run);
                }
                return out + ")";
            });
    // Unhashable, as a list is (it equals a list of its handles): __hash__ = None.
    handles.attr("__hash__") = nb::none();
}
