# The two commands of the README. Both set up .venv first (seconds when nothing changed).
.PHONY: setup run test

setup:
	@bash scripts/setup_env.sh

# Whole local pipeline on generated data; pass options with ARGS="--dataset etth1 ...".
run: setup
	.venv/bin/tft-pipeline $(ARGS)

test: setup
	.venv/bin/python -m pytest tests $(PYTEST_ARGS)
