# Annals — two commands: `make run` and `make test`. Both bootstrap .venv themselves.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: run test lint fmt bench install clean deploy screenshots

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q 'pip>=23,<26.3'  # chalice 1.34 pins pip below 26.3
	$(BIN)/python -m pip install -q -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/annals serve --host $(HOST) --port $(PORT)

INFRA_STAMP := $(VENV)/.infra-stamp

$(INFRA_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[dev,infra]'
	@touch $(INFRA_STAMP)

# Your own copy on AWS (docs/aws.md), from a fresh clone:
#   make deploy USER=alice [REGION=eu-west-1] [DEPLOY_ARGS='--opensearch-endpoint https://…']
#   make deploy USER=alice SYNTH=1   # only write the CloudFormation template (no AWS account)
# Installs the infra extra (aws-cdk-lib) and, when there is no Node.js (aws-cdk-lib runs on
# it), Node into .venv with nodeenv; `annals deploy` gets the CDK CLI through npx.
DEPLOY_OUT ?= cdk.out/$(USER)
ifneq ($(filter deploy,$(MAKECMDGOALS)),)
ifneq ($(origin USER),command line)
$(error usage: make deploy USER=<name> [SYNTH=1] [REGION=…] — deploys the stack Annals-<name>)
endif
endif

deploy: $(INFRA_STAMP)
	@PATH="$(abspath $(BIN)):$$PATH"; command -v node >/dev/null 2>&1 || { \
	  echo "Node.js not found (aws-cdk-lib needs it): installing it into $(VENV) (nodeenv)"; \
	  $(BIN)/python -m pip install -q nodeenv && \
	  VIRTUAL_ENV="$(abspath $(VENV))" $(BIN)/nodeenv -p --prebuilt --node=lts; }
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/annals deploy --user '$(USER)' \
	  $(if $(REGION),--region '$(REGION)') \
	  $(if $(SYNTH),--synth-only --out '$(DEPLOY_OUT)') $(DEPLOY_ARGS)

test: $(STAMP) $(INFRA_STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

# Every screen of the web app (desktop + phone, en + zh) into docs/screenshots/, through
# Debian's chromium (apt-get install -y chromium) driven by Playwright.
screenshots: $(STAMP)
	$(BIN)/python -m tests.web.screenshots --out docs/screenshots

lint: $(STAMP)
	$(BIN)/ruff check .

fmt: $(STAMP)
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/annals bench locomo ../shared/data/locomo/*.json

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache build *.egg-info
