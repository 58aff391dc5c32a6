"""What the explorer load test asks for; shared by the driver and the locust user.

Kept apart from the locustfile because importing locust patches the standard
library (gevent), which the driver process must not have.
"""

TOPIC = "wave-superposition"
PHASES = [round(0.25 * i, 2) for i in range(25)]  # 0.0 .. 6.0 rad; the driver warms all
QUERIES = [
    ("phase", "en"),
    ("interference", "en"),
    ("butterfly", "en"),
    ("FFT cost", "en"),
    ("相位", "zh"),
    ("蝶形", "zh"),
    ("叠加", "zh"),
    ("快速傅里叶变换", "zh"),
    ("zebrafish", "en"),
    ("傅里叶 butterfly", "zh"),
]

# Page views of the --pages run: home and every shipped topic, in both languages.
SLUGS = [
    "wave-superposition",
    "fft",
    "strided-tensors",
    "autograd",
    "dispatcher",
    "benchmarking",
    "band-gaxpy",
    "symmetric-gaxpy",
    "loop-order",
    "frank-wolfe",
]
PAGES = [f"/{lang}/" for lang in ("en", "zh")] + [
    f"/{lang}/topics/{slug}" for lang in ("en", "zh") for slug in SLUGS
]
