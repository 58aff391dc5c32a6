"""The explorer's own interface text, in English and Chinese.

Topic text lives in the topic folders; this module holds only the words of the
interface around it (buttons, labels, messages). Templates call ``t("key")``.
"""

from __future__ import annotations

from whylab.explorer.experiment import Experiment, Lang, Param, ParamError, T, Text

LANG_NAMES: dict[Lang, str] = {"en": "English", "zh": "中文"}

UI: dict[str, Text] = {
    "site_name": T("whylab", "whylab"),
    "tagline": T(
        "How machine-learning systems and numerical code really work",
        "机器学习系统与数值代码究竟如何运作",
    ),
    "site_description": T(
        "Questions about machine-learning systems and numerical code, each answered with "
        "equations, diagrams drawn from real computation, and experiments that check their "
        "own claims on every run.",
        "关于机器学习系统与数值代码的一个个问题，每个都用公式、由真实计算画出的图示，以及每次"
        "运行都现场验证自身结论的实验来回答。",
    ),
    "skip_to_content": T("Skip to content", "跳到正文"),
    "hero_title": T("Begin with a question.", "从一个问题开始。"),
    "hero_text": T(
        "Every topic starts from a question and answers it three ways: with equations, with "
        "diagrams drawn from real computation, and with experiments you can rerun. Each "
        "experiment checks its own claims, live, on every run.",
        "每个主题都从一个问题出发，用三种方式回答它：公式、由真实计算画出的图示，以及你可以"
        "亲手重新运行的实验。每个实验在每次运行时都会现场验证它自己的结论。",
    ),
    "search_label": T("Search topics", "搜索主题"),
    "search_placeholder": T("e.g. phase, FFT, 梯度", "例如：相位、FFT、gradient"),
    "search_button": T("Search", "搜索"),
    "search_unavailable": T(
        "Search needs the live explorer (whylab serve).",
        "搜索需要在线运行的 explorer（whylab serve）。",
    ),
    "filter_by_tag": T("Filter by tag", "按标签筛选"),
    "all_topics": T("All topics", "全部主题"),
    "topics_heading": T("Topics", "主题"),
    "found_in_section": T("Found in", "见于小节"),
    "results_for": T("Topics matching “{query}”", "与“{query}”相关的主题"),
    "tagged": T("Topics tagged “{tag}”", "标签为“{tag}”的主题"),
    "topic_count": T("{count} topics", "共 {count} 个主题"),
    "empty_title": T("No topic matches “{query}”.", "没有找到与“{query}”相关的主题。"),
    "empty_text": T(
        "Try another keyword, or explore a different topic:",
        "换一个关键词试试，或者去看看别的主题：",
    ),
    "empty_tag": T("No topic has this tag.", "没有主题带有这个标签。"),
    "read_in_other": T("阅读中文版", "Read in English"),  # the link is in the other language
    "question": T("The question", "问题"),
    "contents": T("Contents", "目录"),
    "formula_scrolls": T("Formula, wider than the page: scroll sideways",
                         "公式比页面宽，可左右滚动"),
    "other_topics": T("Previous and next topic", "上一个和下一个主题"),
    "previous_topic": T("Previous topic", "上一个主题"),
    "next_topic": T("Next topic", "下一个主题"),
    "back_to_top": T("Back to top", "回到顶部"),
    "tags": T("Tags", "标签"),
    "home": T("Home", "首页"),
    "breadcrumb": T("Breadcrumb", "导航路径"),
    "language": T("Language", "语言"),
    "parameters": T("Parameters", "参数"),
    "run": T("Run", "运行"),
    "range": T("from {min} to {max}", "范围 {min} 至 {max}"),
    # Punctuation between interface words: Chinese text takes fullwidth forms.
    "colon": T(": ", "："),
    "comma": T(", ", "，"),
    "in_parentheses": T(" ({text})", "（{text}）"),
    "running": T("Running…", "运行中…"),
    "run_done": T(
        "Updated: {passed} of {total} checks passed.", "已更新：{total} 项验证中 {passed} 项通过。"
    ),
    "checks": T("Checks", "验证"),
    # The one line the checks fold behind (whylab.explorer.web.check_summary).
    "checks_summary": T("{passed} of {total} checks passed", "{total} 项验证中 {passed} 项通过"),
    "checks_summary_one": T("{passed} of 1 check passed", "1 项验证中 {passed} 项通过"),
    "summary_failed": T("{count} failed", "{count} 项未通过"),
    "summary_not_applicable": T("{count} not applicable", "{count} 项不适用"),
    "summary_inconclusive": T("{count} inconclusive", "{count} 项无法判定"),
    # "Break it": an experiment run under one of its declared negative controls.
    "break_it": T("Break it", "让它出错"),
    "break_it_legend": T(
        "Break it: watch a check fail under a negative control",
        "让它出错：看看阴性对照下哪些验证不成立",
    ),
    "break_it_help": T(
        "Runs the experiment once with a deliberate fault switched on, at the parameters the "
        "control declares (not the ones above). The result is not the experiment's and is "
        "never cached.",
        "在故意引入一个错误的情况下把实验运行一次，参数取这个对照声明的那一组（而不是上面填写的）。"
        "这样得到的不是实验的真实结果，也从不缓存。",
    ),
    "control_choice": T("Negative control", "阴性对照"),
    "control_run_title": T(
        "Control run: {control} — not the real result", "对照运行：{control}——不是真实结果"
    ),
    "control_run_note": T(
        "A deliberate fault was switched on for this run. Its checks show whether the claims "
        "catch it; the real result is the one above.",
        "这次运行故意引入了一个错误。下面的验证显示各项结论能否发现它；真实结果是上面那一个。",
    ),
    "control_run_page_note": T(
        "A deliberate fault was switched on for this run. Its checks show whether the claims "
        "catch it; the real result is on the topic page.",
        "这次运行故意引入了一个错误。下面的验证显示各项结论能否发现它；真实结果在主题页面上。",
    ),
    "control_declared": T(
        "This control is declared to break {declared} of the checks (marked below); "
        "{failed} of them failed in this run.",
        "这个对照声明会让其中 {declared} 项验证不成立（下方已标出）；"
        "本次运行中它们有 {failed} 项未通过。",
    ),
    "control_run_meta": T(
        "control run, computed in {seconds} s, never cached",
        "对照运行，用时 {seconds} 秒，从不缓存",
    ),
    "control_run_done": T(
        "Control run done: {failed} of {declared} declared checks failed.",
        "对照运行完成：声明的 {declared} 项验证中 {failed} 项未通过。",
    ),
    "control_breaks_this": T("this control targets it", "此对照针对这一项"),
    "back_to_real_result": T("Back to the real result", "回到真实结果"),
    "no_such_control": T(
        "This experiment has no negative control of that name.", "这个实验没有这个名字的阴性对照。"
    ),
    "passed": T("passed", "通过"),
    "failed": T("failed", "未通过"),
    "not_applicable": T("not applicable at these parameters", "在这组参数下不适用"),
    "inconclusive": T(
        "inconclusive on this machine now (no evidence either way; run it again)",
        "在本机此刻无法判定（不算证据；可重新运行）",
    ),
    "fails_if": T(
        "What would make this fail (checked by a negative control)",
        "什么会让它不成立（已由阴性对照验证）",
    ),
    "yes": T("yes", "是"),
    "no": T("no", "否"),
    "measured": T("measured", "实测"),
    "expected": T("expected", "预期"),
    "metrics": T("Measurements", "测量值"),
    "data_table": T("Data table", "数据表"),
    "nodes": T("Nodes", "节点"),
    "edges": T("Edges", "边"),
    "node": T("Node", "节点"),
    "detail": T("Detail", "详情"),
    "group": T("Group", "分组"),
    "from": T("From", "起点"),
    "to": T("To", "终点"),
    "label": T("Label", "标注"),
    "series": T("Series", "数据系列"),
    "rows_shown": T(
        "Showing the first {shown} of {total} rows; the JSON API has all of them.",
        "仅显示前 {shown} 行（共 {total} 行）；完整数据见 JSON 接口。",
    ),
    "engine": T("Engine", "引擎"),
    "params_used": T("Parameters", "参数"),
    "from_cache": T("result from cache", "结果来自缓存"),
    "computed_in": T("computed in {seconds} s", "用时 {seconds} 秒"),
    "measured_at_export": T(
        "measured once when this copy was made, {seconds} s", "生成本副本时测量一次，{seconds} 秒"
    ),
    "measure": T("Measure", "测量"),
    "cancel": T("Cancel", "取消"),
    "timing_prompt": T(
        "This experiment measures speed, so it runs only when you ask, one measurement at a "
        "time on this server. No measurement at these parameters yet: press Measure.",
        "这个实验测量的是速度，所以只在你要求时运行，并且本服务器一次只做一个测量。"
        "这组参数还没有测量结果：请点击“测量”。",
    ),
    # A timing block's measurement, by Measurement.kind: a reader asked for it, a reader
    # asked again where one was shown, or the server made it after it started.
    "measured_asked": T(
        "live measurement on this server at {when} ({machine}), {seconds} s",
        "本服务器上的实时测量，{when}（{machine}），{seconds} 秒",
    ),
    "measured_again": T(
        "live measurement on this server, measured again at {when} ({machine}), {seconds} s",
        "本服务器上的实时测量，{when} 重新测量（{machine}），{seconds} 秒",
    ),
    "measured_background": T(
        "live measurement on this server, made at its defaults after the server started, "
        "at {when} ({machine}), {seconds} s; press Measure to measure again",
        "本服务器上的实时测量：服务器启动后按默认参数自动测量，{when}（{machine}），{seconds} 秒；"
        "点击“测量”可重新测量",
    ),
    "timing_queued": T(
        "Waiting for its turn: {ahead} measurement(s) ahead.",
        "排队等待：前面还有 {ahead} 个测量。",
    ),
    "timing_running": T("Measuring… {elapsed} s so far.", "测量中…已用 {elapsed} 秒。"),
    "timing_running_expected": T(
        "Measuring… {elapsed} s so far (the last run took {expected} s).",
        "测量中…已用 {elapsed} 秒（上一次用了 {expected} 秒）。",
    ),
    "timing_cancelled": T(
        "Cancelled. A measurement already under way finishes in its worker before the next "
        "one starts; its result is discarded.",
        "已取消。已经开始的测量会在后台进程中跑完（结果丢弃），之后才开始下一个。",
    ),
    "timing_progress": T("Measurement progress", "测量进度"),
    "stale_note": T(
        "Outdated: this result is for the previous parameters.",
        "已过时：这是上一组参数的结果。",
    ),
    "readout_hint": T(
        "Chart values: point at a line, or focus the chart and use ← →.",
        "图中数值：把指针移到曲线上，或聚焦图表后按 ← →。",
    ),
    "show_code": T("Show the code that ran", "查看实际运行的代码"),
    # A timing block may show no measurement yet: it says what a measurement runs.
    "show_code_timing": T("Show the code a measurement runs", "查看测量时运行的代码"),
    "code_location": T(
        "The function that computed these results, read from the running server: "
        "{path}, line {line}.",
        "计算出这些结果的函数，取自正在运行的服务器：{path}，第 {line} 行。",
    ),
    "open_notebook": T("Open as a notebook (.ipynb)", "下载为 Jupyter 笔记本（.ipynb）"),
    "copy": T("Copy", "复制"),
    "copied": T("Copied", "已复制"),
    "permalink": T("Permalink", "永久链接"),
    "json": T("JSON", "JSON"),
    "static_note": T(
        "This is a static copy: the experiment ran once at its default parameters.",
        "这是静态副本：实验只以默认参数运行过一次。",
    ),
    "static_live_link": T("Run it live", "在线运行"),
    "static_serve_hint": T(
        "To change parameters, run the explorer yourself: whylab serve",
        "如需修改参数，请在本地运行：whylab serve",
    ),
    "error_title": T("Something went wrong", "出错了"),
    "not_found": T("This page does not exist.", "这个页面不存在。"),
    "not_found_title": T("Page not found", "找不到这个页面"),
    "did_you_mean": T("Did you mean", "您要找的是不是"),
    "question_mark": T("?", "？"),
    "bad_params": T("Some parameters are not valid:", "部分参数无效："),
    "rate_limited": T(
        "You have used your share of experiment time for now; please wait {seconds} s.",
        "你暂时用完了可用的实验计算时间，请等待 {seconds} 秒。",
    ),
    "experiment_error": T("The experiment did not finish:", "实验未能完成："),
    "not_run": T("Not run:", "未运行："),
    "not_run_see_field": T(
        "Not run: correct the parameter marked above, then run again.",
        "未运行：请先改正上面标出的参数，再重新运行。",
    ),
    # A bad parameter, worded the same by the server (422 pages) and the page script.
    "param_below": T(
        "{label}: must be ≥ {bound} (got {value})", "{label}：必须 ≥ {bound}（当前值 {value}）"
    ),
    "param_above": T(
        "{label}: must be ≤ {bound} (got {value})", "{label}：必须 ≤ {bound}（当前值 {value}）"
    ),
    "param_not_int": T("{label}: must be a whole number", "{label}：必须是整数"),
    "param_not_float": T("{label}: must be a number", "{label}：必须是数字"),
    "param_not_finite": T("{label}: must be a finite number", "{label}：必须是有限的数"),
    "param_not_choice": T("{label}: must be one of {choices}", "{label}：必须是 {choices} 之一"),
    "param_not_bool": T("{label}: must be true or false", "{label}：必须是 true 或 false"),
    "param_unknown": T("{label}: unknown parameter", "{label}：未知参数"),
    # Query-string problems of a whole topic page (422).
    "too_many_params": T("Too many parameters (at most {limit}).", "参数过多（最多 {limit} 个）。"),
    "param_repeated": T(
        "{name}: given more than once (give each parameter once).",
        "{name}：重复给出（每个参数只能给一次）。",
    ),
    "footer": T(
        "whylab {version}. Equations are rendered as MathML on the server; every chart has a "
        "data table.",
        "whylab {version}。公式在服务器端渲染为 MathML；每张图都附有数据表。",
    ),
    "api_link": T("JSON API", "JSON 接口"),
    "other_language_name": T("中文", "English"),
}


def translate(key: str, lang: Lang, **values: object) -> str:
    """The interface string ``key`` in ``lang``, with ``{placeholders}`` filled in."""
    text = UI[key].get(lang)
    return text.format(**values) if values else text


def param_error_message(error: ParamError, experiment: Experiment, lang: Lang) -> str:
    """``error`` in ``lang``, naming the parameter by its label and the bound it broke."""
    param = next((p for p in experiment.params if p.name == error.param), None)
    if param is None:
        return translate("param_unknown", lang, label=error.param)
    values = {
        "label": param.label.get(lang),
        "value": error.raw,
        "bound": param.show(error.bound) if error.bound is not None else "",
        "choices": ", ".join(param.choices),
    }
    return translate(f"param_{error.reason}", lang, **values)


def bound_messages(param: Param, lang: Lang) -> dict[str, str]:
    """The messages the page script shows for a number field, with ``{value}`` left to fill.

    The same templates as :func:`param_error_message`, so a value caught in the
    browser reads exactly as the server would have answered it.
    """
    assert param.minimum is not None and param.maximum is not None
    label = param.label.get(lang)
    not_number = "param_not_int" if param.kind == "int" else "param_not_float"
    return {
        "below": translate(
            "param_below", lang, label=label, bound=param.show(param.minimum), value="{value}"
        ),
        "above": translate(
            "param_above", lang, label=label, bound=param.show(param.maximum), value="{value}"
        ),
        "not-number": translate(not_number, lang, label=label),
    }


def other_lang(lang: Lang) -> Lang:
    return "zh" if lang == "en" else "en"
