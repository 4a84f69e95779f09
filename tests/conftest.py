import os
from pathlib import Path

os.environ.setdefault("JTC_PROGRESS", "0")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if "JTC_DATA_OUT" not in os.environ:  # a bare `pytest` must not rewrite the committed book/data (`make test` sets it)
    import tempfile

    os.environ["JTC_DATA_OUT"] = tempfile.mkdtemp(prefix="jtc-test-data-")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def html(tmp_path_factory, request):
    """The book rendered once per test session into a temporary folder: (html root, index page). Under
    pytest-xdist (`make test` runs two workers) the workers share one rendering: the first builds it under a lock in
    the session's common temporary folder, the others wait and read it."""
    import fcntl
    import json

    from jtc_utils.book.build import website

    if not hasattr(request.config, "workerinput"):  # not an xdist worker
        out = tmp_path_factory.mktemp("html")
        return out / "_build" / "html", website.build_html(out)
    shared = tmp_path_factory.getbasetemp().parent / "html"
    shared.mkdir(exist_ok=True)
    done = shared / "index.json"
    with open(shared / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                done.write_text(json.dumps(str(website.build_html(shared / "book"))))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return shared / "book" / "_build" / "html", Path(json.loads(done.read_text()))
