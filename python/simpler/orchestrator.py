"""The orchestration surface: what an orch function receives.

An orch function only builds the graph — it names tensors, tags them and
submits; the runtime infers the edges and runs the tasks. Computing on data
here would be invisible to dependency inference: use NumPy/torch before or
after `Worker.run()`, or inside a sub-worker callable.
"""

from __future__ import annotations

from typing import Optional, Sequence

from simpler._core import ANY_SUB_WORKER, TaskKind
from simpler.call_config import CallConfig
from simpler.task_interface import TaskArgs


class Orchestrator:
    def __init__(self, worker):
        self._worker = worker
        self.submitted: list = []

    def _submit(self, kind, callable, members, cfg: Optional[CallConfig]) -> int:
        handle = self._worker._check_callable(callable, kind)
        config = (cfg or CallConfig()).to_bytes()
        task = self._worker._core.submit(kind, handle.id, members, config)
        self.submitted.append(task)
        return task

    def submit_next_level(self, callable, args: TaskArgs, cfg: Optional[CallConfig] = None, worker: int = 0) -> int:
        """Runs `callable` on next-level worker `worker` (a chip) with `args`."""
        return self._submit(TaskKind.NEXT_LEVEL, callable, [(args, worker)], cfg)

    def submit_next_level_group(self, callable, args_list: Sequence[TaskArgs], cfg: Optional[CallConfig] = None,
                                workers: Optional[Sequence[int]] = None) -> int:
        """One node of N members, member i on `workers[i]` (default: worker i), all
        dispatched together. Members are not ordered against each other."""
        workers = list(range(len(args_list))) if workers is None else list(workers)
        if len(workers) != len(args_list):
            raise ValueError(f"submit_next_level_group: {len(args_list)} argument lists but {len(workers)} workers")
        return self._submit(TaskKind.NEXT_LEVEL, callable, list(zip(args_list, workers)), cfg)

    def submit_sub(self, callable, args: TaskArgs, cfg: Optional[CallConfig] = None) -> int:
        """Runs Python `callable(MappedArgs)` on any idle sub-worker."""
        return self._submit(TaskKind.SUB, callable, [(args, ANY_SUB_WORKER)], cfg)

    def submit_sub_group(self, callable, args_list: Sequence[TaskArgs], cfg: Optional[CallConfig] = None) -> int:
        """One node of N sub tasks, dispatched together to N distinct sub-workers."""
        return self._submit(TaskKind.SUB, callable, [(a, ANY_SUB_WORKER) for a in args_list], cfg)
