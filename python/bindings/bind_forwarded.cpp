// The nested run's side of forwarding (simpler.runtime.forwarded), in C++ because it runs once per
// task of a next-level Worker child and once per submit of that task's run:
//   forward_task_args(blob, config, registry): the parent's task blob as this level's TaskArgs, each
//     tensor validated (read_blob) and re-exported (same identity, nothing mapped), tagged by the call
//     config's masks; and the ForwardedViews it allows;
//   ForwardedViews.refusal(args): None when `args` stays within the forwarded views, else (kind, arg):
//     kind 0 — argument `arg` names a forwarded buffer by another descriptor; kind 1 — it names bytes
//     outside every forwarded view of that buffer (or writes outside every written one). Python words
//     the refusal (a cold path); the check itself is here.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "simpler/backing/import_registry.h"
#include "simpler/task_interface/call_config.h"
#include "simpler/task_interface/task_args_wire.h"
#include "simpler/view/wire_overlap.h"

namespace nb = nanobind;
using namespace nb::literals;
using simpler::AccessMode;
using simpler::CallConfig;
using simpler::ImportRegistry;
using simpler::TaskArgs;
using simpler::Tensor;
using simpler::TensorArgType;

namespace {

// The refusal kinds ForwardedViews.refusal answers (simpler.runtime.forwarded words them).
constexpr int OTHER_DESCRIPTOR = 0;
constexpr int OUTSIDE_VIEWS = 1;

bool writing(TensorArgType tag) noexcept {
    return tag == TensorArgType::OUTPUT || tag == TensorArgType::INOUT || tag == TensorArgType::OUTPUT_EXISTING;
}

class ForwardedViews {
public:
    void add(const Tensor& view, bool writes) { views_.push_back({view, writes}); }
    [[nodiscard]] size_t size() const noexcept { return views_.size(); }

    [[nodiscard]] std::optional<std::pair<int, uint32_t>> refusal(const TaskArgs& args) const {
        for (size_t i = 0; i < args.tensor_count(); ++i) {
            const Tensor& t = args.tensor(i);
            const bool writes = writing(args.tag(i));
            bool forwarded = false;
            bool covered = false;
            for (const Forwarded& f : views_) {
                if (!(f.view.buffer.identity == t.buffer.identity)) continue;
                if (!forwarded && !(f.view.buffer == t.buffer)) return std::pair{OTHER_DESCRIPTOR, uint32_t(i)};
                forwarded = true;
                if ((f.writes || !writes) && simpler::overlap(f.view, t).overlap == simpler::TensorOverlap::COVERED) {
                    covered = true;
                    break;
                }
            }
            if (forwarded && !covered) return std::pair{OUTSIDE_VIEWS, uint32_t(i)};
        }
        return std::nullopt;
    }

private:
    struct Forwarded {
        Tensor view;
        bool writes;
    };
    std::vector<Forwarded> views_;
};

// A tensor the parent's task writes arrives INOUT, or OUTPUT_EXISTING when the task writes it without
// reading it (the write-only mask) or its grant is WRITE; a NO_DEP one NO_DEP; any other INPUT.
TensorArgType forwarded_tag(const CallConfig& config, size_t i, const Tensor& view) noexcept {
    if (simpler::no_dep_tensor(config, i)) return TensorArgType::NO_DEP;
    if (!simpler::writes_tensor(config, i)) return TensorArgType::INPUT;
    if (view.buffer.access == static_cast<uint8_t>(AccessMode::READWRITE) && !simpler::writes_only_tensor(config, i))
        return TensorArgType::INOUT;
    return TensorArgType::OUTPUT_EXISTING;
}

std::pair<TaskArgs, ForwardedViews> forward_task_args(const nb::bytes& blob, const CallConfig& config,
                                                      ImportRegistry& registry) {
    const simpler::DecodedTaskArgs decoded = simpler::read_blob(blob.c_str(), blob.size());
    std::pair<TaskArgs, ForwardedViews> out;
    for (size_t i = 0; i < decoded.tensors.size(); ++i) {
        const Tensor view = registry.reexport(decoded.tensors[i]);
        out.first.add_tensor(view, forwarded_tag(config, i, view));
        out.second.add(view, simpler::writes_tensor(config, i));
    }
    for (const uint64_t s : decoded.scalars) out.first.add_scalar(s);
    return out;
}

}  // namespace

void bind_forwarded(nb::module_& m) {
    nb::class_<ForwardedViews>(m, "ForwardedViews",
                               "The views a parent's task forwarded to a nested run, and whether it writes each.")
        .def("__len__", &ForwardedViews::size)
        .def("refusal", &ForwardedViews::refusal, "args"_a,
             "None when `args` stays within the forwarded views; else (kind, argument): kind 0, a forwarded "
             "buffer named by another descriptor; kind 1, bytes outside every forwarded view of it (or written "
             "outside every written one).");
    m.def("forward_task_args", &forward_task_args, "blob"_a, "config"_a, "registry"_a,
          "The parent's task blob as this level's TaskArgs (each tensor validated and re-exported through "
          "`registry`, tagged by the call config's masks) and the ForwardedViews they allow.");
}
