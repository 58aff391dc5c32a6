"""Convolution and pooling in ``nn.functional``, built from views and one matrix product.

``conv2d`` is the textbook im2col: ``unfold`` makes a strided *view* of every
patch the kernel visits (no copy), the patches are laid out as rows, and one
``matmul`` with the flattened kernel computes every output at once. Pooling
uses the same patch view and reduces each window. Gradients come from the
engine's rules for the views and the product (``unfold``'s backward adds each
patch's gradient back to the pixels it came from).
"""

from __future__ import annotations

import math

import whylab


def _pair(value, name: str) -> tuple[int, int]:
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or any(not isinstance(v, int) for v in pair):
        raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}")
    return pair


def pad(input, pad, mode: str = "constant", value: float = 0.0):
    """Pad the last ``len(pad) // 2`` dimensions: ``pad = (left, right, top, bottom, ...)``."""
    if mode != "constant":
        raise NotImplementedError(f"pad: only mode='constant' is implemented, got {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: padding length must be even and at most 2 * ndim, got {len(pad)}")
    if any(p < 0 for p in pad):
        raise NotImplementedError("pad: negative padding (cropping) is not implemented")
    shape = list(input.shape)
    slices = [slice(None)] * input.ndim
    for i in range(len(pad) // 2):
        dim = input.ndim - 1 - i
        before, after = pad[2 * i], pad[2 * i + 1]
        shape[dim] += before + after
        slices[dim] = slice(before, before + input.shape[dim])
    padded = whylab.full(tuple(shape), value, dtype=input.dtype)
    padded[tuple(slices)] = input
    return padded


def _patches(input, kernel, stride, dilation):
    """The view (N, C, out_h, out_w, kh, kw) of every window, for dilation ≥ 1."""
    span = [dilation[i] * (kernel[i] - 1) + 1 for i in range(2)]
    windows = input.unfold(2, span[0], stride[0]).unfold(3, span[1], stride[1])
    if dilation != (1, 1):
        windows = windows[..., :: dilation[0], :: dilation[1]]
    return windows


def _resolve_padding(padding, kernel, dilation, name: str) -> tuple[int, int, int, int]:
    """(left, right, top, bottom) padding; "same" may pad one side more, as torch does."""
    if padding == "valid":
        return (0, 0, 0, 0)
    if padding == "same":
        total = [dilation[i] * (kernel[i] - 1) for i in range(2)]
        top, left = total[0] // 2, total[1] // 2
        return (left, total[1] - left, top, total[0] - top)
    ph, pw = _pair(padding, name)
    return (pw, pw, ph, ph)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """2-D cross-correlation of (N, C, H, W) input with (O, C / groups, kh, kw) weight."""
    if input.ndim != 4:
        raise RuntimeError(f"conv2d: expected 4-D input (N, C, H, W), got {input.ndim}-D")
    if weight.ndim != 4:
        raise RuntimeError(f"conv2d: expected 4-D weight, got {weight.ndim}-D")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    kernel = tuple(weight.shape[2:])
    if padding == "same" and stride != (1, 1):
        raise ValueError("padding='same' is not supported for strided convolutions")
    out_channels, group_channels = weight.shape[0], weight.shape[1]
    if input.shape[1] != group_channels * groups or out_channels % groups:
        raise RuntimeError(
            f"conv2d: weight of shape {tuple(weight.shape)} with groups={groups} expects "
            f"{group_channels * groups} input channels, but got input of shape "
            f"{tuple(input.shape)}"
        )
    left, right, top, bottom = _resolve_padding(padding, kernel, dilation, "padding")
    if left or right or top or bottom:
        input = globals()["pad"](input, (left, right, top, bottom))
    for i in range(2):
        if input.shape[2 + i] < dilation[i] * (kernel[i] - 1) + 1:
            raise RuntimeError(
                f"conv2d: kernel size {kernel} (dilated) is larger than the padded input "
                f"{tuple(input.shape[2:])}"
            )
    windows = _patches(input, kernel, stride, dilation)  # (N, C, oh, ow, kh, kw)
    batch, _, out_h, out_w = windows.shape[:4]
    outputs = []
    per_group = out_channels // groups
    for g in range(groups):
        part = windows[:, g * group_channels : (g + 1) * group_channels]
        rows = part.permute(0, 2, 3, 1, 4, 5).reshape(batch * out_h * out_w, -1)
        kernels = weight[g * per_group : (g + 1) * per_group].reshape(per_group, -1)
        outputs.append(rows.matmul(kernels.t()))
    product = outputs[0] if groups == 1 else whylab.cat(outputs, 1)
    output = product.reshape(batch, out_h, out_w, out_channels).permute(0, 3, 1, 2)
    if bias is not None:
        output = output + bias.reshape(1, out_channels, 1, 1)
    return output.contiguous()


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """1-D cross-correlation of (N, C, L) input: ``conv2d`` on a height-1 image."""
    if isinstance(padding, int):
        padding = (0, padding)
    elif padding not in ("same", "valid"):
        padding = (0, padding[0])
    out = conv2d(
        input.unsqueeze(2),
        weight.unsqueeze(2),
        bias,
        (1, stride if isinstance(stride, int) else stride[0]),
        padding,
        (1, dilation if isinstance(dilation, int) else dilation[0]),
        groups,
    )
    return out.squeeze(2)


def _pool_windows(input, kernel_size, stride, padding, dilation, fill, name):
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if stride is None or stride == [] else _pair(stride, "stride")
    padding, dilation = _pair(padding, "padding"), _pair(dilation, "dilation")
    if any(2 * padding[i] > kernel[i] for i in range(2)):
        raise RuntimeError(
            f"{name}: pad should be at most half of effective kernel size, but got "
            f"pad={padding} and kernel_size={kernel}"
        )
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{name}: expected 3-D or 4-D input, got {input.ndim}-D")
    if padding != (0, 0):
        input = pad(input, (padding[1], padding[1], padding[0], padding[0]), value=fill)
    windows = _patches(input, kernel, stride, dilation) if input.ndim == 4 else None
    if windows is None:  # (C, H, W): pool as a batch of one
        windows = _patches(input.unsqueeze(0), kernel, stride, dilation).squeeze(0)
    return windows.reshape(*windows.shape[:-2], kernel[0] * kernel[1]), kernel


def max_pool2d(
    input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    """The maximum of each window (the first one, on ties, as torch's CPU kernel)."""
    if ceil_mode or return_indices:
        raise NotImplementedError("max_pool2d: ceil_mode and return_indices are not implemented")
    windows, _ = _pool_windows(
        input, kernel_size, stride, padding, dilation, -math.inf, "max_pool2d"
    )
    return windows.max(dim=-1).values


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    """The mean of each window (padding zeros counted, as torch's default)."""
    if ceil_mode:
        raise NotImplementedError("avg_pool2d: ceil_mode is not implemented")
    windows, kernel = _pool_windows(input, kernel_size, stride, padding, 1, 0.0, "avg_pool2d")
    if divisor_override is not None:
        return windows.sum(dim=-1) / divisor_override
    if not count_include_pad and _pair(padding, "padding") != (0, 0):
        ones = whylab.ones(input.shape[-2:], dtype=input.dtype).reshape(1, 1, *input.shape[-2:])
        counts, _ = _pool_windows(ones, kernel_size, stride, padding, 1, 0.0, "avg_pool2d")
        counted = counts.sum(dim=-1)  # (1, 1, out_h, out_w): the real pixels in each window
        return windows.sum(dim=-1) / counted.reshape(counted.shape[-2:])
    return windows.mean(dim=-1)


def adaptive_avg_pool2d(input, output_size):
    """Average over the windows torch uses: rows ``floor(i H / out)`` to ``ceil((i+1) H / out)``."""
    out_h, out_w = _pair(output_size, "output_size")
    height, width = input.shape[-2:]
    rows = []
    for i in range(out_h):
        top, bottom = (i * height) // out_h, -((-(i + 1) * height) // out_h)
        cells = []
        for j in range(out_w):
            left, right = (j * width) // out_w, -((-(j + 1) * width) // out_w)
            cells.append(input[..., top:bottom, left:right].mean(dim=(-2, -1)))
        rows.append(whylab.stack(cells, -1))
    return whylab.stack(rows, -2)
