import os

os.environ.setdefault("JTC_PROGRESS", "0")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if "JTC_DATA_OUT" not in os.environ:  # a bare `pytest` must not rewrite the committed book/data (`make test` sets it)
    import tempfile

    os.environ["JTC_DATA_OUT"] = tempfile.mkdtemp(prefix="jtc-test-data-")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def html(tmp_path_factory):
    """The book rendered once per test session into a temporary folder: (html root, index page)."""
    from jtc_utils.book import runner

    out = tmp_path_factory.mktemp("html")
    index = runner.build_html(out)
    return out / "_build" / "html", index
