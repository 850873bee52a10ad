"""ddddocr (captcha OCR and detection, its ONNX models inside its wheel), used as its docs
show: run by tests/test_compat_apps.py under onnxruntime and under ``python -m ortc.compat``."""

import hashlib
import io
import random

from PIL import Image, ImageDraw

import ddddocr


def captcha(text, seed):
    rng = random.Random(seed)
    img = Image.new("RGB", (120, 40), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    for _ in range(6):
        draw.line([(rng.randrange(120), rng.randrange(40)), (rng.randrange(120),
                   rng.randrange(40))], fill=(rng.randrange(200), 120, 160))
    for i, ch in enumerate(text):
        draw.text((10 + 25 * i, 8 + rng.randrange(8)), ch, fill=(20, 20, 20))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


ocr = ddddocr.DdddOcr(show_ad=False)
for i, text in enumerate(["3A9K", "x7b2", "HELLO", "0123"]):
    data = captcha(text, i)
    print("ocr", text, repr(ocr.classification(data)))
    prob = ocr.classification(data, probability=True)
    digest = hashlib.sha256(repr(prob["probabilities"]).encode()).hexdigest()
    print("prob", text, repr(prob["text"]), repr(prob["confidence"]), digest)
old = ddddocr.DdddOcr(show_ad=False, old=True)
print("old", repr(old.classification(captcha("q4r8", 9))))
det = ddddocr.DdddOcr(det=True, ocr=False, show_ad=False)
img = Image.new("RGB", (200, 120), (250, 250, 250))
draw = ImageDraw.Draw(img)
for x, ch in ((20, "A"), (90, "B"), (150, "C")):
    draw.rectangle([x, 30, x + 35, 75], outline=(0, 0, 0), width=3)
    draw.text((x + 12, 45), ch, fill=(0, 0, 0))
buf = io.BytesIO()
img.save(buf, "PNG")
print("det", det.detection(buf.getvalue()))
