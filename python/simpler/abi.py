"""The wire and the engine's machinery, apart from the user's API (`simpler`): what a tool, a test
or a binding of another language reads, not what an orchestration needs.

- the argument blob the mailboxes carry: `write_blob`, `read_blob` (all or nothing: every element
  validated before any is returned), `blob_size`, and `DecodedTaskArgs`, what `read_blob` returns;
- `ChipStorageTaskArgs`, the POD a chip orchestration receives;
- `DependencyTracker`, the inference a Worker runs per run (`Worker(record_edges=True)` shows its
  edges), and its scopes `HOST_SCOPE` and `WINDOW_SCOPE`;
- `check_identity_live`, the check every decoder makes that an identity names a live backing.

The memory model's module paths keep their names too (`simpler.task_interface.write_blob`,
`simpler.buffer.check_identity_live`); each is the same object as here. Nothing is defined here."""

from simpler.model.buffer import check_identity_live
from simpler.model.deps import HOST_SCOPE, WINDOW_SCOPE, DependencyTracker
from simpler.model.task_interface import ChipStorageTaskArgs, DecodedTaskArgs, blob_size, read_blob, write_blob

__all__ = [
    "HOST_SCOPE",
    "WINDOW_SCOPE",
    "ChipStorageTaskArgs",
    "DecodedTaskArgs",
    "DependencyTracker",
    "blob_size",
    "check_identity_live",
    "read_blob",
    "write_blob",
]
