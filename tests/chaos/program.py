"""A chaos program: a random tree of Workers and the runs to do on it, made
from one seed (`generate(seed)`; the same seed makes the same program).

The tree is a level-3 Worker with 1-2 chips and 0-2 sub-workers, or a level-4
Worker over 1-2 such level-3 Workers. The program names 1-4 host buffers, each
a FLOAT32 matrix of 4-16 rows and columns, through random views: windows, every
other row or column, single columns, transposed windows; overlapping and
disjoint ones in the same buffer. Its 5-200 tasks are spread over 1-5 runs,
some submitted as futures; between runs it may wait for every run and check
the bytes, release a buffer (checked first or not), or create a new one.

Each task is an `Op`: chip kernels (std.vector_add, std.add_scalar, std.copy),
Python sub-worker callables (`fold`, `sum`), a copy staged through a
communication domain's window, and groups of chip or sub tasks. An output is
disjoint from its task's inputs (a task may not write a view it also names
otherwise) and tagged OUTPUT, OUTPUT_EXISTING or INOUT; a group's members
touch disjoint elements, so every task has one meaning, which `model.py`
computes in NumPy in submission order. Inputs from a buffer that no
task writes may be tagged NO_DEP."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

FOLD_MODULUS = 1009  # `fold` keeps values bounded: (x * 3 + k) % 1009
MAX_TASKS = 200


@dataclass(frozen=True)
class View:
    """A (h, w) FLOAT32 view of buffer `buf` (a matrix with `cols` columns):
    element (i, j) is the buffer's [r0 + i*rstep, c0 + j*cstep], or with
    `transposed` its [r0 + j*rstep, c0 + i*cstep]."""

    buf: int
    cols: int
    r0: int
    c0: int
    h: int
    w: int
    rstep: int
    cstep: int
    transposed: bool

    def strides(self) -> Tuple[int, int]:
        """Element strides of the view's two dimensions."""
        row, col = self.rstep * self.cols, self.cstep
        return (col, row) if self.transposed else (row, col)

    def offset(self) -> int:
        """Elements from the buffer's start to the view's first element."""
        return self.r0 * self.cols + self.c0

    def elements(self) -> frozenset:
        """The flat indices of the buffer elements the view names."""
        s0, s1 = self.strides()
        base = self.offset()
        return frozenset(base + i * s0 + j * s1 for i in range(self.h) for j in range(self.w))

    def touches(self, other: "View") -> bool:
        return self.buf == other.buf and not self.elements().isdisjoint(other.elements())

    def text(self) -> str:
        rows = f"{self.r0}:+{self.h if not self.transposed else self.w}:{self.rstep}"
        cols = f"{self.c0}:+{self.w if not self.transposed else self.h}:{self.cstep}"
        return f"b{self.buf}[{rows},{cols}]{'.T' if self.transposed else ''}"


# What each simple op computes; the tags of its views are ("IN",) * inputs + (output tag,).
CHIP_OPS = {"add": 2, "add_scalar": 1, "copy": 1, "staged": 1}  # op -> number of inputs
SUB_OPS = {"fold": 1, "sum": 2}


@dataclass
class Op:
    """One task: `kind` (a CHIP_OPS or SUB_OPS name, or "chip_group" /
    "sub_group" with `members`), its views (inputs then the output), their
    tags, `param` (add_scalar's and staged's addend in halves, fold's k),
    `chip` (the chip of a chip op within its level-3 Worker) and `child` (on a
    level-4 tree, the level-3 Worker that runs it)."""

    kind: str
    views: List[View] = field(default_factory=list)
    tags: List[str] = field(default_factory=list)
    param: int = 0
    chip: int = 0
    child: int = 0
    members: List["Op"] = field(default_factory=list)
    fault: str = ""  # the Fault kind this op injects (task_raise, chip_fail, hang, named_again, domain_again)

    def task_count(self) -> int:
        """Tasks it submits where it runs (staged: the copy in and the add_scalar out)."""
        if self.members:
            return sum(m.task_count() for m in self.members)
        return 2 if self.kind == "staged" else 1

    def all_views(self) -> List[View]:
        return [v for m in self.members for v in m.views] if self.members else list(self.views)

    def text(self) -> str:
        if self.members:
            return f"{self.kind}[" + "; ".join(m.text() for m in self.members) + "]"
        where = f"L3[{self.child}] " if self.child else ""
        where += f"chip {self.chip} " if self.kind in CHIP_OPS else ""
        args = ", ".join(f"{v.text()} {t}" for v, t in zip(self.views, self.tags, strict=True))
        return f"{where}{self.kind}({args}{f', {self.param}' if self.param else ''})"


@dataclass
class Step:
    """One step of the program: a run of `ops` (`future`: submitted without
    waiting), or between runs `sync` (wait for every run, check every live
    buffer), `release` of buffer `buf` (`checked`: after a sync that checks it)
    or `create` of a new buffer (rows x cols)."""

    what: str
    ops: List[Op] = field(default_factory=list)
    future: bool = False
    buf: int = -1
    checked: bool = False
    shape: Tuple[int, int] = (0, 0)


@dataclass
class Tree:
    """level 3: l3s has one (chips, subs); level 4: one per level-3 child, the
    last `remote` of them in other MPI ranks (rank j + 1 serves the j-th)."""

    level: int
    l3s: List[Tuple[int, int]]
    remote: int = 0

    def local(self) -> List[int]:
        return list(range(len(self.l3s) - self.remote))

    def rank(self, child: int) -> int:
        """The MPI rank that serves level-3 child `child` (0: a local one, in rank 0's process tree)."""
        first_remote = len(self.l3s) - self.remote
        return 0 if child < first_remote else child - first_remote + 1

    def text(self) -> str:
        l3 = ", ".join(
            f"L3{f'@rank{self.rank(i)}' if self.rank(i) else ''}({c} chips, {s} subs)"
            for i, (c, s) in enumerate(self.l3s)
        )
        return l3 if self.level == 3 else f"L4 over [{l3}]"


REMOTE_SHARE = 0.3  # of the level-4 trees (about a third of the programs): their last 1-2 children are remote
FAULTS = (
    "chip_kill",
    "sub_kill",
    "l3_kill",
    "below_kill",
    "task_raise",
    "chip_fail",
    "hang",
    "named_again",
    "domain_again",
    "sigint",
    "top_kill",
    "rank_kill",
    "rank_stop",
)


@dataclass
class Fault:
    """The one fault a program injects. Kills (SIGKILL, `delay` seconds after
    the first run starts): `chip_kill` of chip `target`, `sub_kill` of
    sub-worker `target` (level-3 trees), `l3_kill` of level-3 child `child`,
    `below_kill` of a random process below it (level-4 trees). Marked ops:
    `task_raise` (a sub task that raises), `chip_fail` (a chip task its kernel
    refuses), `hang` (a sub task asleep past task_timeout), `named_again` (a
    task naming a released buffer), `domain_again` (a task naming a released
    domain's window). `sigint`: SIGINT to the Worker process `delay` seconds
    into the blocking run of step `step`. `top_kill`: the driver SIGKILLs the
    Worker process `delay` seconds after starting it. On a tree with remote
    children, `rank_kill` / `rank_stop`: the rank serving level-3 child
    `child` SIGKILLs / SIGSTOPs itself `delay` seconds after its first task
    began."""

    kind: str
    child: int = 0
    target: int = 0
    delay: float = 0.0
    step: int = -1


@dataclass
class Program:
    seed: int
    tree: Tree
    buffers: List[Tuple[int, int]]  # (rows, cols) of every buffer the program creates, in creation order
    const: Optional[int]  # a buffer no task writes (its inputs may be NO_DEP), or None
    steps: List[Step]
    fault: Optional[Fault] = None
    task_timeout: float = 20.0

    def task_count(self) -> int:
        return sum(op.task_count() for s in self.steps for op in s.ops)


class _Gen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.seed = seed

    # -- shapes ---------------------------------------------------------------
    def tree(self) -> Tree:
        r = self.rng
        if r.random() < 0.35:
            return Tree(4, [(r.randint(1, 2), r.randint(0, 2)) for _ in range(r.randint(1, 2))])
        return Tree(3, [(r.randint(1, 2), r.randint(0, 2))])

    def view(self, buf: int, shape: Tuple[int, int], h: int, w: int) -> Optional[View]:
        r = self.rng
        rows, cols = shape
        for _ in range(20):
            transposed = r.random() < 0.2
            rstep, cstep = r.choice([1, 1, 1, 2]), r.choice([1, 1, 1, 2])
            span_r = ((w if transposed else h) - 1) * rstep + 1
            span_c = ((h if transposed else w) - 1) * cstep + 1
            if span_r <= rows and span_c <= cols:
                return View(
                    buf,
                    cols,
                    r.randrange(rows - span_r + 1),
                    r.randrange(cols - span_c + 1),
                    h,
                    w,
                    rstep,
                    cstep,
                    transposed,
                )
        return None


def generate(seed: int, faults: bool = False) -> Program:
    """Program `seed`; with `faults`, the same program with one fault drawn
    from its own random stream (inject_fault)."""
    g = _Gen(seed)
    r = g.rng
    tree = g.tree()
    nbuf = r.randint(1, 4)
    buffers = [(r.randint(4, 16), r.randint(4, 16)) for _ in range(nbuf)]
    const = r.randrange(nbuf) if nbuf > 1 and r.random() < 0.4 else None
    live = list(range(nbuf))
    total = r.choice([r.randint(5, 30), r.randint(5, 30), r.randint(30, MAX_TASKS)])
    runs = r.randint(1, 5)
    steps: List[Step] = []
    made = 0
    for k in range(runs):
        share = total - made if k == runs - 1 else r.randint(1, max(1, (total - made) // (runs - k)))
        ops: List[Op] = []
        while share > 0 and made < total:
            op = _op(g, tree, buffers, live, const)
            if op is None:
                continue
            ops.append(op)
            share -= op.task_count()
            made += op.task_count()
        if ops:
            steps.append(Step("run", ops=ops, future=r.random() < 0.5))
        if k == runs - 1:
            break
        roll = r.random()
        if roll < 0.25:
            steps.append(Step("sync"))
        elif roll < 0.45 and len([b for b in live if b != const]) > 1:
            victim = r.choice([b for b in live if b != const])
            checked = r.random() < 0.5
            if checked:
                steps.append(Step("sync"))
            steps.append(Step("release", buf=victim, checked=checked))
            live.remove(victim)
            if r.random() < 0.6:
                buffers.append((r.randint(4, 16), r.randint(4, 16)))
                live.append(len(buffers) - 1)
                steps.append(Step("create", buf=len(buffers) - 1, shape=buffers[-1]))
    program = Program(seed, tree, buffers, const, steps)
    remote = random.Random(f"remote {seed}")  # its own stream: the program is the same with or without ranks
    if tree.level == 4 and remote.random() < REMOTE_SHARE:
        tree.remote = remote.randint(1, len(tree.l3s))
    if faults:
        inject_fault(program, random.Random(f"fault {seed}"))
    return program


def inject_fault(p: Program, r: random.Random) -> None:
    """Draws the program's fault among those its tree and steps allow and marks
    what it needs (an op, a blocking run, the task_timeout)."""
    tree, runs = p.tree, [i for i, s in enumerate(p.steps) if s.what == "run"]
    simple = [op for i in runs for op in p.steps[i].ops if not op.members]
    chip_ops = [op for op in simple if op.kind in ("add", "add_scalar", "copy")]
    kinds = ["task_raise", "chip_fail", "named_again", "domain_again", "sigint"]
    kinds += ["rank_kill", "rank_stop"] if tree.remote else ["top_kill"]  # under mpirun, rank 0 is not killed
    kinds += ["l3_kill", "below_kill"] if tree.level == 4 and tree.local() else []
    kinds += ["chip_kill"] * 2 if tree.level == 3 else []
    if tree.level == 3 and tree.l3s[0][1]:
        kinds += ["sub_kill", "hang"]
    while True:
        kind = r.choice(kinds)
        fault = Fault(kind, child=r.choice(tree.local() or [0]), delay=r.uniform(0.0, 0.01))
        if kind in ("rank_kill", "rank_stop"):  # a remote child's rank, at a random moment after its first task
            fault.child = r.randrange(len(tree.l3s) - tree.remote, len(tree.l3s))
            fault.delay = r.uniform(0.0, 0.02)
        elif kind == "chip_kill":
            fault.target = r.randrange(tree.l3s[0][0])
        elif kind == "sub_kill":
            fault.target = r.randrange(tree.l3s[0][1])
        elif kind in ("task_raise", "hang"):
            subs = [op for op in simple if op.kind == "fold"]
            if not subs:
                continue
            r.choice(subs).fault = kind
            if kind == "hang":
                p.task_timeout = 1.0
        elif kind == "chip_fail":
            if not chip_ops:
                continue
            r.choice(chip_ops).fault = kind
        elif kind == "domain_again":
            staged = [op for op in simple if op.kind == "staged"]
            if not staged:
                continue
            r.choice(staged).fault = kind
        elif kind == "named_again":
            if not _name_a_released_buffer(p, r):
                continue
        elif kind == "sigint":
            fault.step = r.choice(runs)
            p.steps[fault.step].future = False
            fault.delay = r.uniform(0.0, 0.003)
        elif kind == "top_kill":
            fault.delay = r.uniform(0.0, 0.6)
        p.fault = fault
        return


def _name_a_released_buffer(p: Program, r: random.Random) -> bool:
    """Puts into a run after a release an op reading the released buffer; False
    when no run follows a release."""
    for i, step in enumerate(p.steps):
        if step.what != "release":
            continue
        later = [s for s in p.steps[i + 1 :] if s.what == "run"]
        rows, cols = p.buffers[step.buf]
        for s in later:
            op = next((op for op in s.ops if not op.members and op.kind != "staged" and op.child == 0), None)
            if op is None:
                continue
            v = op.views[0]
            h, w = min(v.h, rows), min(v.w, cols)
            stale = View(step.buf, cols, 0, 0, h, w, 1, 1, False)
            out = op.views[-1]
            out = View(out.buf, out.cols, out.r0, out.c0, h, w, out.rstep, out.cstep, out.transposed)
            s.ops.insert(
                r.randrange(len(s.ops) + 1),
                Op("copy", [stale, out], ["IN", "OUTPUT_EXISTING"], chip=op.chip, child=op.child, fault="named_again"),
            )
            return True
    return False


def _op(g: _Gen, tree: Tree, buffers: List[Tuple[int, int]], live: List[int], const: Optional[int]) -> Optional[Op]:
    """A random op over the live buffers, or None when the draw does not fit."""
    r = g.rng
    child = r.randrange(len(tree.l3s))
    chips, subs = tree.l3s[child]
    kinds = ["add", "add_scalar", "copy", "add", "add_scalar", "staged"]
    if subs:
        kinds += ["fold", "sum", "fold"]
    if chips == 2 or len(tree.l3s) == 2:
        kinds.append("chip_group")
    if subs == 2:
        kinds.append("sub_group")
    kind = r.choice(kinds)
    if kind in ("chip_group", "sub_group"):
        members: List[Op] = []
        if kind == "chip_group" and tree.level == 4 and len(tree.l3s) == 2:
            slots = [(c, r.randrange(tree.l3s[c][0])) for c in (0, 1)]  # one member on each level-3 child
        elif kind == "chip_group":
            if chips < 2:
                return None
            slots = [(child, 0), (child, 1)]
        else:
            slots = [(child, 0), (child, 0)]
        h, w = r.randint(1, 4), r.randint(1, 4)
        member_kind = r.choice(["add", "add_scalar", "copy"] if kind == "chip_group" else list(SUB_OPS))
        for c, chip in slots:  # a group runs one callable
            m = _simple(g, member_kind, buffers, live, const, h, w, avoid=[v for x in members for v in x.views])
            if m is None:
                return None
            m.child, m.chip = c, chip
            members.append(m)
        return Op(kind, child=child, members=members)
    h, w = r.randint(1, 6), r.randint(1, 6)
    op = _simple(g, kind, buffers, live, const, h, w, avoid=[])
    if op is not None:
        op.child, op.chip = child, r.randrange(chips)
    return op


def _simple(
    g: _Gen,
    kind: str,
    buffers: List[Tuple[int, int]],
    live: List[int],
    const: Optional[int],
    h: int,
    w: int,
    avoid: List[View],
) -> Optional[Op]:
    """One task of `kind` over (h, w) views, none touching `avoid` (the other
    members of its group); None when the draw does not fit."""
    r = g.rng
    n_in = CHIP_OPS.get(kind) or SUB_OPS[kind]
    picks = [r.choice(live) for _ in range(n_in)]
    ins = [g.view(b, buffers[b], h, w) for b in picks]
    writable = [b for b in live if b != const]
    if any(v is None for v in ins) or not writable:
        return None
    tags = ["NO_DEP" if v.buf == const and r.random() < 0.5 else "IN" for v in ins]
    out: Optional[View] = None
    for _ in range(10):
        b = r.choice(writable)
        cand = g.view(b, buffers[b], h, w)
        if cand and not any(cand.touches(v) for v in ins):
            out = cand
            break
    if out is None:
        return None
    out_tag = r.choice(["OUTPUT_EXISTING", "OUTPUT", "INOUT"])
    if any(v.touches(a) for v in [*ins, out] for a in avoid):
        return None
    param = r.randint(1, 8) if kind in ("add_scalar", "staged") else r.randint(0, 50) if kind == "fold" else 0
    return Op(kind, views=[*ins, out], tags=[*tags, out_tag], param=param)
