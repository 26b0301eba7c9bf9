"""The benchmarks' PNG plots: one figure of one set of axes, drawn headless (Agg), saved with a
legend and a light grid. matplotlib is imported only when a benchmark is asked for a plot."""

import os
from typing import Any, Tuple


def new_figure() -> Tuple[Any, Any]:
    """A 7.2 x 4.8 inch figure at 110 dpi and its axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(7.2, 4.8), dpi=110)


def save_figure(fig: Any, ax: Any, path: str, **legend: Any) -> None:
    """Adds the legend (its keywords: `legend`) and the grid, lays the figure out and writes it to
    `path` as a PNG, making its folder if needed; the figure is closed."""
    import matplotlib.pyplot as plt

    ax.legend(fontsize="x-small", **legend)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
