"""Progress bars show in a terminal and stay out of saved notebooks.

papermill and nbval run notebooks with ``JTC_PROGRESS=0`` (set by :mod:`jtc_utils.book.build.runner` and the tests), so
the stored outputs hold no progress-bar noise; anywhere else tqdm shows as usual.
"""

import os


def show_progress() -> bool:
    return os.environ.get("JTC_PROGRESS", "1") not in ("0", "false", "False", "")
