"""The README's example: two chips add disjoint halves of a vector at once, then a
Python sub-worker sums the result once both halves are written.

    python examples/quickstart.py
"""

from simpler import ChipCallable, DataType, TaskArgs, TensorArgType, Worker


def total(args):  # a Python sub-worker: computes on exactly its view's bytes
    args.array(1)[0] = args.array(0).sum()


def main(argv=None) -> int:
    # --- the README's example, as printed there ---
    with Worker(level=3, num_chips=2, num_sub_workers=1) as w:
        vadd, post = w.register(ChipCallable("std.vector_add")), w.register(total)
        a, b, c = (w.alloc_shared_tensor((64,), DataType.FLOAT32) for _ in range(3))
        s = w.alloc_shared_tensor((1,), DataType.FLOAT32)
        w.init()  # children are forked here, before any thread
        a.array()[:], b.array()[:] = 1.0, 2.0

        def orch(o, args, cfg):  # builds the graph only; edges come from tags and views
            for chip, lo in ((0, 0), (1, 32)):  # disjoint halves of c: no edge, both chips run at once
                ta = TaskArgs()
                for h, tag in ((a, TensorArgType.INPUT), (b, TensorArgType.INPUT), (c, TensorArgType.OUTPUT_EXISTING)):
                    ta.add_tensor(h.tensor((32,), byte_offset=4 * lo), tag)
                o.submit_next_level(vadd, ta, worker=chip)
            ta = TaskArgs()
            ta.add_tensor(c.tensor(), TensorArgType.INPUT)  # reads all of c: waits for both halves
            ta.add_tensor(s.tensor(), TensorArgType.OUTPUT_EXISTING)
            o.submit_sub(post, ta)

        w.run(orch)  # returns when all ran, or raises naming task, worker, cause
        assert s.array()[0] == 192.0
    # --- end of the README's example ---
    print("sum of c = a + b over 64 elements: 192.0")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
