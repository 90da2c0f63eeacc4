# The two commands of the README. Both set up .venv first (seconds when nothing changed).
.PHONY: setup run test test-fast

setup:
	@bash scripts/setup_env.sh

# Whole local pipeline on generated data; pass options with ARGS="--dataset etth1 ...".
run: setup
	.venv/bin/tft-pipeline $(ARGS)

# The full suite, as CI runs it.
test: setup
	.venv/bin/python -m pytest tests $(PYTEST_ARGS)

# The developer's loop: every test but those marked slow (pipelines, training, XLA).
test-fast: setup
	.venv/bin/python -m pytest tests -m "not slow" $(PYTEST_ARGS)
