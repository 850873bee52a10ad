# Each target makes .venv on first use and installs what it needs into it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-test

.PHONY: test test-apps demo bench fuzz generate generate-rust check-generated clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(VENV)/bin/python pyproject.toml
	$(PY) -m pip install -q -e '.[cpu,test,dask,ray]'
	touch $(STAMP)

# tools/with-pypy brings pypy3 for tests/test_pypy.py (apt-get) or, where it cannot, runs the
# rest and says so on the last lines (under CI it fails instead). TESTS picks test files.
TESTS ?= tests
test: $(STAMP)
	bash tools/with-pypy $(PY) -m pytest -q $(TESTS)

# Real onnxruntime applications (magika, ddddocr, faster-whisper's VAD, RapidOCR, sklearn-onnx
# models, onnxruntime-extensions, LightGBM via onnxmltools with onnxconverter-common's float16,
# rapid_layout, onnxscript's eager mode and models, onnx-asr's Whisper over IOBinding,
# onnx-array-api over onnxruntime's C++ classes: the apps extra)
# run under ortc.compat and compared with the same runs on onnxruntime (tests/test_compat_apps.py).
APPS_STAMP := $(VENV)/.installed-apps
$(APPS_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[cpu,test,apps]'
	touch $(APPS_STAMP)

test-apps: $(APPS_STAMP)
	$(PY) -m pytest -q -m apps tests/test_compat_apps.py

demo: $(STAMP)
	$(PY) examples/demo.py

# The long API-misuse fuzz (tests/test_fuzz.py; CI runs 2,000 sequences of it). FUZZ_ARGS adds
# options, e.g. FUZZ_ARGS="--seed 7 --jobs 8".
fuzz: $(STAMP)
	$(PY) tests/test_fuzz.py fuzz --sequences 100000 $(FUZZ_ARGS)

bench: $(STAMP)
	$(PY) -m ortc bench

generate: $(VENV)/bin/python
	$(PY) -m pip install -q cffi
	$(PY) build_ffi.py

# The Rust crate's generated files (rust/ortc-rules/src/sys.rs, rules.rs) follow include/ and
# the rules table: regenerate them after either changes.
generate-rust: $(STAMP)
	$(PY) -m ortc.rust_crate

check-generated: $(STAMP)
	$(PY) build_ffi.py --check
	$(PY) -m ortc.rust_crate --check

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
