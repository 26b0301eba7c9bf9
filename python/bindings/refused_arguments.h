// A call that no form of a bound function accepts is answered with a message
// naming the argument and the type expected, in docs/reference/errors.md's format
// (`Tensor.dtype: expected a DataType (got int 3)`, `Tensor.buffer: missing;
// expected a BufferDescriptor`), instead of nanobind's "incompatible function
// arguments" and its signature dump.
//
// name_refused_arguments(m) walks the module once its bindings are defined and
// gives every public function, constructor, method and static method (and
// __getitem__) one more overload, last in its chain: it takes any arguments,
// is tried only in nanobind's second (converting) pass, after every real form
// has refused, and always raises. It works out the message from the real
// forms' signatures (`__nb_signature__`): the argument bound to the first
// parameter whose value is not of the parameter's type, else the first required
// parameter left without a value, else an int argument out of its C++ type's
// range. Operators (__eq__ and the like) keep nanobind's NotImplemented. Each
// settable property's setter is replaced by one that checks the value against
// the setter's type first, and names the field when the setter's dispatch
// refuses a value of that type (an int the field cannot hold: a ValueError).
//
// scripts/compact_stub.py drops these overloads from the shipped stub: a type
// checker sees only the real forms.
#pragma once

#include <nanobind/nanobind.h>

namespace simpler::bindings {

// The keyword-only parameter that marks the refusing overload in a signature.
inline constexpr const char* REFUSED_ARGUMENTS_MARK = "_simpler_refused_arguments";

void name_refused_arguments(nanobind::module_& m);

}  // namespace simpler::bindings
