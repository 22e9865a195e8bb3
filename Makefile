# The quick start is two commands: `make demo` and `make test`. Each sets up what is missing
# (scripts/setup.sh: system packages, .venv with the CPU build of torch, lemmata itself), then
# does its job.

VENV := .venv
BIN := $(VENV)/bin
export LITELLM_LOCAL_MODEL_COST_MAP := True
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: setup demo test lint pytest bench clean

setup:
	@scripts/setup.sh dev

demo: setup
	$(BIN)/lemmata doctor
	$(BIN)/lemmata embed --query "a proof assistant checks a theorem" \
		"Coq checks the proof of a theorem mechanically." \
		"Lean 4 has a REPL that answers in JSON." \
		"The patient's blood pressure rose after the change of treatment." \
		"Click the Submit button at the bottom of the form." \
		"Wilf-Zeilberger pairs certify binomial sum identities."

test: setup lint pytest

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

pytest:
	$(BIN)/pytest

bench: setup
	@for b in benchmarks/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache .pytest_cache
