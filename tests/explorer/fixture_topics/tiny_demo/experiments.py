"""Experiments of the tests' fixture topic: small, fast, and some deliberately misbehaving."""

from __future__ import annotations

import math
import time

import numpy as np

from whylab.explorer.experiment import (
    Check,
    Control,
    GraphDiagram,
    GraphNode,
    LineChart,
    Metric,
    Param,
    Result,
    Series,
    T,
    Table,
    control_active,
    experiment,
    report_progress,
)


@experiment(
    name="sine",
    title=T("A sampled sine wave", "采样的正弦波"),
    description=T("Energy is the same before and after the DFT.", "DFT 前后能量相同。"),
    params=[
        Param(
            "amplitude",
            "float",
            1.0,
            T("Amplitude", "振幅"),
            unit="V",
            minimum=0.1,
            maximum=10.0,
            step=0.1,
            help=T("Peak value", "峰值"),
        ),
        Param("cycles", "int", 2, T("Cycles", "周期数"), minimum=1, maximum=20),
        Param("samples", "int", 64, T("Samples", "采样点数"), minimum=8, maximum=2048),
        Param(
            "noise",
            "choice",
            "none",
            T("Noise", "噪声"),
            choices=("none", "gauss"),
            choice_labels=(T("none", "无"), T("Gaussian", "高斯")),
        ),
        Param("log_y", "bool", False, T("Log scale for |X|", "|X| 用对数坐标")),
        Param(
            "seed", "int", 0, T("Random seed", "随机种子"), minimum=0, maximum=1_000_000, seed=True
        ),
    ],
    metrics=[
        Metric("energy", T("Signal energy", "信号能量"), "V²"),
        Metric("peak_bin", T("Peak frequency bin", "峰值频点")),
    ],
)
def sine(amplitude, cycles, samples, noise, log_y, seed):
    n = np.arange(samples)
    x = amplitude * np.sin(2 * np.pi * cycles * n / samples)
    if noise == "gauss":
        x = x + np.random.default_rng(seed).normal(0.0, 0.1 * amplitude, samples)
    spectrum = np.fft.fft(x)
    time_energy = float(np.sum(x**2))
    freq_energy = float(np.sum(np.abs(spectrum) ** 2) / samples)
    relative = abs(time_energy - freq_energy) / time_energy
    magnitude = np.abs(spectrum[: samples // 2]) + 1e-12
    return Result(
        checks=[
            Check(
                T("Parseval: energy is kept", "帕塞瓦尔：能量守恒"),
                relative < 1e-9,
                f"{relative:.1e}",
                "< 1e-9",
            ),
        ],
        figures=[
            LineChart(
                T("Signal", "信号"),
                T("sample n", "采样 n"),
                T("x[n] (V)", "x[n]（V）"),
                [Series(T("x", "x"), n.tolist(), x.tolist())],
            ),
            LineChart(
                T("Spectrum", "频谱"),
                T("bin k", "频点 k"),
                T("|X_k|", "|X_k|"),
                [Series(T("|X|", "|X|"), list(range(samples // 2)), magnitude.tolist())],
                log_y=log_y,
            ),
        ],
        tables=[
            Table(
                T("Energy", "能量"),
                [T("domain", "域"), T("energy", "能量")],
                [[T("time", "时域"), time_energy], [T("frequency", "频域"), freq_energy]],
            )
        ],
        metrics={"energy": time_energy, "peak_bin": int(np.argmax(magnitude))},
    )


@experiment(
    name="mean",
    title=T("Running mean of uniform samples", "均匀样本的滑动平均"),
    description=T("The mean approaches 1/2 (plus the bias).", "平均值趋近 1/2（加上偏移）。"),
    params=[
        Param("n", "int", 2000, T("Samples", "样本数"), minimum=10, maximum=200_000),
        Param(
            "bias",
            "float",
            0.0,
            T("Bias added to the claim's data", "加在数据上的偏移"),
            minimum=-1.0,
            maximum=1.0,
            step=0.01,
        ),
        Param(
            "seed", "int", 7, T("Random seed", "随机种子"), minimum=0, maximum=1_000_000, seed=True
        ),
    ],
    controls=[
        Control(
            "biased-samples",
            T("the samples are shifted by +0.05", "样本整体偏移 +0.05"),
            breaks=("mean-is-half", "late-means-within-bound"),
        )
    ],
)
def mean(n, bias, seed):
    rng = np.random.default_rng(seed)
    chunks = 10
    samples = []
    for index in range(chunks):
        samples.append(rng.random(n // chunks + (1 if index < n % chunks else 0)) + bias)
        if control_active("biased-samples"):
            samples[-1] += 0.05
        report_progress((index + 1) / chunks)
    data = np.concatenate(samples)
    running = np.cumsum(data) / np.arange(1, n + 1)
    bound = 4 * math.sqrt(1 / 12) / math.sqrt(n)
    error = abs(float(running[-1]) - 0.5)
    picks = np.unique(np.geomspace(1, n, 60).astype(int)) - 1
    late_name = T(
        "Every mean after 1000 samples is within 4σ/√k", "1000 个样本之后每个平均值都在 4σ/√k 内"
    )
    if n < 1000:
        late = Check.not_applicable(
            id="late-means-within-bound",
            name=late_name,
            expected="≤ 4σ/√k",
            why=T("needs n ≥ 1000 samples", "需要 n ≥ 1000 个样本"),
        )
    else:
        k = np.arange(1000, n + 1)
        worst = float(np.max(np.abs(running[999:] - 0.5) * np.sqrt(k) / math.sqrt(1 / 12)))
        late = Check(
            late_name,
            worst <= 4.0,
            f"max |mean - 0.5|·√k/σ = {worst:.2f}",
            "≤ 4",
            id="late-means-within-bound",
        )
    return Result(
        checks=[
            Check(
                T("Mean is 1/2 within 4σ/√n", "平均值在 4σ/√n 内等于 1/2"),
                error <= bound,
                f"|mean - 0.5| = {error:.2e}",
                f"<= {bound:.2e}",
                id="mean-is-half",
            ),
            late,
        ],
        figures=[
            LineChart(
                T("Running mean", "滑动平均"),
                T("n", "n"),
                T("mean", "平均值"),
                [
                    Series(T("mean", "平均值"), (picks + 1).tolist(), running[picks].tolist()),
                    Series(T("1/2", "1/2"), [1, n], [0.5, 0.5]),
                ],
                log_x=True,
            )
        ],
        metrics={"mean": float(running[-1])},
    )


@experiment(
    name="graph",
    title=T("Expression graph of y = a·b + sin(a)", "y = a·b + sin(a) 的表达式图"),
    description=T("Nodes are values, edges feed them forward.", "节点是值，边表示前向的依赖。"),
)
def graph():
    nodes = [
        GraphNode("a", "a", "leaf", "input"),
        GraphNode("b", "b", "leaf", "input"),
        GraphNode("mul", "mul", "a·b", "op"),
        GraphNode("sin", "sin", "sin(a)", "op"),
        GraphNode("add", "add", "y", "op"),
    ]
    edges = [
        ("a", "mul", "0"),
        ("b", "mul", "1"),
        ("a", "sin", "0"),
        ("mul", "add", "0"),
        ("sin", "add", "1"),
        ("a", "add", "skip"),
    ]
    inputs = {target for _, target, _ in edges}
    return Result(
        checks=[
            Check(
                T("Every op has an input", "每个运算都有输入"),
                all(n.id in inputs for n in nodes if n.group == "op"),
                T(f"{len(inputs)} nodes with inputs", f"{len(inputs)} 个节点有输入"),
                T("3 ops", "3 个运算"),
            )
        ],
        figures=[GraphDiagram(T("Forward graph", "前向图"), nodes, edges)],
    )


@experiment(
    name="sleepy",
    title=T("Sleep", "休眠"),
    description=T("Sleeps; tests the time limit.", "休眠；用于测试时间限制。"),
    params=[
        Param("seconds", "float", 0.01, T("Seconds", "秒数"), unit="s", minimum=0.0, maximum=30.0)
    ],
    time_limit_s=1.0,
)
def sleepy(seconds):
    started = time.perf_counter()
    time.sleep(seconds)
    slept = time.perf_counter() - started
    return Result(
        checks=[
            Check(
                T("Slept long enough", "休眠时间足够"),
                slept >= seconds,
                f"{slept:.3f} s",
                f">= {seconds} s",
            )
        ]
    )


@experiment(
    name="hog",
    title=T("Allocate memory", "分配内存"),
    description=T("Allocates an array; tests the memory limit.", "分配数组；用于测试内存限制。"),
    params=[
        Param(
            "megabytes", "int", 1, T("Megabytes", "兆字节"), unit="MiB", minimum=1, maximum=100_000
        )
    ],
    time_limit_s=10.0,
)
def hog(megabytes):
    data = np.ones(megabytes * 1024 * 1024 // 8)
    total = float(data.sum())
    return Result(
        checks=[
            Check(T("Sum of ones", "全 1 之和"), total == data.size, f"{total:.0f}", f"{data.size}")
        ]
    )


@experiment(
    name="clock",
    title=T("Time a loop", "给循环计时"),
    description=T("A live timing; never cached.", "实时计时；从不缓存。"),
    params=[Param("n", "int", 1000, T("Iterations", "迭代次数"), minimum=1, maximum=100_000)],
    timing=True,
    metrics=[
        Metric("seconds", T("Time", "耗时"), "s"),
        Metric("ns_per_iteration", T("Time per iteration", "每次迭代耗时"), "ns"),
    ],
)
def clock(n):
    started = time.perf_counter()
    total = 0
    for i in range(n):
        total += i
    elapsed = time.perf_counter() - started
    return Result(
        checks=[
            Check(
                T("Loop sum", "循环求和"),
                total == n * (n - 1) // 2,
                str(total),
                str(n * (n - 1) // 2),
            )
        ],
        metrics={"seconds": elapsed, "ns_per_iteration": elapsed / n * 1e9},
    )


EXPERIMENTS = [sine, mean, graph, sleepy, hog, clock]
