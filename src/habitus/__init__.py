"""habitus: learn a developer's stable habits from coding-agent transcripts.

The library API; nothing heavy is imported at import time::

    from habitus import distill, DistillOptions
    report = distill(DistillOptions(dry_run=True))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "DistillOptions",
    "Report",
    "decide",
    "distill",
    "inspect_path",
    "list_candidates",
    "load_config",
    "redact",
    "status",
    "__version__",
]

_LAZY = {
    "DistillOptions": "habitus.pipeline",
    "Report": "habitus.pipeline",
    "distill": "habitus.pipeline",
    "decide": "habitus.review",
    "list_candidates": "habitus.review",
    "inspect_path": "habitus.sources.inspect",
    "load_config": "habitus.config",
    "redact": "habitus.redact",
    "status": "habitus.status",
}

if TYPE_CHECKING:  # pragma: no cover
    from habitus.config import load_config
    from habitus.pipeline import DistillOptions, Report, distill
    from habitus.redact import redact
    from habitus.review import decide, list_candidates
    from habitus.sources.inspect import inspect_path
    from habitus.status import status


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'habitus' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
