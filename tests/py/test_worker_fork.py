"""A Worker's Python sub-workers run even when the parent has other Python
threads: init() forks the way os.fork() does (PyOS_BeforeFork, and
PyOS_AfterFork_Child in each child), so a child never inherits a GIL-drop
request from a thread that does not exist in it and waits forever.

Without it, this test's sub tasks hang (the task timeout turns that into a
RuntimeError): a busy thread asks for the GIL while init() holds it across
several forks made slow by a large address space."""

import threading

import numpy as np

from simpler import TaskArgs, Worker


def noop(_args):
    return None


def test_sub_workers_run_while_another_python_thread_wants_the_gil():
    ballast = np.ones(256 << 20, dtype=np.uint8)  # each fork copies more page tables: init() holds the GIL longer
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            sum(range(1000))

    t = threading.Thread(target=busy)
    t.start()
    try:
        for _ in range(3):
            with Worker(level=3, num_sub_workers=4, task_timeout=10) as w:
                h = w.register(noop)
                w.init()
                w.run(lambda o, _a, _c, h=h: [o.submit_sub(h, TaskArgs()) for _ in range(20)])
    finally:
        stop.set()
        t.join()
    del ballast
