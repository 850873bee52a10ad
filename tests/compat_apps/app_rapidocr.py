"""RapidOCR (text detection, angle classification and recognition: three ONNX models inside its
wheel, PP-OCR), used as its docs show, on images drawn here with Pillow's built-in font: run by
tests/test_compat_apps.py under onnxruntime and under ``python -m ortc.compat``."""

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from rapidocr_onnxruntime import RapidOCR


def page(lines, size, angle=0):
    font = ImageFont.load_default(size=size)
    img = Image.new("RGB", (560, 90 + 70 * len(lines)), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    for i, (text, colour) in enumerate(lines):
        draw.text((24, 30 + 70 * i), text, fill=colour, font=font)
    if angle:
        img = img.rotate(angle, expand=True, fillcolor=(255, 255, 255))
    return np.asarray(img)


engine = RapidOCR()
pages = [
    page([("Hello ortc 2026", (0, 0, 0)), ("ONNX Runtime", (30, 30, 90))], 32),
    page([("Invoice 4711", (0, 0, 0)), ("Total: 99.50 EUR", (90, 20, 20)),
          ("Thank you!", (0, 0, 0))], 28),
    page([("upside down text", (0, 0, 0))], 30, angle=180),
]
for i, img in enumerate(pages):
    result, _elapsed = engine(img)  # the elapsed times differ run to run: not printed
    for box, text, score in result or []:
        print("ocr", i, repr(text), repr(score), [[float(v) for v in point] for point in box])
det, _ = engine(pages[1], use_cls=False, use_rec=False)
print("det", len(det or []), [[[float(v) for v in p] for p in box] for box in det or []])
