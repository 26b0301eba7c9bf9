// Binds the argument lists (src/simpler/task_interface/task_args.h,
// task_args_wire.h): ChipStorageTaskArgs (the L2 entry's ChipTensors and
// scalars), TaskArgs (the L3+ Tensors with their tags, then scalars),
// TaskArgsBatch (many tasks' arguments in one buffer) and DecodedTaskArgs
// (what read_blob gives back). Every value is checked where it enters.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "checked_args.h"
#include "simpler/task_interface/task_args.h"
#include "simpler/task_interface/task_args_wire.h"
#include "simpler/task_interface/tensor.h"
#include "simpler/task_interface/tensor_arg_type.h"
#include "simpler/task_interface/tiling.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::blob_size;
using simpler::ChipStorageTaskArgs;
using simpler::DecodedTaskArgs;
using simpler::encode_blob;
using simpler::read_blob;
using simpler::TaskArgs;
using simpler::TaskArgsBatch;
using simpler::Tensor;
using simpler::TensorArgType;
using simpler::TileOperand;
using simpler::bindings::dims_of;
using simpler::bindings::DimsArg;
using simpler::bindings::enum_of;
using simpler::bindings::EnumArg;
using simpler::bindings::IntArg;
using simpler::bindings::obj_of;
using simpler::bindings::ObjArg;
using simpler::bindings::u64_of;

void bind_task_args(nb::module_& m) {
    nb::class_<ChipStorageTaskArgs>(m, "ChipStorageTaskArgs",
                                    "The L2 entry arguments: up to 256 ChipTensors, then up to 128 u64 scalars.")
        .def("__init__", [](ChipStorageTaskArgs* self) { new (self) ChipStorageTaskArgs{}; })
        .def("add_tensor", &ChipStorageTaskArgs::add_tensor, "tensor"_a,
             "Appends a ChipTensor (at most 256, all before the scalars).")
        .def("add_scalar", &ChipStorageTaskArgs::add_scalar, "value"_a, "Appends a u64 scalar (at most 128).")
        .def_prop_ro(
            "tensor_count", [](const ChipStorageTaskArgs& a) { return a.tensor_count; },
            "How many ChipTensors it holds.")
        .def_prop_ro(
            "scalar_count", [](const ChipStorageTaskArgs& a) { return a.scalar_count; }, "How many scalars it holds.")
        .def(
            "tensor",
            [](const ChipStorageTaskArgs& a, int32_t i) {
                if (i < 0 || i >= a.tensor_count)
                    throw std::out_of_range("ChipStorageTaskArgs.tensor index " + std::to_string(i) +
                                            " out of range (count " + std::to_string(a.tensor_count) + ")");
                return a.tensors[i];
            },
            "index"_a, "ChipTensor `index`; IndexError past the count.")
        .def(
            "scalar",
            [](const ChipStorageTaskArgs& a, int32_t i) {
                if (i < 0 || i >= a.scalar_count)
                    throw std::out_of_range("ChipStorageTaskArgs.scalar index " + std::to_string(i) +
                                            " out of range (count " + std::to_string(a.scalar_count) + ")");
                return a.scalars[i];
            },
            "index"_a, "Scalar `index`; IndexError past the count.");

    nb::class_<TaskArgs>(m, "TaskArgs",
                         "The L3+ argument list: Tensors with their tags, then u64 scalars. len() and [i] "
                         "address the tensors.")
        .def(nb::init<>())
        .def(
            "add_tensor",
            [](TaskArgs& a, ObjArg<Tensor> tensor, EnumArg<TensorArgType> tag) {
                a.add_tensor(obj_of(tensor, "TaskArgs.add_tensor.tensor"), enum_of(tag, "TaskArgs.add_tensor.tag"));
            },
            "tensor"_a, "tag"_a = TensorArgType::INPUT,
            nb::sig(
                "def add_tensor(self, tensor: Tensor, tag: TensorArgType = simpler._core.TensorArgType.INPUT) -> None"),
            "Validates the tensor and that its buffer grants what the tag needs; tensors before scalars.")
        .def(
            "add_scalar", [](TaskArgs& a, IntArg value) { a.add_scalar(u64_of(value, "TaskArgs.add_scalar.value")); },
            "value"_a, nb::sig("def add_scalar(self, value: int) -> None"),
            "A u64: an int in [0, 2**64) (a NumPy integer too; not a bool or a float).")
        .def(
            "set_tag",
            [](TaskArgs& a, size_t index, EnumArg<TensorArgType> tag) {
                a.set_tag(index, enum_of(tag, "TaskArgs.set_tag.tag"));
            },
            "index"_a, "tag"_a, nb::sig("def set_tag(self, index: int, tag: TensorArgType) -> None"),
            "Changes tensor `index`'s tag (checked against its grant as add_tensor checks it).")
        .def("tag", &TaskArgs::tag, "index"_a, "Tensor `index`'s tag.")
        .def("scalar", &TaskArgs::scalar, "index"_a, "Scalar `index`.")
        .def("check_access", &TaskArgs::check_access,
             "Re-checks access ⊆ granted for every argument (what submit runs).")
        .def_prop_ro("tensor_count", &TaskArgs::tensor_count, "How many tensors it holds.")
        .def_prop_ro("scalar_count", &TaskArgs::scalar_count, "How many scalars it holds.")
        .def_prop_ro(
            "tags", [](const TaskArgs& a) { return std::vector<TensorArgType>(a.tags().begin(), a.tags().end()); },
            "Every tensor's tag, in order.")
        .def_prop_ro(
            "scalars", [](const TaskArgs& a) { return std::vector<uint64_t>(a.scalars().begin(), a.scalars().end()); },
            "Every scalar, in order.")
        .def("__len__", &TaskArgs::tensor_count)
        .def(
            "__getitem__",
            [](const TaskArgs& a, int64_t i) {
                const int64_t n = static_cast<int64_t>(a.tensor_count());
                if (i < 0) i += n;
                if (i < 0 || i >= n)
                    throw std::out_of_range("TaskArgs index " + std::to_string(i) + " out of range (count " +
                                            std::to_string(n) + ")");
                return a.tensor(static_cast<size_t>(i));
            },
            "index"_a)
        .def("__repr__", [](const TaskArgs& a) {
            return "TaskArgs(" + std::to_string(a.tensor_count()) + " tensors, " + std::to_string(a.scalar_count()) +
                   " scalars)";
        });

    nb::class_<TaskArgsBatch>(m, "TaskArgsBatch",
                              "The argument lists of a batch of tasks, held in C++: a tiling's tasks (tiled(); each "
                              "built when it is submitted or read, never all held at once), then the TaskArgs "
                              "append()ed; submitted by Orchestrator.submit_many / submit_sub_many. len() and [i] "
                              "(a copy).")
        .def(nb::init<>())
        .def_static(
            "tiled",
            [](const std::vector<std::tuple<ObjArg<Tensor>, EnumArg<TensorArgType>, nb::object>>& ops) {
                std::vector<TileOperand> operands;
                operands.reserve(ops.size());
                for (const auto& [tensor, tag, tile] : ops) {
                    TileOperand& o = operands.emplace_back();
                    o.tensor = obj_of(tensor, "TaskArgsBatch.tiled.tensor");
                    o.tag = enum_of(tag, "TaskArgsBatch.tiled.tag");
                    if (!tile.is_none()) o.tile = dims_of(DimsArg{tile}, "TaskArgsBatch.tiled.tile");
                }
                TaskArgsBatch batch;
                batch.tiling.emplace(std::move(operands));
                return batch;
            },
            "operands"_a,
            nb::sig("def tiled(operands: collections.abc.Sequence[tuple[Tensor, TensorArgType, "
                    "collections.abc.Sequence[int] | None]]) -> TaskArgsBatch"),
            "One task per tile: operands are (tensor, tag, tile_shape); each tiled operand is cut into tiles of "
            "tile_shape (the last tile of a dimension is what remains), every tiled operand must have the same "
            "grid, and task k (row-major over the grid) takes tile k of each, in operand order; tile_shape None "
            "passes the whole tensor to every task. ValueError names the operand and the rule.")
        .def(
            "append", [](TaskArgsBatch& b, const TaskArgs& a) { b.items.push_back(a); }, "args"_a,
            "Appends a copy of `args`.")
        .def("__len__", [](const TaskArgsBatch& b) { return b.size(); })
        .def(
            "__getitem__",
            [](const TaskArgsBatch& b, int64_t i) {
                const auto n = static_cast<int64_t>(b.size());
                if (i < 0) i += n;
                if (i < 0 || i >= n)
                    throw std::out_of_range("TaskArgsBatch index " + std::to_string(i) + " out of range (count " +
                                            std::to_string(n) + ")");
                TaskArgs scratch;
                return TaskArgs(b.at(static_cast<size_t>(i), scratch));
            },
            "index"_a, "A copy of task i's TaskArgs.")
        .def("__repr__",
             [](const TaskArgsBatch& b) { return "TaskArgsBatch(" + std::to_string(b.size()) + " tasks)"; });

    nb::class_<DecodedTaskArgs>(m, "DecodedTaskArgs", "The tensors and scalars read back from an argument blob.")
        .def_ro("tensors", &DecodedTaskArgs::tensors, "The blob's tensors, each validated, in order.")
        .def_ro("scalars", &DecodedTaskArgs::scalars, "The blob's u64 scalars, in order.");

    m.def(
        "write_blob",
        [](ObjArg<TaskArgs> args) {
            std::vector<std::byte> blob = encode_blob(obj_of(args, "write_blob.args"));
            return nb::bytes(reinterpret_cast<const char*>(blob.data()), blob.size());
        },
        "args"_a, nb::sig("def write_blob(args: TaskArgs) -> bytes"),
        "Serializes TaskArgs as an argument blob (tags do not cross).");
    m.def(
        "read_blob",
        [](nb::handle blob) {
            if (!nb::isinstance<nb::bytes>(blob))
                simpler::bindings::throw_type_error("read_blob.blob", -1, "bytes", blob);
            const auto bytes = nb::borrow<nb::bytes>(blob);
            return read_blob(bytes.c_str(), bytes.size());
        },
        nb::arg("blob").none(), nb::sig("def read_blob(blob: bytes) -> DecodedTaskArgs"),
        "Decodes an argument blob, validating the header and every tensor; all or nothing (ValueError).");
    m.def(
        "blob_size",
        [](IntArg t, IntArg s) {
            const auto count = [](IntArg v, const char* field) {
                return static_cast<int64_t>(simpler::bindings::uint_of(v.h, field, -1, INT64_MAX, "must fit i64"));
            };
            const int64_t tensors = count(t, "blob_size.tensor_count");
            return blob_size(tensors, count(s, "blob_size.scalar_count"));
        },
        "tensor_count"_a, "scalar_count"_a, nb::sig("def blob_size(tensor_count: int, scalar_count: int) -> int"),
        "The size in bytes of the argument blob of `tensor_count` tensors and `scalar_count` scalars.");
}
