"""Stream timelines drawn from a :class:`whylab.gpu.Device`'s record of the kernels it ran.

Each stream is a row of the chart: the line sits at the row's number while the
stream is idle and rises by ``BUSY_HEIGHT`` while one of its kernels runs.
"""

from __future__ import annotations

from whylab.explorer.experiment import LineChart, Series, T, Text
from whylab.gpu import Device

BUSY_HEIGHT = 0.7


def stream_timeline(device: Device, title: Text) -> LineChart:
    """One step series per stream that ran a kernel, x in µs of device time."""
    kernels = device.kernels
    end = max((k.end_us for k in kernels), default=0.0)
    series = []
    row = 0
    for stream in device.streams:
        own = sorted((k for k in kernels if k.stream is stream), key=lambda k: k.start_us)
        if not own:
            continue
        xs, ys = [0.0], [float(row)]
        for kernel in own:
            xs += [kernel.start_us, kernel.start_us, kernel.end_us, kernel.end_us]
            ys += [row, row + BUSY_HEIGHT, row + BUSY_HEIGHT, row]
        xs.append(end)
        ys.append(float(row))
        label = T(f"stream “{stream.name}” (row {row})", f"流“{stream.name}”（第 {row} 行）")
        series.append(Series(label, xs, ys))
        row += 1
    return LineChart(title, T("device time (µs)", "设备时间（µs）"),
                     T("stream row (raised: a kernel runs)", "流的行号（抬高处：有核函数在运行）"),
                     series)
