# The quick start is two commands: `make demo` and `make test`. Each sets up what is missing
# (scripts/setup.sh: system packages, .venv with the CPU build of torch, lemmata itself), then
# does its job.

VENV := .venv
BIN := $(VENV)/bin
export LITELLM_LOCAL_MODEL_COST_MAP := True
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: setup demo test lint pytest bench clean

# The tests need the ray extra (proof workers on a local Ray instance) and the notebooks
# extra (they execute notebooks/), the research extra (pandas, scipy, pyarrow for the research
# agent), the gui extra (tesseract's and Chromium's Python sides, the icon set), the mcp extra
# (the MCP server and its client), the otel extra (tracing spans) and the experience extra
# (TextWorldExpress and ScienceWorld for early experience).
setup:
	@scripts/setup.sh dev,ray,notebooks,research,gui,mcp,otel,experience

# The main job on embedded defaults (no LLM, no network): the batch proof runner on the bundled
# identity suite (Zeilberger certificates, checked proofs, Lean 4 sketches), then on the
# bundled Coq suite (given proofs checked, the rest found by the tactic portfolio).
demo: setup
	$(BIN)/lemmata prove provers/suites/wz_identities.jsonl --method wz --out-dir out/wz --overwrite
	$(BIN)/lemmata prove provers/suites/coq_basic.jsonl --backend coq --workers 2 \
		--out out/coq_basic.results.jsonl --overwrite

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
