# ruff: noqa: E501  (a table of cases: one case a line)
"""Bad input at every public entry point gets a ValueError (a bad value) or a
TypeError (a bad type) whose message names the function or field, the rule and
the offending value — never nanobind's signature dump, a bare OverflowError, a
silent coercion (a bool taken as an int, an int as a DataType, a float
truncated) or a crash — and changes nothing. NumPy integer scalars are ints.

Each case is (what, expected exception, text the message must contain); the
Worker cases run against one Worker with a chip and a sub-worker."""

import math
import os

import numpy as np
import pytest

from conftest import make_identity, shm_descriptor
from simpler import (
    AccessMode,
    BackendKind,
    BufferDescriptor,
    CallConfig,
    ChipCallable,
    ChipTensor,
    DataType,
    TaskArgs,
    Tensor,
    TensorArgType,
    Worker,
    create_buffer,
    element_size,
    overlap,
)
from simpler.abi import blob_size, check_identity_live, read_blob, write_blob
from worker_helpers import close_and_check, time_bound  # noqa: F401

F32 = DataType.FLOAT32
DESC = shm_descriptor(nbytes=1024)


def tensor(**kw):
    base = dict(buffer=DESC, shapes=(4,), dtype=F32)
    base.update(kw)
    return Tensor(**base)


def chip_tensor(**kw):
    base = dict(addr=0x1000, size=64, shapes=(4,), dtype=F32)
    base.update(kw)
    return ChipTensor(**base)


def task_args_with_tensor():
    ta = TaskArgs()
    ta.add_tensor(tensor(), TensorArgType.INPUT)
    return ta


def set_attr(obj, name, value):
    setattr(obj, name, value)


# (id, thunk, exception, text in the message)
# fmt: off
CASES = [
    # simpler.Tensor
    ("tensor-shape-negative", lambda: tensor(shapes=(-1,)), ValueError, "Tensor.shapes[0]: must be >= 0 (got -1)"),
    ("tensor-shape-float", lambda: tensor(shapes=(2.5,)), TypeError, "Tensor.shapes[0]: expected an int (got float 2.5)"),
    ("tensor-shape-nan", lambda: tensor(shapes=(math.nan,)), TypeError, "Tensor.shapes[0]: expected an int (got float nan)"),
    ("tensor-shape-bool", lambda: tensor(shapes=(True,)), TypeError, "Tensor.shapes[0]: expected an int, not a bool"),
    ("tensor-shape-numpy-bool", lambda: tensor(shapes=(np.bool_(True),)), TypeError, "Tensor.shapes[0]: expected an int"),
    ("tensor-shape-over-u64", lambda: tensor(shapes=(2**65,)), ValueError, "Tensor.shapes[0]: must fit u32 (got 36893488147419103232)"),
    ("tensor-shape-none", lambda: tensor(shapes=None), TypeError, "Tensor.shapes: expected a sequence of ints (got None)"),
    ("tensor-shape-str", lambda: tensor(shapes="44"), TypeError, "Tensor.shapes: expected a sequence of ints (got str '44')"),
    ("tensor-shape-int", lambda: tensor(shapes=4), TypeError, "Tensor.shapes: expected a sequence of ints (got int 4)"),
    ("tensor-shape-array-item", lambda: tensor(shapes=(np.array([4]),)), TypeError, "Tensor.shapes[0]: expected an int"),
    ("tensor-stride-negative", lambda: tensor(strides=(-1,)), ValueError, "Tensor.strides[0]: must be >= 0 (got -1)"),
    ("tensor-stride-float", lambda: tensor(strides=(1.0,)), TypeError, "Tensor.strides[0]: expected an int (got float 1.0)"),
    ("tensor-offset-negative", lambda: tensor(byte_offset=-4), ValueError, "Tensor.byte_offset: must be >= 0 (got -4)"),
    ("tensor-offset-over-u64", lambda: tensor(byte_offset=2**64), ValueError, "Tensor.byte_offset: must fit u64"),
    ("tensor-offset-float", lambda: tensor(byte_offset=4.0), TypeError, "Tensor.byte_offset: expected an int (got float 4.0)"),
    ("tensor-offset-bool", lambda: tensor(byte_offset=True), TypeError, "Tensor.byte_offset: expected an int, not a bool"),
    ("tensor-offset-none", lambda: tensor(byte_offset=None), TypeError, "Tensor.byte_offset: expected an int (got None)"),
    ("tensor-dtype-int", lambda: tensor(dtype=3), TypeError, "Tensor.dtype: expected a DataType (got int 3)"),
    ("tensor-dtype-bool", lambda: tensor(dtype=True), TypeError, "Tensor.dtype: expected a DataType (got True)"),
    ("tensor-dtype-none", lambda: tensor(dtype=None), TypeError, "Tensor.dtype: expected a DataType (got None)"),
    ("tensor-buffer-int", lambda: tensor(buffer=3), TypeError, "Tensor.buffer: expected a BufferDescriptor (got int 3)"),
    # ChipTensor, CanonicalIdentity, BufferDescriptor, element_size
    ("chip-tensor-addr-negative", lambda: chip_tensor(addr=-1), ValueError, "ChipTensor.addr: must be >= 0 (got -1)"),
    ("chip-tensor-offset-float", lambda: chip_tensor(start_offset=0.5), TypeError, "ChipTensor.start_offset: expected an int"),
    ("chip-tensor-dtype-int", lambda: chip_tensor(dtype=0), TypeError, "ChipTensor.dtype: expected a DataType (got int 0)"),
    ("identity-buffer-id-negative", lambda: make_identity(buffer_id=-1), ValueError, "CanonicalIdentity.buffer_id: must be >= 0"),
    ("identity-generation-over-u32", lambda: make_identity(generation=2**32), ValueError, "CanonicalIdentity.generation: must fit u32"),
    ("descriptor-nbytes-negative",
     lambda: BufferDescriptor(make_identity(), BackendKind.POSIX_SHM, AccessMode.READ, -1, b"x"), ValueError,
     "BufferDescriptor.nbytes: must be >= 0 (got -1)"),
    ("descriptor-access-int",
     lambda: BufferDescriptor(make_identity(), BackendKind.POSIX_SHM, 1, 64, b"x"), TypeError,
     "BufferDescriptor.access: expected an AccessMode (got int 1)"),
    ("element-size-bool", lambda: element_size(True), TypeError, "element_size.dtype: expected a DataType (got True)"),
    # the module's functions (they answered with nanobind's "incompatible function arguments")
    ("overlap-probe-int", lambda: overlap(1, tensor()), TypeError, "overlap.probe: expected a Tensor (got int 1)"),
    ("overlap-entry-int", lambda: overlap(tensor(), 2), TypeError, "overlap.entry: expected a Tensor (got int 2)"),
    ("overlap-exact-int", lambda: overlap(tensor(), tensor(), 1), TypeError, "overlap.exact_strides: expected a bool (got int 1)"),
    ("overlap-work-cap-float", lambda: overlap(tensor(), tensor(), True, 1.5), TypeError, "overlap.work_cap: expected an int (got float 1.5)"),
    ("read-blob-bytearray", lambda: read_blob(bytearray(b"x")), TypeError, "read_blob.blob: expected bytes (got bytearray"),
    ("read-blob-none", lambda: read_blob(None), TypeError, "read_blob.blob: expected bytes (got None)"),
    ("write-blob-int", lambda: write_blob(1), TypeError, "write_blob.args: expected a TaskArgs (got int 1)"),
    ("blob-size-float", lambda: blob_size(1.5, 0), TypeError, "blob_size.tensor_count: expected an int (got float 1.5)"),
    ("blob-size-negative", lambda: blob_size(0, -1), ValueError, "blob_size.scalar_count: must be >= 0 (got -1)"),
    ("check-identity-live-int", lambda: check_identity_live(3), TypeError, "check_identity_live.identity: expected a CanonicalIdentity (got int 3)"),
    # TaskArgs
    ("add-tensor-int", lambda: TaskArgs().add_tensor(3), TypeError, "TaskArgs.add_tensor.tensor: expected a Tensor (got int 3)"),
    ("add-tensor-tag-int", lambda: TaskArgs().add_tensor(tensor(), 1), TypeError,
     "TaskArgs.add_tensor.tag: expected a TensorArgType (got int 1)"),
    ("add-scalar-negative", lambda: TaskArgs().add_scalar(-1), ValueError, "TaskArgs.add_scalar.value: must be >= 0 (got -1)"),
    ("add-scalar-over-u64", lambda: TaskArgs().add_scalar(2**64), ValueError, "TaskArgs.add_scalar.value: must fit u64 (got 18446744073709551616)"),
    ("add-scalar-float", lambda: TaskArgs().add_scalar(1.5), TypeError, "TaskArgs.add_scalar.value: expected an int (got float 1.5)"),
    ("add-scalar-bool", lambda: TaskArgs().add_scalar(True), TypeError, "TaskArgs.add_scalar.value: expected an int, not a bool (got True)"),
    ("add-scalar-none", lambda: TaskArgs().add_scalar(None), TypeError, "TaskArgs.add_scalar.value: expected an int (got None)"),
    ("set-tag-int", lambda: task_args_with_tensor().set_tag(0, 2), TypeError, "TaskArgs.set_tag.tag: expected a TensorArgType"),
    # CallConfig
    ("call-config-block-dim-bool", lambda: CallConfig(block_dim=True), TypeError, "CallConfig.block_dim: expected an int, not a bool"),
    ("call-config-block-dim-float", lambda: CallConfig(block_dim=1.5), TypeError, "CallConfig.block_dim: expected an int (got float 1.5)"),
    ("call-config-block-dim-over-u32", lambda: CallConfig(block_dim=2**32), ValueError, "CallConfig.block_dim: must fit u32 (got 4294967296)"),
    ("call-config-zero-copy-int", lambda: CallConfig(zero_copy=1), TypeError, "CallConfig.zero_copy: expected a bool (got int 1)"),
    ("call-config-set-block-dim-float", lambda: set_attr(CallConfig(), "block_dim", 2.5), TypeError, "CallConfig.block_dim: expected an int"),
    ("call-config-set-zero-copy-str", lambda: set_attr(CallConfig(), "zero_copy", "yes"), TypeError, "CallConfig.zero_copy: expected a bool (got str 'yes')"),
    # create_buffer
    ("create-buffer-negative", lambda: create_buffer(-1), ValueError, "create_buffer.nbytes: must be > 0 (got -1)"),
    ("create-buffer-float", lambda: create_buffer(64.0), TypeError, "create_buffer.nbytes: expected an int (got float 64.0)"),
    ("create-buffer-bool", lambda: create_buffer(True), TypeError, "create_buffer.nbytes: expected an int, not a bool"),
    ("create-buffer-over-u64", lambda: create_buffer(2**64), ValueError, "create_buffer.nbytes: must fit u64"),
    ("create-buffer-access-int", lambda: create_buffer(64, 1), TypeError, "create_buffer.access: expected an AccessMode (got int 1)"),
    ("create-buffer-backend-int", lambda: create_buffer(64, AccessMode.READ, 2), TypeError, "create_buffer.backend: expected a BackendKind (got int 2)"),
    # Worker(...) keywords
    ("worker-level-float", lambda: Worker(level=3.5), TypeError, "Worker.level: expected an int (got float 3.5)"),
    ("worker-level-none", lambda: Worker(level=None), TypeError, "Worker.level: expected an int (got None)"),
    # Worker(level=99) was accepted.
    ("worker-level-99", lambda: Worker(level=99), ValueError, "Worker(level=99): a Worker is level 3 (a host) to 8"),
    ("worker-level-2", lambda: Worker(level=2), ValueError, "Worker(level=2): a Worker is level 3 (a host) to 8"),
    ("worker-num-chips-bool", lambda: Worker(num_chips=True), TypeError, "WorkerConfig.num_chips: expected an int, not a bool (got True) (num_chips=True)"),
    ("worker-num-chips-float", lambda: Worker(num_chips=1.5), TypeError, "WorkerConfig.num_chips: expected an int (got float 1.5)"),
    ("worker-core-threads-float", lambda: Worker(chip_core_threads=2.5), TypeError,
     "WorkerConfig.chip_lane.chip.runtime.core_threads: expected an int (got float 2.5) (chip_core_threads=2.5)"),
    ("worker-zero-copy-int", lambda: Worker(zero_copy=1), TypeError, "WorkerConfig.chip_lane.chip.staging: expected a bool (got int 1)"),
    ("worker-spin-str", lambda: Worker(spin="fast"), TypeError, "WorkerConfig.spin: expected a number of seconds (got str 'fast')"),
    ("worker-task-timeout-bool", lambda: Worker(task_timeout=True), TypeError, "WorkerConfig.task_timeout: expected a number of seconds (got True)"),
    ("worker-trace-int", lambda: Worker(trace=1), TypeError, "WorkerConfig.trace: expected a bool (got int 1)"),
    # Options the C++ config refuses are named as the keyword the user passed (they were named
    # "WorkerConfig.chip_lane.chip: DeviceArena.capacity" and "RuntimeConfig.core_threads").
    ("worker-arena-zero", lambda: Worker(chip_arena_bytes=0), ValueError,
     "Worker.chip_arena_bytes: must be > 0 (got 0) (WorkerConfig.chip_lane.chip.arena_bytes)"),
    ("worker-core-threads-huge", lambda: Worker(chip_core_threads=100000), ValueError,
     "Worker.chip_core_threads: must be in [1, 256] (got 100000) (WorkerConfig.chip_lane.chip.runtime.core_threads)"),
    # ChipCallable
    ("chip-callable-int", lambda: ChipCallable(3), TypeError, "ChipCallable.orchestration: expected a str (got int 3)"),
]
# fmt: on

# Refusals that were already right: kept here so they stay right.
# fmt: off
ALREADY_RIGHT = [
    ("worker-num-chips-negative", lambda: Worker(num_chips=-1), ValueError, "WorkerConfig.num_chips: -1 does not fit the field"),
    ("worker-num-chips-huge", lambda: Worker(num_chips=2**70), ValueError, "WorkerConfig.num_chips"),
    ("worker-task-timeout-nan", lambda: Worker(task_timeout=math.nan), ValueError, "WorkerConfig.task_timeout"),
    ("call-config-block-dim-negative", lambda: CallConfig(block_dim=-1), ValueError, "CallConfig.block_dim: must be >= 0 (got -1)"),
    ("call-config-from-bytes-short", lambda: CallConfig.from_bytes(b"\0" * 63), ValueError, "CallConfig.from_bytes: must be 64 bytes"),
    ("tensor-shape-empty", lambda: tensor(shapes=()), ValueError, "Tensor.ndims: must be in 1..5 (got 0)"),
    ("tensor-shape-too-long", lambda: tensor(shapes=(1,) * 6), ValueError, "Tensor.ndims: must be in 1..5 (got 6)"),
    ("chip-callable-empty", lambda: ChipCallable(""), ValueError, "ChipCallable.orchestration"),
]
# fmt: on


def _check(thunk, exc, text):
    with pytest.raises(exc) as info:
        thunk()
    assert type(info.value) is exc, f"{type(info.value).__name__}: {info.value}"
    message = str(info.value)
    assert "incompatible function arguments" not in message
    assert text in message


@pytest.mark.parametrize("thunk, exc, text", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused_by_name(thunk, exc, text):
    _check(thunk, exc, text)


@pytest.mark.parametrize("thunk, exc, text", [c[1:] for c in ALREADY_RIGHT], ids=[c[0] for c in ALREADY_RIGHT])
def test_refusals_that_were_already_right_stay_right(thunk, exc, text):
    _check(thunk, exc, text)


def test_numpy_integer_scalars_are_ints():
    t = Tensor(DESC, (np.int64(2), np.uint32(4)), F32, strides=(np.int32(4), np.int8(1)), byte_offset=np.int64(8))
    assert (t.shapes, t.strides, t.byte_offset) == ((2, 4), (4, 1), 8)
    assert Tensor(DESC, np.array([2, 4]), F32).shapes == (2, 4)
    ta = TaskArgs()
    ta.add_scalar(np.uint64(2**64 - 1))
    assert ta.scalars == [2**64 - 1]
    assert CallConfig(block_dim=np.int32(3), zero_copy=np.bool_(True)) == CallConfig(block_dim=3, zero_copy=True)
    with create_buffer(np.int64(64)) as b:
        assert b.nbytes == 64


def test_a_refused_argument_changes_nothing():
    ta = task_args_with_tensor()
    ta.add_scalar(5)
    for bad in (-1, 2**64, 1.5, True, None):
        with pytest.raises((ValueError, TypeError)):
            ta.add_scalar(bad)
    with pytest.raises(TypeError):
        ta.set_tag(0, 2)
    assert (ta.tensor_count, ta.scalars, ta.tags) == (1, [5], [TensorArgType.INPUT])


def test_a_long_repr_is_cut_and_an_unencodable_one_escaped():
    with pytest.raises(TypeError) as info:
        TaskArgs().add_scalar("x" * 10_000)
    assert len(str(info.value)) < 400 and str(info.value).endswith("...)")
    with pytest.raises(TypeError) as info:
        TaskArgs().add_scalar("\udcff")
    assert "got str '\\udcff'" in str(info.value)


@pytest.fixture
def worker():
    w = Worker(level=3, num_chips=1, num_sub_workers=1, task_timeout=30)
    try:
        copy = w.register(ChipCallable("std.copy"))
        sub = w.register(print)
        w.init()
        yield w, copy, sub
    finally:
        close_and_check(w)


def _in_run(w, body):
    """Runs `body(orch)` as an orch function (its exception propagates from run())."""
    w.run(lambda orch, args, cfg: body(orch))


def _host(w):
    return w.create_buffer(64).tensor((16,), F32)


# fmt: off
WORKER_CASES = [
    ("alloc-child-worker-negative", lambda w, c, s: _in_run(w, lambda o: o.alloc_child_tensor(-1, (4,), F32)),
     ValueError, "alloc_child_tensor.worker: must be >= 0 (got -1)"),
    ("alloc-child-worker-bool", lambda w, c, s: _in_run(w, lambda o: o.alloc_child_tensor(True, (4,), F32)),
     TypeError, "alloc_child_tensor.worker: expected an int, not a bool"),
    ("alloc-child-shape-float", lambda w, c, s: _in_run(w, lambda o: o.alloc_child_tensor(0, (2.5,), F32)),
     TypeError, "alloc_child_tensor.shape[0]: expected an int (got float 2.5)"),
    ("alloc-child-shape-zero", lambda w, c, s: _in_run(w, lambda o: o.alloc_child_tensor(0, (4, 0), F32)),
     ValueError, "alloc_child_tensor.shape[1]: must be > 0 (got 0)"),
    ("alloc-child-dtype-int", lambda w, c, s: _in_run(w, lambda o: o.alloc_child_tensor(0, (4,), 3)),
     TypeError, "alloc_child_tensor.dtype: expected a DataType (got int 3)"),
    ("alloc-shared-shape-float", lambda w, c, s: w.alloc_shared_tensor((2.5,), F32),
     TypeError, "alloc_shared_tensor.shape[0]: expected an int (got float 2.5)"),
    ("alloc-shared-shape-empty", lambda w, c, s: w.alloc_shared_tensor((), F32),
     ValueError, "alloc_shared_tensor.shape: must have at least one dimension"),
    ("device-buffer-tensor-negative",
     lambda w, c, s: _in_run(w, lambda o: o.alloc_child_tensor(0, (4,), F32).tensor(shapes=(-4,))),
     ValueError, "Tensor.shapes[0]: must be >= 0 (got -4)"),
    ("submit-worker-negative",
     lambda w, c, s: _in_run(w, lambda o: o.submit_next_level(c, TaskArgs(), worker=-1)),
     ValueError, "worker=-1: a next-level worker index is >= 0"),
    ("submit-worker-bool",
     lambda w, c, s: _in_run(w, lambda o: o.submit_next_level(c, TaskArgs(), worker=True)),
     TypeError, "worker: expected an int, not a bool"),
    ("submit-worker-float",
     lambda w, c, s: _in_run(w, lambda o: o.submit_next_level(c, TaskArgs(), worker=0.0)),
     TypeError, "worker: expected an int (got float 0.0)"),
    ("submit-args-str", lambda w, c, s: _in_run(w, lambda o: o.submit_sub(s, "args")),
     TypeError, "args: expected a TaskArgs (got str 'args')"),
    ("submit-cfg-int", lambda w, c, s: _in_run(w, lambda o: o.submit_sub(s, TaskArgs(), cfg=3)),
     TypeError, "cfg: expected a CallConfig (got int 3)"),
    ("submit-group-item-int", lambda w, c, s: _in_run(w, lambda o: o.submit_sub_group(s, [TaskArgs(), 1])),
     TypeError, "submit_sub_group.args_list[1]: expected a TaskArgs (got int 1)"),
    ("submit-group-not-a-list", lambda w, c, s: _in_run(w, lambda o: o.submit_sub_group(s, 3)),
     TypeError, "submit_sub_group.args_list: expected a sequence (got int 3)"),
    ("submit-group-worker-bool",
     lambda w, c, s: _in_run(w, lambda o: o.submit_next_level_group(c, [TaskArgs()], workers=[True])),
     TypeError, "worker: expected an int, not a bool"),
    ("buffer-tensor-dtype-int", lambda w, c, s: w.create_buffer(64).tensor((4,), 3),
     TypeError, "Tensor.dtype: expected a DataType (got int 3)"),
]
# fmt: on


@pytest.mark.parametrize("thunk, exc, text", [c[1:] for c in WORKER_CASES], ids=[c[0] for c in WORKER_CASES])
def test_bad_input_to_a_worker_is_refused_by_name(worker, thunk, exc, text):
    _check(lambda: thunk(*worker), exc, text)


def test_numpy_integers_reach_a_worker_as_ints(worker):
    w, _copy, _sub = worker
    shared = w.alloc_shared_tensor((np.int64(4),), F32)
    assert shared.shape == (4,)

    def body(o):
        d = o.alloc_child_tensor(np.int64(0), (np.int32(4),), F32)
        assert d.shape == (4,) and d.chip == 0
        o.copy_to(d.tensor(), shared.tensor())

    _in_run(w, body)


def _raise_undecodable(args):
    raise ValueError("bad " + os.fsdecode(b"\xff") + " name")


def test_a_sub_worker_exception_that_is_not_valid_utf8_keeps_its_type_message_and_traceback():
    def named(args):
        raise KeyError("x")

    named.__qualname__ = "named\udcff"
    w = Worker(level=3, num_sub_workers=1, task_timeout=30)
    try:
        boom = w.register(_raise_undecodable)
        odd = w.register(named)
        w.init()
        with pytest.raises(RuntimeError) as info:
            _in_run(w, lambda o: o.submit_sub(boom, TaskArgs()))
        message = str(info.value)
        assert "Traceback (most recent call last)" in message
        assert "ValueError: bad \\udcff name" in message
        with pytest.raises(RuntimeError) as info:
            _in_run(w, lambda o: o.submit_sub(odd, TaskArgs()))
        assert "callable 'named\\udcff'" in str(info.value)
    finally:
        close_and_check(w)
