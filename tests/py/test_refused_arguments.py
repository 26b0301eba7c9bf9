"""Every public binding of simpler._core (each module function, constructor,
method, static method and __getitem__) answers a call it cannot take with a
TypeError naming the argument and the type expected: a missing argument, an
argument of the wrong type (by keyword, so no other argument is to blame), and
one argument too many; every settable property, a value of the wrong type. nanobind's own answer ("incompatible function
arguments" and a signature dump) named neither.

The walk reads each binding's forms from its stub signature
(`__nb_signature__`), so a binding added later is walked too."""

import ast
import collections
import re
import warnings

import pytest

import simpler._core as core
from simpler._core import (
    AccessMode,
    BackendKind,
    CanonicalIdentity,
    ChildKind,
    DataType,
    TaskArgs,
    Tensor,
)

MARK = "_simpler_refused_arguments"  # the refusing overload's keyword (python/bindings/refused_arguments.h)
UNINITIALIZED = "nanobind: attempted to access an uninitialized instance"


class Nothing:
    """A value no parameter of the module takes, except one typed object."""

    def __repr__(self):
        return "Nothing()"


def _public_bindings():
    """(qualified name, owning class or None, member name) of every public binding."""
    out = []
    for name in sorted(dir(core)):
        if name.startswith("_"):
            continue
        obj = getattr(core, name)
        if type(obj).__name__ == "nb_func":
            out.append((name, None, name))
        elif isinstance(obj, type) and type(obj).__name__ == "nb_type":
            for member, value in vars(obj).items():
                if type(value).__name__ not in ("nb_func", "nb_method"):
                    continue
                if member in ("__init__", "__getitem__") or not member.startswith("_"):
                    qual = name if member == "__init__" else f"{name}.{member}"
                    out.append((qual, obj, member))
    return out


def _forms(function):
    """Each real form's ast.arguments (self dropped for a method)."""
    forms = []
    for signature, _doc, _defaults in function.__nb_signature__:
        if MARK in signature:
            continue
        text = re.sub(r"\\\d+", "None", signature)  # nanobind's placeholders for defaults
        arguments = ast.parse(text + ": ...").body[0].args
        forms.append(arguments)
    return forms


Param = collections.namedtuple("Param", "name type required positional_only keyword_only")


def _params(arguments, is_method):
    """The Params of one form."""
    positional = arguments.posonlyargs + arguments.args
    if is_method:
        positional = positional[1:]
    defaults_from = len(arguments.posonlyargs + arguments.args) - len(arguments.defaults)
    offset = 1 if is_method else 0
    out = []
    for i, a in enumerate(positional):
        required = i + offset < defaults_from
        out.append(
            Param(a.arg, ast.unparse(a.annotation) if a.annotation else "", required, a in arguments.posonlyargs, False)
        )
    for a, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        out.append(Param(a.arg, ast.unparse(a.annotation) if a.annotation else "", default is None, False, True))
    return out


def _words(type_text):
    """Words of which the message must show one: the type's name, 'sequence', 'tuple'."""
    words = []
    for alternative in type_text.split("|"):
        base = alternative.strip().split("[")[0]
        if base in ("collections.abc.Sequence", "Sequence", "list"):
            words += ["sequence", "list"]
        elif base == "tuple":
            words.append("tuple")
        elif base != "None":
            words.append(base.rsplit(".", 1)[-1])
    return words


def _takes_anything(type_text):
    return any(t.strip() in ("object", "typing.Any") for t in type_text.split("|"))


@pytest.fixture(scope="module")
def instances():
    """One instance of each class with methods; those that cannot be made here
    (a RemoteServer needs MPI, TaskHandles a run) are made uninitialized: the
    real forms refuse them, so a call reaches the same refusal."""
    identity = CanonicalIdentity(b"\0" * 8, 1, 1)
    descriptor = core.BufferDescriptor(identity, BackendKind.POSIX_SHM, AccessMode.READWRITE, 64, b"x")
    tensor = Tensor(descriptor, (4,), DataType.FLOAT32)
    args = TaskArgs()
    args.add_tensor(tensor)
    owner = core.create_fork_shm(64)
    registry = core.ImportRegistry()
    registry.import_backing(owner.descriptor)
    mapped = registry.map_arg(Tensor(owner.descriptor, (4,), DataType.FLOAT32))
    engine = core.EngineWorker(core.WorkerConfig())
    report = core.FailureReport.of_worker(3, "RAISED", "the orchestration raised")
    made = {
        "BackingOwner": owner,
        "BufferDescriptor": descriptor,
        "CallConfig": core.CallConfig(),
        "CanonicalIdentity": identity,
        "ChildRef": core.ChildRef(ChildKind.SUB_WORKER, 0),
        "ChipLaneConfig": core.ChipLaneConfig(),
        "ChipServiceConfig": core.ChipServiceConfig(),
        "ChipStorageTaskArgs": core.ChipStorageTaskArgs(),
        "DependencyTracker": core.DependencyTracker(),
        "DeviceChoice": core.DeviceChoice(),
        "EngineWorker": engine,
        "FailedTask": report.levels[0],
        "FailureReport": report,
        "ForwardedViews": core.forward_task_args(core.write_blob(TaskArgs()), core.CallConfig(), registry)[1],
        "ImportRegistry": registry,
        "MappedArg": mapped,
        "RemoteChildren": core.RemoteChildren([], 0, 1.0, 1.0),
        "RemoteServer": core.RemoteServer.__new__(core.RemoteServer),
        "RuntimeConfig": core.RuntimeConfig(),
        "TaskArgs": args,
        "TaskArgsBatch": core.TaskArgsBatch(),
        "TaskHandle": core.TaskHandle(1, 0),
        "TaskHandles": core.TaskHandles.__new__(core.TaskHandles),
        "WorkerConfig": core.WorkerConfig(),
    }
    yield made
    made.clear()
    del mapped
    engine.close()
    registry.close()
    owner.close()


def _cases():
    """(id, qualified name, class, member, form index) for each form of each binding."""
    out = []
    for qual, cls, member in _public_bindings():
        function = getattr(cls, member) if cls is not None else getattr(core, member)
        for k in range(len(_forms(function))):
            out.append((f"{qual}#{k}", qual, cls, member, k))
    return out


CASES = _cases()


def _callable(cls, member, instances):
    """The binding to call: a module function, a class (its constructor), a static method or a bound method."""
    if cls is None:
        return getattr(core, member), False
    if member == "__init__":
        return cls, False
    if type(vars(cls)[member]).__name__ == "nb_func":  # a static method
        return getattr(cls, member), False
    assert cls.__name__ in instances, f"no instance of {cls.__name__} to call {member} on: add one to the fixture"
    return getattr(instances[cls.__name__], member), True


def _refusal(call):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=UNINITIALIZED)
        with pytest.raises(TypeError) as info:
            call()
    message = str(info.value)
    assert "incompatible function arguments" not in message, message
    return message


def test_the_walk_covers_the_module():
    quals = {c[1] for c in CASES}
    for expected in (
        "Tensor",
        "TaskArgs",
        "TaskArgs.add_tensor",
        "CanonicalIdentity",
        "BufferDescriptor",
        "BufferDescriptor.for_address",
        "ChildRef",
        "ChipStorageTaskArgs",
        "ChipTensor",
        "DependencyTracker",
        "ImportRegistry",
        "TaskArgsBatch",
        "TaskHandle",
        "EngineWorker.submit",
        "TaskHandles.__getitem__",
        "element_size",
        "create_posix_shm",
    ):
        assert expected in quals
    assert len(CASES) > 100
    assert {"WorkerConfig.num_chips", "RuntimeConfig.core_threads", "CallConfig.block_dim"} <= {s[0] for s in SETTERS}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_every_binding_names_a_refused_argument(case, instances):
    _id, qual, cls, member, k = case
    function = getattr(cls, member) if cls is not None else getattr(core, member)
    forms = _forms(function)
    target, is_method = _callable(cls, member, instances)
    params = _params(forms[k], is_method or member == "__init__")

    # A missing argument: named, with its type (of several forms, the first form's).
    required = [p for p in params if p.required]
    first_form_required = [p for p in _params(forms[0], is_method or member == "__init__") if p.required]
    if required:
        message = _refusal(lambda: target())
        missing = first_form_required[0]
        assert f"{qual}.{missing.name}: missing; expected " in message, message
        if missing.type:
            assert any(w.lower() in message.lower() for w in _words(missing.type)), message

    # Each argument of a wrong type, alone: named, with the type expected and the value.
    for i, p in enumerate(params):
        if not p.type or _takes_anything(p.type):
            continue
        if p.positional_only:
            if not all(_takes_anything(q.type) for q in params[:i]):
                continue  # reachable only through the arguments before it
            message = _refusal(lambda n=i + 1: target(*[Nothing()] * n))
        else:
            message = _refusal(lambda name=p.name: target(**{name: Nothing()}))
        assert f"{qual}.{p.name}: expected " in message, message
        assert any(w.lower() in message.lower() for w in _words(p.type)), message
        assert "Nothing()" in message, message

    # One positional argument more than the form takes: the count, or (where
    # another form takes that many) the argument of a wrong type, is named.
    count = len([p for p in params if not p.keyword_only]) + 1
    message = _refusal(lambda: target(*[Nothing()] * count))
    if len(forms) == 1:
        assert f"{qual}: takes " in message and f"(got {count})" in message, message
    else:
        assert message.startswith(f"{qual}"), message


def _setters():
    """(id, class, property name) of every settable property."""
    out = []
    for name in sorted(dir(core)):
        cls = getattr(core, name)
        if isinstance(cls, type) and type(cls).__name__ == "nb_type":
            for member, value in vars(cls).items():
                if isinstance(value, property) and value.fset is not None and not member.startswith("_"):
                    out.append((f"{name}.{member}", cls, member))
    return out


SETTERS = _setters()


@pytest.mark.parametrize("case", SETTERS, ids=[c[0] for c in SETTERS])
def test_every_settable_property_names_a_refused_value(case, instances):
    qual, cls, member = case
    signature = vars(cls)[member].fset.__nb_signature__[0][0]
    arguments = ast.parse(re.sub(r"^def \(", "def f(", signature) + ": ...").body[0].args
    value_type = ast.unparse((arguments.posonlyargs + arguments.args)[1].annotation)
    instance = instances[cls.__name__]
    before = getattr(instance, member)
    with pytest.raises(TypeError) as info:
        setattr(instance, member, Nothing())
    message = str(info.value)
    assert message.startswith(f"{qual}: expected "), message
    assert any(w.lower() in message.lower() for w in _words(value_type)), message
    assert getattr(instance, member) == before  # nothing changed


def test_a_setter_refuses_an_int_its_field_cannot_hold():
    config = core.RuntimeConfig()
    with pytest.raises(ValueError, match=r"^RuntimeConfig\.core_threads: out of range for this field \(got -1\)"):
        config.core_threads = -1
    config.core_threads = 3  # one it can hold is set
    assert config.core_threads == 3
    config = core.WorkerConfig()
    config.spin = None  # None where the setter takes it
    assert config.spin is None


def test_a_message_reads_as_the_docs_say():
    identity = CanonicalIdentity(b"\0" * 8, 1, 1)
    descriptor = core.BufferDescriptor(identity, BackendKind.POSIX_SHM, AccessMode.READWRITE, 64, b"x")
    sub = ChildKind.SUB_WORKER
    cases = [
        (
            lambda: Tensor(),
            "Tensor.buffer: missing; expected a BufferDescriptor; takes Tensor(buffer: BufferDescriptor, "
            "shapes: Sequence[int], dtype: DataType, strides: Sequence[int] | None = None, byte_offset: int = 0)",
        ),
        (lambda: Tensor(3), "Tensor.buffer: expected a BufferDescriptor (got int 3)"),
        (
            lambda: Tensor(descriptor, (4,), DataType.FLOAT32, colour=1),
            "Tensor.colour: no such argument; takes Tensor(",
        ),
        (lambda: TaskArgs(1), "TaskArgs: takes no positional arguments (got 1); takes TaskArgs()"),
        (lambda: CanonicalIdentity(1, 2, 3), "CanonicalIdentity.owner_instance_id: expected bytes (got int 1)"),
        (lambda: core.ChildRef(), "ChildRef.kind: missing; expected a ChildKind"),
        (lambda: TaskArgs()["x"], "TaskArgs.__getitem__.index: expected an int (got str 'x')"),
        (
            lambda: core.DependencyTracker(1, 2, 3, 4),
            "DependencyTracker: takes at most 3 positional arguments (got 4); "
            "takes DependencyTracker(exact_strides: bool = True, work_cap: int = ",
        ),
        (
            lambda: core.TaskArgsBatch.tiled(),
            "TaskArgsBatch.tiled.operands: missing; "
            "expected a sequence of (Tensor, TensorArgType, Sequence[int] | None) tuples",
        ),
        (lambda: core.ChildRef(kind=sub, index=0, kind2=1), "ChildRef.kind2: no such argument"),
        (lambda: core.ChildRef(sub, kind=sub), "ChildRef.kind: given twice (by position and by name)"),
    ]
    for call, text in cases:
        message = _refusal(call)
        assert text in message, message


def test_an_int_out_of_its_range_is_a_value_error():
    # Every argument of its type: the int the C++ parameter cannot hold is named.
    with pytest.raises(ValueError, match=r"^ChildRef\.index: out of range for this argument \(got -1\)"):
        core.ChildRef(ChildKind.SUB_WORKER, -1)


def test_a_method_called_on_another_type_names_self():
    message = _refusal(lambda: TaskArgs.add_scalar(3, 1))
    assert message.startswith("TaskArgs.add_scalar.self: expected a TaskArgs (got int 3)"), message


def test_operators_still_answer_not_implemented():
    assert (core.CallConfig() == 3) is False
    assert core.TaskHandle(1, 0).__eq__(3) is NotImplemented
