"""faster-whisper's voice activity detection (Silero VAD v6, the ONNX model inside its wheel),
used as its API offers it, and the same model streamed frame by frame with its recurrent state,
as a live-audio application calls it: run by tests/test_compat_apps.py under onnxruntime and
under ``python -m ortc.compat``."""

import hashlib

import numpy as np

from faster_whisper.vad import VadOptions, get_speech_timestamps, get_vad_model

RATE = 16000


def audio(seed):
    """Eight seconds: quiet noise around two voiced stretches (a pitch with harmonics and a
    syllable-rate envelope)."""
    rng = np.random.default_rng(seed)
    t = np.arange(8 * RATE) / RATE
    out = rng.normal(0, 0.003, t.size)
    for start, end, pitch in ((1.0, 3.2, 140.0), (4.5, 6.8, 210.0)):
        part = (t >= start) & (t < end)
        tt = t[part]
        voice = sum(np.sin(2 * np.pi * pitch * k * tt + k) / k for k in range(1, 8))
        envelope = 0.5 + 0.5 * np.sin(2 * np.pi * 4.0 * tt) ** 2
        out[part] += 0.3 * voice * envelope
    return out.astype(np.float32)


for seed in (0, 1):
    wave = audio(seed)
    spans = get_speech_timestamps(wave, VadOptions(min_silence_duration_ms=300))
    print("spans", seed, [(s["start"], s["end"]) for s in spans])
    probs = get_vad_model()(np.pad(wave, (0, (-wave.size) % 512)))
    print("probs", seed, probs.shape, repr(float(probs.sum())),
          hashlib.sha256(probs.tobytes()).hexdigest())

# streaming: one 512-sample frame per call, 64 samples of context, the state carried over
session = get_vad_model().session
wave = audio(2)
h = np.zeros((1, 1, 128), np.float32)
c = np.zeros((1, 1, 128), np.float32)
context = np.zeros((1, 64), np.float32)
stream = []
for i in range(0, wave.size - 511, 512):
    frame = wave[i:i + 512][None, :]
    prob, h, c = session.run(None, {"input": np.concatenate([context, frame], 1), "h": h, "c": c})
    context = frame[:, -64:]
    stream.append(prob)
stream_probs = np.concatenate(stream).ravel()
print("stream", stream_probs.size, repr(float(stream_probs.max())),
      hashlib.sha256(stream_probs.tobytes()).hexdigest(),
      hashlib.sha256(h.tobytes() + c.tobytes()).hexdigest())
