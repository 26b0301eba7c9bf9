"""Sphinx extension: the reference documents every object under its public name (`simpler.Tensor`),
although it lives in `simpler._core` or `simpler.model.*`.

Signatures written by nanobind or by Python annotations name the defining module; this extension
rewrites those spellings to the public one, and resolves a cross-reference to a defining module's
name to the public entry. A type the API hands out or asks for without exporting its name (`WorkerConfig`,
what `Worker.config` is) keeps its module's name and has its own entry on the page of what uses it.
"""

from __future__ import annotations

import re
from typing import Any

import simpler

PUBLIC = frozenset(simpler.__all__)
# Handed out or asked for by public calls, not exported: documented under their module's name.
UNEXPORTED = {
    "WorkerConfig": "simpler._core",
    "ChipLaneConfig": "simpler._core",
    "ChipServiceConfig": "simpler._core",
    "TraceEvent": "simpler._core",
    "WorkerView": "simpler.runtime.state",
    "ProgressSource": "simpler.runtime.progress",
    "SharedMemoryView": "simpler.model.buffer",
}

# Classes only the runtime makes (users receive them): their entries show no constructor, whose
# parameters are the runtime's internals.
MADE_BY_RUNTIME = frozenset(
    {
        "simpler.Orchestrator",
        "simpler.RunFuture",
        "simpler.Progress",
        "simpler.ChildProgress",
        "simpler.MappedArgs",
        "simpler.DeviceBuffer",
        "simpler.Domain",
        "simpler.GlobalDomain",
        "simpler.WindowBuffer",
    }
)

_DOTTED = re.compile(r"\bsimpler(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def public_spelling(dotted: str) -> str:
    """`simpler._core.Tensor` -> `simpler.Tensor`; `simpler._core.TensorArgType.INPUT` ->
    `simpler.TensorArgType.INPUT`; anything else unchanged."""
    parts = dotted.split(".")
    for i in range(1, len(parts)):
        if parts[i] in PUBLIC and i > 1:
            return ".".join(["simpler", *parts[i:]])
        if parts[i] in UNEXPORTED:
            return ".".join([UNEXPORTED[parts[i]], *parts[i:]])
    return dotted


def rewrite(text: str) -> str:
    return _DOTTED.sub(lambda m: public_spelling(m.group(0)), text)


def _signature(app: Any, what: str, name: str, obj: Any, options: Any, signature: str | None, ret: str | None) -> Any:
    if what == "class" and name in MADE_BY_RUNTIME:
        return ("", None)
    if not signature and not ret:
        return None
    return (rewrite(signature) if signature else signature, rewrite(ret) if ret else ret)


def _resolve(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """missing-reference: an annotation's `simpler._core.Tensor` is the entry `simpler.Tensor`."""
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    public = public_spelling(target)
    if public == target:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(env, node.get("refdoc"), app.builder, node.get("reftype"), public, node, contnode)


def setup(app: Any) -> dict[str, Any]:
    app.connect("autodoc-process-signature", _signature)
    app.connect("missing-reference", _resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
