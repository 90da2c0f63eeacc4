# The two commands of the README. Both set up .venv first (seconds when nothing changed).
.PHONY: setup run test test-fast

setup:
	@bash scripts/setup_env.sh

# Whole local pipeline on generated data; pass options with ARGS="--dataset etth1 ...".
run: setup
	.venv/bin/tft-pipeline $(ARGS)

# Test files run in parallel, one worker per core (pytest-xdist); a file's tests stay on
# one worker, so the pipeline run a module's tests share is made once. Files start in the
# order tests/conftest.py gives them (the costliest first), not by their number of tests.
PARALLEL = -n auto --dist loadfile --no-loadscope-reorder

# The full suite, as CI runs it.
test: setup
	.venv/bin/python -m pytest tests $(PARALLEL) $(PYTEST_ARGS)

# The developer's loop: every test but those marked slow (pipelines, training, XLA).
test-fast: setup
	.venv/bin/python -m pytest tests -m "not slow" $(PARALLEL) $(PYTEST_ARGS)
