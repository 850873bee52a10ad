"""rapid_layout (document layout analysis: PP-Layout's CDLA model inside its wheel), used as its
docs show: RapidLayout() on drawn pages, from an array and from an image file, and a second
engine configured through engine_cfg (one intra-op thread, the CPU arena on) with a lower
confidence threshold. Its engine builds SessionOptions (log severity, arena, optimization
level), passes the CPU provider as a (name, options) pair and reads the class names from the
model's custom metadata (get_modelmeta). Run by tests/test_compat_apps.py under onnxruntime
and under ``python -m ortc.compat``."""

import os
import tempfile

import cv2
import numpy as np

from rapid_layout import RapidLayout


def page(seed):
    """A white page: a title, paragraphs of text, a ruled table and a figure."""
    rng = np.random.default_rng(seed)
    img = np.full((800, 600, 3), 255, np.uint8)
    cv2.putText(img, "A Document Title %d" % seed, (70, 80), cv2.FONT_HERSHEY_SIMPLEX, 1.3,
                (0, 0, 0), 3)
    for i in range(12):
        words = " ".join("w" * int(rng.integers(2, 8)) for _ in range(6))
        cv2.putText(img, f"{i} {words}", (40, 150 + 22 * i), cv2.FONT_HERSHEY_SIMPLEX, 0.55,
                    (0, 0, 0), 1)
    top = 450 + 20 * seed
    cv2.rectangle(img, (60, top), (540, top + 230), (0, 0, 0), 2)
    for x in range(60, 541, 120):
        cv2.line(img, (x, top), (x, top + 230), (0, 0, 0), 1)
    for y in range(top, top + 231, 46):
        cv2.line(img, (60, y), (540, y), (0, 0, 0), 1)
    if seed:
        cv2.circle(img, (300, 745), 30, (0, 0, 255), -1)
    return img


def report(name, result):
    print(name, len(result.boxes), result.class_names)
    for box, score in zip(result.boxes, result.scores):
        print(" ", [repr(float(v)) for v in box], repr(float(score)))


engine = RapidLayout()
print("classes", engine.session.characters)
for seed in (0, 1):
    report(f"page {seed}", engine(page(seed)))

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "page.png")
    cv2.imwrite(path, page(2))
    report("file", engine(path))

tuned = RapidLayout(engine_cfg={"intra_op_num_threads": 1, "enable_cpu_mem_arena": True},
                    conf_thresh=0.3)
report("tuned", tuned(page(1)))
