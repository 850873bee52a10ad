"""ortc's benchmark runner (``python -m ortc bench``, ``make bench``); see bench/runner.py."""
