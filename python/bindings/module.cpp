// simpler._core: the nanobind extension. One bind_<module>() per C++ module;
// each lives in its own bind_<module>.cpp.
#include <nanobind/nanobind.h>

#include "refused_arguments.h"

namespace nb = nanobind;

void bind_task_interface(nb::module_& m);
void bind_task_args(nb::module_& m);
void bind_call_config(nb::module_& m);
void bind_view(nb::module_& m);
void bind_deps(nb::module_& m);
void bind_forwarded(nb::module_& m);
void bind_backing(nb::module_& m);
void bind_engine(nb::module_& m);
void bind_task_handles(nb::module_& m);
void bind_chip(nb::module_& m);
void bind_remote(nb::module_& m);

NB_MODULE(_core, m) {
    m.doc() = "simpler's C++ core: wire types, argument blobs and the runtime engine";
    bind_task_interface(m);
    bind_task_args(m);
    bind_call_config(m);
    bind_view(m);
    bind_deps(m);
    bind_backing(m);
    bind_forwarded(m);
    bind_chip(m);
    bind_engine(m);
    bind_task_handles(m);
    bind_remote(m);
    simpler::bindings::name_refused_arguments(m);  // last: it walks every binding above
}
