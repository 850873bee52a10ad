"""magika (Google's file-type detector, its ONNX model inside its wheel), used as its docs
show: run by tests/test_compat_apps.py under onnxruntime and under ``python -m ortc.compat``."""

import json
import random

from magika import Magika

rng = random.Random(7)
samples = {
    "python": b"import os\n\ndef main():\n    print(os.getcwd())\n\nif __name__ == '__main__':\n"
              b"    main()\n" * 3,
    "json": json.dumps({"k": list(range(40)), "name": "x" * 30}, indent=2).encode(),
    "html": b"<!DOCTYPE html><html><head><title>t</title></head><body><p>hello</p>"
            b"<div class='a'>text</div></body></html>\n" * 4,
    "csv": b"".join(f"{i},{i * i},name{i}\n".encode() for i in range(60)),
    "c": b"#include <stdio.h>\nint main(void) {\n  printf(\"hi\\n\");\n  return 0;\n}\n" * 3,
    "random": bytes(rng.randrange(256) for _ in range(3000)),
    "shell": b"#!/bin/sh\nset -e\nfor f in *.txt; do\n  echo \"$f\"\ndone\n" * 4,
    "tiny": b"ab",
}
m = Magika()
for name, data in samples.items():
    res = m.identify_bytes(data)
    out = res.prediction.output
    print(name, res.status, res.prediction.dl.label, out.label, out.group, out.mime_type,
          repr(res.prediction.score))
results = m.identify_bytes_batch([samples["python"], samples["json"]]) \
    if hasattr(m, "identify_bytes_batch") else []
for res in results:
    print("batch", res.prediction.output.label, repr(res.prediction.score))
