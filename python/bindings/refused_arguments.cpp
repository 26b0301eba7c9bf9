#include "refused_arguments.h"

// The std::string caster: every nb::cast<std::string> in the extension must see it
// (one without it instantiates the generic caster, and the linker may keep that one).
#include <nanobind/stl/string.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "checked_args.h"
#include "sequence_items.h"
#include "simpler/task_interface/field_refusal.h"
#include "stub_signature.h"

namespace nb = nanobind;

namespace simpler::bindings {
namespace {

// The refusing overload's keyword-only parameter: it accepts (its default)
// only in nanobind's converting pass, so a real form that needs an implicit
// conversion is always tried before the refusal.
struct ConvertingPass {};

}  // namespace
}  // namespace simpler::bindings

namespace nanobind::detail {

template <>
struct type_caster<simpler::bindings::ConvertingPass> {
    NB_TYPE_CASTER(simpler::bindings::ConvertingPass, const_name("int"))
    bool from_python(handle, uint32_t flags, cleanup_list*) noexcept {
        return (flags & static_cast<uint32_t>(cast_flags::convert)) != 0;
    }
};

}  // namespace nanobind::detail

namespace simpler::bindings {
namespace {

bool is_int_like(PyObject* p) { return PyLong_Check(p) || (!PyFloat_Check(p) && PyIndex_Check(p)); }

// Whether `v` is of the type `t` as the stub writes it. Types this cannot
// check (another module's) count as fitting: the refusal then names another
// argument, or none.
bool fits(std::string_view t, nb::handle v, nb::handle module) {
    const auto alternatives = split_top(trim(t), '|');
    if (alternatives.size() > 1) {
        for (const auto a : alternatives) {
            if (fits(a, v, module)) return true;
        }
        return false;
    }
    t = trim(t);
    PyObject* p = v.ptr();
    if (t == "None") return v.is_none();
    if (t == "object" || t == "typing.Any") return true;
    const size_t bracket = t.find('[');
    const std::string_view base = t.substr(0, bracket);
    const std::string_view inner =
        bracket == std::string_view::npos ? std::string_view{} : t.substr(bracket + 1, t.size() - bracket - 2);
    if (is_sequence_type(base) || base == "tuple") {
        if (PyUnicode_Check(p) || PyBytes_Check(p) || PyByteArray_Check(p) || PyDict_Check(p) || PyAnySet_Check(p) ||
            !PySequence_Check(p))
            return false;
        if (base == "list" && !PyList_Check(p)) return false;
        if (inner.empty() || !(PyList_Check(p) || PyTuple_Check(p))) return true;  // a NumPy array: its caster decides
        const SequenceItems items(p);
        const Py_ssize_t n = items.size();
        if (base == "tuple") {
            const auto elements = split_top(inner, ',');
            if (elements.size() == 2 && elements[1] == "...") {
                for (Py_ssize_t i = 0; i < n; ++i) {
                    if (!fits(elements[0], items[i], module)) return false;
                }
                return true;
            }
            if (static_cast<size_t>(n) != elements.size()) return false;
            for (Py_ssize_t i = 0; i < n; ++i) {
                if (!fits(elements[static_cast<size_t>(i)], items[i], module)) return false;
            }
            return true;
        }
        for (Py_ssize_t i = 0; i < n; ++i) {
            if (!fits(inner, items[i], module)) return false;
        }
        return true;
    }
    if (base == "int") return is_int_like(p);
    if (base == "float") {
        return PyFloat_Check(p) || is_int_like(p) || PyType_GetSlot(Py_TYPE(p), Py_nb_float) != nullptr;
    }
    if (base == "bool") {
        const std::string name = short_type_name(v.type());
        return PyBool_Check(p) || name == "bool" || name == "bool_";  // NumPy's bool
    }
    if (base == "str") return PyUnicode_Check(p);
    if (base == "bytes") return PyBytes_Check(p);
    if (base == "bytearray") return PyByteArray_Check(p);
    if (base == "slice") return PySlice_Check(p);
    if (last_component(base) == "Callable") return PyCallable_Check(p) != 0;
    // A class of this module: unqualified or qualified with the module's name.
    const std::string module_name = nb::cast<std::string>(module.attr("__name__"));
    const bool ours = base.find('.') == std::string_view::npos ||
                      (base.size() > module_name.size() && base.substr(0, module_name.size()) == module_name &&
                       base[module_name.size()] == '.');
    if (!ours) return true;
    nb::object type = nb::getattr(module, std::string(last_component(base)).c_str(), nb::none());
    if (!PyType_Check(type.ptr())) return true;
    const int is = PyObject_IsInstance(p, type.ptr());
    if (is < 0) {
        PyErr_Clear();
        return true;
    }
    return is == 1;
}

// What is wrong with a call for one form; a higher rank is a closer fit.
struct Problem {
    enum Rank { arity = 0, missing = 1, wrong_type = 2, out_of_range = 3, unexplained = 4 };
    Rank rank = unexplained;
    bool value_error = false;
    std::string message;
};

Problem check_form(const Form& form, const std::string& qual, nb::handle args, nb::handle kwargs, nb::handle module) {
    std::vector<nb::handle> bound(form.params.size());
    std::vector<size_t> positional;
    bool var_positional = false, var_keyword = false;
    for (size_t i = 0; i < form.params.size(); ++i) {
        const auto kind = form.params[i].kind;
        if (kind == Param::Kind::positional_only || kind == Param::Kind::positional_or_keyword) positional.push_back(i);
        var_positional |= kind == Param::Kind::var_positional;
        var_keyword |= kind == Param::Kind::var_keyword;
    }
    const size_t n = static_cast<size_t>(NB_TUPLE_GET_SIZE(args.ptr()));
    if (n > positional.size() && !var_positional) {
        const std::string most = positional.empty() ? "no positional arguments"
                                                    : "at most " + std::to_string(positional.size()) +
                                                          " positional argument" + (positional.size() == 1 ? "" : "s");
        return {Problem::arity, false, qual + ": takes " + most + " (got " + std::to_string(n) + ")"};
    }
    for (size_t i = 0; i < n && i < positional.size(); ++i) bound[positional[i]] = NB_TUPLE_GET_ITEM(args.ptr(), i);
    if (kwargs.is_valid() && !kwargs.is_none()) {
        for (auto [key, value] : nb::borrow<nb::dict>(kwargs)) {
            const std::string name = utf8_of(key);
            size_t at = form.params.size();
            for (size_t i = 0; i < form.params.size(); ++i) {
                const auto kind = form.params[i].kind;
                if (form.params[i].name == name && kind != Param::Kind::positional_only &&
                    kind != Param::Kind::var_positional && kind != Param::Kind::var_keyword)
                    at = i;
            }
            if (at == form.params.size()) {
                if (var_keyword) continue;
                return {Problem::arity, false, qual + "." + name + ": no such argument"};
            }
            if (bound[at].is_valid())
                return {Problem::arity, false, qual + "." + name + ": given twice (by position and by name)"};
            bound[at] = value;
        }
    }
    for (size_t i = 0; i < form.params.size(); ++i) {
        const Param& p = form.params[i];
        if (bound[i].is_valid() && !p.type.empty() && !fits(p.type, bound[i], module)) {
            return {Problem::wrong_type, false,
                    qual + "." + p.name + ": expected " + describe(p.type) + " (got " + got_of(bound[i]) + ")"};
        }
    }
    for (size_t i = 0; i < form.params.size(); ++i) {
        const Param& p = form.params[i];
        const bool variadic = p.kind == Param::Kind::var_positional || p.kind == Param::Kind::var_keyword;
        if (!bound[i].is_valid() && !p.has_default && !variadic) {
            return {Problem::missing, false,
                    qual + "." + p.name + ": missing; expected " + (p.type.empty() ? "a value" : describe(p.type))};
        }
    }
    // Every argument is of its type: an int the C++ parameter cannot hold is
    // the likely refusal (a negative count, a value past 32 bits).
    for (size_t i = 0; i < form.params.size(); ++i) {
        if (!bound[i].is_valid() || !PyLong_Check(bound[i].ptr()) || PyBool_Check(bound[i].ptr())) continue;
        int overflow = 0;
        const long long x = PyLong_AsLongLongAndOverflow(bound[i].ptr(), &overflow);
        if (x == -1 && PyErr_Occurred()) PyErr_Clear();
        if (overflow != 0 || x < 0 || x > INT32_MAX) {
            return {
                Problem::out_of_range, true,
                qual + "." + form.params[i].name + ": out of range for this argument (got " + repr_of(bound[i]) + ")"};
        }
    }
    return {};
}

struct Refusal {
    std::string qual;  // "Tensor", "TaskArgs.add_tensor", "overlap"
    std::vector<std::string> signatures;  // the real forms' stub signatures
    bool is_method = false;
    nb::handle type;  // a method's class
    nb::handle module;  // the module: immortal while its functions are
};

[[noreturn]] void refuse(const Refusal& r, nb::handle self, nb::handle args, nb::handle kwargs) {
    if (r.is_method && PyObject_IsInstance(self.ptr(), r.type.ptr()) != 1) {
        PyErr_Clear();
        throw nb::type_error(
            (r.qual + ".self: expected " + with_article(short_type_name(r.type)) + " (got " + got_of(self) + ")")
                .c_str());
    }
    std::vector<Form> forms;
    for (const auto& sig : r.signatures) forms.push_back(parse_form(sig, r.is_method, r.qual));
    Problem best;
    best.rank = Problem::arity;
    bool first = true;
    for (const Form& form : forms) {
        Problem p = check_form(form, r.qual, args, kwargs, r.module);
        if (first || p.rank > best.rank) best = std::move(p);
        first = false;
    }
    if (best.rank == Problem::unexplained) {
        std::string got;
        const size_t n = static_cast<size_t>(NB_TUPLE_GET_SIZE(args.ptr()));
        for (size_t i = 0; i < n; ++i) got += (got.empty() ? "" : ", ") + got_of(NB_TUPLE_GET_ITEM(args.ptr(), i));
        best.message = r.qual + ": no form accepts these arguments (got " + (got.empty() ? "none" : got) + ")";
    }
    if (best.rank != Problem::wrong_type && best.rank != Problem::out_of_range) {
        std::string shown;
        for (const Form& form : forms) shown += (shown.empty() ? "" : " or ") + form.shown;
        best.message += "; takes " + shown;
    }
    if (best.value_error) throw nb::value_error(best.message.c_str());
    throw nb::type_error(best.message.c_str());
}

void add_refusal(nb::handle scope, const std::string& name, std::string qual, bool is_method, nb::handle module) {
    nb::object fn = nb::getattr(scope, name.c_str());
    auto r = std::make_shared<Refusal>();
    r->qual = std::move(qual);
    r->is_method = is_method;
    r->type = scope;
    r->module = module;
    for (nb::handle form : nb::borrow<nb::tuple>(fn.attr("__nb_signature__")))
        r->signatures.push_back(with_defaults(nb::cast<std::string>(form[0]), form[2]));
    if (is_method) {
        nb::cpp_function_def([r](nb::handle self, const nb::args& args, ConvertingPass,
                                 const nb::kwargs& kwargs) -> nb::object { refuse(*r, self, args, kwargs); },
                             nb::scope(scope), nb::name(name.c_str()), nb::is_method(), nb::arg("args"),
                             nb::arg(REFUSED_ARGUMENTS_MARK) = 0, nb::arg("kwargs"));
    } else {
        nb::cpp_function_def([r](const nb::args& args, ConvertingPass,
                                 const nb::kwargs& kwargs) -> nb::object { refuse(*r, nb::handle(), args, kwargs); },
                             nb::scope(scope), nb::name(name.c_str()), nb::arg("args"),
                             nb::arg(REFUSED_ARGUMENTS_MARK) = 0, nb::arg("kwargs"));
    }
}

// A settable property's setter checked first: a value not of the setter's
// type is refused by name, and one of its type that the setter's dispatch
// still refuses (an int its C++ field cannot hold) is refused as out of range.
// The stub shows the setter's own signature.
void check_setter(nb::handle type, const std::string& name, const std::string& qual, nb::handle property,
                  nb::handle module) {
    nb::object setter = property.attr("fset");
    const std::string sig = nb::cast<std::string>(setter.attr("__nb_signature__")[0][0]);
    const Form form = parse_form(sig, true, qual);
    const std::string value_type = form.params.empty() ? "" : form.params[0].type;
    nb::object checked = nb::cpp_function(
        [setter, value_type, qual, module](nb::handle self, nb::handle value) {
            if (!value_type.empty() && !fits(value_type, value, module)) {
                throw nb::type_error(
                    (qual + ": expected " + describe(value_type) + " (got " + got_of(value) + ")").c_str());
            }
            nb::object done = nb::steal(PyObject_CallFunctionObjArgs(setter.ptr(), self.ptr(), value.ptr(), nullptr));
            if (done.is_valid()) return;
            nb::python_error refused;
            if (refused.matches(PyExc_TypeError) &&
                utf8_of(refused.value()).find("incompatible function arguments") != std::string::npos) {
                throw simpler::FieldRefusal(qual, "out of range for this field (got " + repr_of(value) + ")");
            }
            throw refused;
        },
        nb::is_method(), nb::arg("value").none(), nb::sig(sig.c_str()));
    nb::object replaced = nb::steal(PyObject_CallFunctionObjArgs(
        reinterpret_cast<PyObject*>(&PyProperty_Type), property.attr("fget").ptr(), checked.ptr(),
        property.attr("fdel").ptr(), property.attr("__doc__").ptr(), nullptr));
    if (!replaced.is_valid()) throw nb::python_error();
    nb::setattr(type, name.c_str(), replaced);
}

bool wanted(const std::string& name) { return name == "__init__" || name == "__getitem__" || name[0] != '_'; }

}  // namespace

void name_refused_arguments(nb::module_& m) {
    struct Entry {
        nb::object scope;
        std::string name, qual;
        bool is_method;
    };
    struct Setter {
        nb::object type, property;
        std::string name, qual;
    };
    std::vector<Entry> entries;
    std::vector<Setter> setters;
    for (auto [key, value] : nb::borrow<nb::dict>(m.attr("__dict__"))) {
        const std::string name = nb::cast<std::string>(key);
        if (name[0] == '_') continue;
        const std::string kind = short_type_name(value.type());
        if (kind == "nb_func") {
            entries.push_back({nb::borrow(m), name, name, false});
        } else if (nb::type_check(value)) {
            const std::string type_name = short_type_name(value);
            nb::object members = value.attr("__dict__");  // a mappingproxy: iterated by key
            for (nb::handle member_key : members) {
                const std::string member_name = nb::cast<std::string>(member_key);
                nb::object member = members[member_key];
                const std::string member_kind = short_type_name(member.type());
                if (PyObject_TypeCheck(member.ptr(), &PyProperty_Type) && !member.attr("fset").is_none() &&
                    member_name[0] != '_') {
                    setters.push_back({nb::borrow(value), member, member_name, type_name + "." + member_name});
                    continue;
                }
                if (!wanted(member_name) || (member_kind != "nb_method" && member_kind != "nb_func")) continue;
                entries.push_back({nb::borrow(value), member_name,
                                   member_name == "__init__" ? type_name : type_name + "." + member_name,
                                   member_kind == "nb_method"});
            }
        }
    }
    for (const Entry& e : entries) add_refusal(e.scope, e.name, e.qual, e.is_method, m);
    for (const Setter& s : setters) check_setter(s.type, s.name, s.qual, s.property, m);
}

}  // namespace simpler::bindings
