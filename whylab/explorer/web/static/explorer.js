// whylab explorer: progressive enhancement, no framework, no third-party code.
// Every page works without this script (forms submit by GET). With it:
//  * submitting an experiment form runs it once: the server renders the result
//    fragment, we swap it in, and the URL (a history entry, so Back undoes it) and
//    the language switch follow; a timing experiment is queued on the server's one
//    line of measurements instead, with progress and a cancel button;
//  * "Break it" fetches a control run into the box under its form;
//  * the home page search and tag filter update the topic cards as you type;
//  * a formula or table wider than its column becomes a focusable scroll box, tables
//    that fit are not reflowed into cards, and the contents mark the section in view.
"use strict";

(function () {
  // Printing: data tables and other folded details print expanded, then fold back.
  let foldedForPrint = [];
  window.addEventListener("beforeprint", function () {
    foldedForPrint = Array.from(document.querySelectorAll("main details:not([open])"));
    foldedForPrint.forEach(function (details) {
      details.open = true;
    });
  });
  window.addEventListener("afterprint", function () {
    foldedForPrint.forEach(function (details) {
      details.open = false;
    });
    foldedForPrint = [];
  });

  // "Copy" beside an experiment's source (the button stays hidden without this script).
  function enableCopy(root) {
    root.querySelectorAll("button[data-copy]").forEach(function (button) {
      button.hidden = false;
      const label = button.textContent;
      button.addEventListener("click", async function () {
        const code = button.closest("[data-code]").querySelector("pre code").textContent;
        await navigator.clipboard.writeText(code);
        button.textContent = button.dataset.copied;
        setTimeout(function () {
          button.textContent = label;
        }, 2000);
      });
    });
  }
  enableCopy(document);

  // On the live server the source is fetched the first time its details open.
  document.querySelectorAll("details[data-source]").forEach(function (details) {
    details.addEventListener("toggle", async function () {
      if (!details.open || details.dataset.loaded) {
        return;
      }
      details.dataset.loaded = "yes";
      const response = await fetch(details.dataset.source, { headers: { Accept: "text/html" } });
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const code = page.querySelector("[data-code]");
      if (response.ok && code) {
        details.querySelector("summary ~ p").replaceWith(document.importNode(code, true));
        enableCopy(details);
      }
    });
  });

  // ---------------------------------------------------------------- chart readout
  // The value under the pointer, or stepped through with ← → on a focused chart,
  // shown in the line under the figure (a live region) and as a dot on the line.
  // Works on results swapped in later too (delegated); the data table stays the
  // full text alternative.
  function readoutFor(svg) {
    if (!svg.readout) {
      const data = JSON.parse(svg.dataset.points);
      const points = data.points.map(function ([px, py, series, x, y]) {
        const text = data.series[series] + ": " + data.x + " = " + x + ", " + data.y + " = " + y;
        return [px, py, text];
      });
      points.sort(function (a, b) {
        return a[0] - b[0];
      });
      svg.readout = { points: points, index: -1 };
    }
    return svg.readout;
  }

  function showPoint(svg, index) {
    const state = readoutFor(svg);
    if (!state.points.length) {
      return;
    }
    state.index = Math.max(0, Math.min(state.points.length - 1, index));
    const [x, y, text] = state.points[state.index];
    let dot = svg.querySelector(".readout-dot");
    if (!dot) {
      dot = document.createElementNS(svg.namespaceURI, "circle");
      dot.setAttribute("class", "readout-dot");
      dot.setAttribute("r", "4.5");
      svg.appendChild(dot);
    }
    dot.setAttribute("cx", x);
    dot.setAttribute("cy", y);
    const line = svg.closest("figure").querySelector("[data-readout]");
    if (line) {
      line.textContent = text;
    }
  }

  // A mouse moving over the plot, a tap on it, or a finger dragged along it (the
  // stylesheet leaves horizontal drags to us: touch-action pan-y) show the nearest point.
  function pointAt(event) {
    const svg = event.target.closest && event.target.closest("svg.chart[data-points]");
    if (!svg) {
      return;
    }
    const box = svg.getBoundingClientRect();
    const scale = svg.viewBox.baseVal.width / box.width;
    const px = (event.clientX - box.left) * scale;
    const py = (event.clientY - box.top) * scale;
    let best = -1;
    let bestDistance = Infinity;
    readoutFor(svg).points.forEach(function (point, index) {
      const distance = (point[0] - px) ** 2 + (point[1] - py) ** 2;
      if (distance < bestDistance) {
        best = index;
        bestDistance = distance;
      }
    });
    showPoint(svg, best);
  }
  document.addEventListener("pointermove", pointAt);
  document.addEventListener("pointerdown", pointAt);

  document.addEventListener("focusin", function (event) {
    const svg = event.target.closest && event.target.closest("svg.chart[data-points]");
    if (svg) {
      const line = svg.closest("figure").querySelector("[data-readout]");
      if (line && !line.textContent) {
        line.textContent = line.dataset.hint;
      }
    }
  });

  document.addEventListener("keydown", function (event) {
    const svg = event.target.closest && event.target.closest("svg.chart[data-points]");
    const steps = { ArrowRight: 1, ArrowLeft: -1, Home: -Infinity, End: Infinity };
    if (!svg || !(event.key in steps)) {
      return;
    }
    event.preventDefault();
    const state = readoutFor(svg);
    const step = steps[event.key];
    const next = Number.isFinite(step) ? state.index + step : step > 0 ? state.points.length - 1 : 0;
    showPoint(svg, state.index < 0 && step === 1 ? 0 : next);
  });

  // ---------------------------------------------------------------- boxes wider than the column

  // A display formula wider than its column scrolls sideways (the stylesheet draws
  // shadows at the edges it can scroll to); only then is it a tab stop, so the keyboard
  // can scroll it, instead of every formula of the page being one.
  function fitFormulas() {
    document.querySelectorAll(".math-display").forEach(function (box) {
      if (box.scrollWidth > box.clientWidth + 1) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "group");
        box.setAttribute("aria-label", document.body.dataset.formulaLabel || "");
      } else {
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    });
  }

  // On a phone the stylesheet shows a table.reflow as one card per row. That is only
  // better when the table does not fit: one that fits keeps its rows and columns.
  const phone = window.matchMedia("(max-width: 40rem)");
  function fitTables(root) {
    (root || document).querySelectorAll("table[data-reflow]").forEach(function (table) {
      table.classList.remove("reflow");
      const box = table.parentElement;
      if (phone.matches && table.offsetWidth > box.clientWidth + 1) {
        table.classList.add("reflow");
      }
    });
  }
  function markReflowCandidates(root) {
    (root || document).querySelectorAll("table.reflow").forEach(function (table) {
      table.setAttribute("data-reflow", "");
    });
    fitTables(root);
  }

  let fitTimer = null;
  function fitAll() {
    clearTimeout(fitTimer);
    fitTimer = setTimeout(function () {
      fitFormulas();
      fitTables();
    }, 100);
  }
  markReflowCandidates();
  fitFormulas();
  window.addEventListener("resize", fitAll);

  // ---------------------------------------------------------------- the section in view

  // The contents' line of the last section whose heading has passed the top fifth of
  // the window carries aria-current="location" (and the stylesheet marks it).
  const tocLinks = Array.from(document.querySelectorAll(".toc a[href^='#']"));
  const tocTargets = tocLinks.map(function (link) {
    return document.getElementById(decodeURIComponent(link.hash.slice(1)));
  });
  let spyQueued = false;
  function markSectionInView() {
    spyQueued = false;
    const line = window.innerHeight / 5;
    let current = -1;
    tocTargets.forEach(function (target, index) {
      if (target && target.getBoundingClientRect().top <= line) {
        current = index;
      }
    });
    tocLinks.forEach(function (link, index) {
      if (index === current) {
        link.setAttribute("aria-current", "location");
      } else {
        link.removeAttribute("aria-current");
      }
    });
  }
  if (tocLinks.length) {
    window.addEventListener("scroll", function () {
      if (!spyQueued) {
        spyQueued = true;
        window.requestAnimationFrame(markSectionInView);
      }
    }, { passive: true });
    markSectionInView();
  }

  // The language switch keeps the reader's #section (a shared link's, or the one a
  // contents link went to): both languages' sections share their ids.
  document.querySelectorAll("[data-lang-switch]").forEach(function (link) {
    link.addEventListener("click", function () {
      if (location.hash) {
        const url = new URL(link.href, location.href);
        url.hash = location.hash;
        link.setAttribute("href", url.pathname + url.search + url.hash);
      }
    });
  });

  if (document.body.dataset.live !== "on") {
    return; // a static export: nothing to talk to
  }

  function debounce(fn, ms) {
    let timer = null;
    return function () {
      clearTimeout(timer);
      timer = setTimeout(fn, ms);
    };
  }

  // The page URL changed under us: point the language switch and the
  // <link rel="alternate"> tags at the same place in the other language.
  function syncLanguageLinks() {
    const path = location.pathname;
    const rest = path.replace(/^\/(en|zh)(\/|$)/, "$2");
    document.querySelectorAll("[data-lang-switch]").forEach(function (link) {
      link.href = "/" + link.dataset.langSwitch + rest + location.search + location.hash;
    });
    document.querySelectorAll('link[rel="alternate"][hreflang]').forEach(function (link) {
      const hreflang = link.getAttribute("hreflang");
      if (hreflang === "x-default") {
        return;
      }
      const code = hreflang.startsWith("zh") ? "zh" : "en";
      link.href = "/" + code + rest + location.search;
    });
  }

  // ---------------------------------------------------------------- experiments

  function experimentParams(form) {
    const prefix = form.dataset.experiment + ".";
    const values = new Map(); // last value wins (a checkbox follows its hidden "false")
    for (const [key, value] of new FormData(form).entries()) {
      if (key.startsWith(prefix)) {
        values.set(key.slice(prefix.length), value);
      }
    }
    return values;
  }

  // The page URL with this experiment's parameters set to ``values``.
  function urlWith(form, values) {
    const prefix = form.dataset.experiment + ".";
    const url = new URL(location.href);
    for (const key of Array.from(url.searchParams.keys())) {
      if (key.startsWith(prefix)) {
        url.searchParams.delete(key);
      }
    }
    values.forEach(function (value, name) {
      url.searchParams.set(prefix + name, value);
    });
    return url;
  }

  // This experiment's parameters as the page URL states them (none: ``fallback``).
  function valuesFromUrl(form, fallback) {
    const prefix = form.dataset.experiment + ".";
    const values = new Map(fallback);
    new URL(location.href).searchParams.forEach(function (value, key) {
      if (key.startsWith(prefix)) {
        values.set(key.slice(prefix.length), value);
      }
    });
    return values;
  }

  function setFormValues(form, values) {
    const prefix = form.dataset.experiment + ".";
    values.forEach(function (value, name) {
      form.querySelectorAll('[name="' + CSS.escape(prefix + name) + '"]').forEach(function (el) {
        if (el.type === "checkbox") {
          el.checked = value === "true";
        } else if (el.type !== "hidden") {
          el.value = value;
        }
      });
    });
  }

  function sameValues(a, b) {
    return a.size === b.size && Array.from(a.entries()).every(([k, v]) => b.get(k) === v);
  }

  function sleep(ms) {
    return new Promise(function (resolve) {
      setTimeout(resolve, ms);
    });
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (_, key) {
      return key in values ? String(values[key]) : "";
    });
  }

  const experimentForms = [];

  function enhanceExperiment(form) {
    const section = form.closest("section");
    const result = document.getElementById(form.dataset.result);
    const status = form.querySelector("[data-status]");
    const problem = section.querySelector("[data-problem]");
    const staleNote = section.querySelector("[data-stale-note]");
    const progress = form.querySelector("[data-progress]");
    // A run that takes more than a second shows that it is still going: a bar that
    // moves and the seconds so far (not announced: the status line says "Running").
    const working = document.createElement("span");
    working.className = "run-working";
    working.setAttribute("aria-hidden", "true");
    working.hidden = true;
    working.innerHTML = "<progress></progress> <span></span>";
    status.after(working);
    const initial = experimentParams(form); // what the page was rendered with
    let generation = 0; // each run request gets a number; only the latest may write
    let inFlight = null;

    // A value that breaks its bounds is caught here, before anything is sent, and
    // answered in the page's language with the server's own wording: the data-*
    // messages are rendered from the same templates as its 422 answers. A float may
    // fall between steps (the steps only pace the arrows): the server takes any value
    // within the bounds, and so do we. An int must be written as a whole number.
    function boundMessage(field) {
      const validity = field.validity;
      if (validity.badInput || validity.valueMissing) {
        return field.dataset.notNumber;
      }
      if (field.dataset.kind === "int" && !/^\s*[+-]?\d+\s*$/.test(field.value)) {
        return field.dataset.notNumber;
      }
      if (validity.rangeUnderflow) {
        return field.dataset.below.replace("{value}", field.value);
      }
      if (validity.rangeOverflow) {
        return field.dataset.above.replace("{value}", field.value);
      }
      return "";
    }

    // Mark a field and say why under it, as the server's 422 page does (same ids),
    // or clear the mark once the value is good again.
    function showFieldError(field, message) {
      const noteId = field.id + "-error";
      let note = document.getElementById(noteId);
      const described = (field.getAttribute("aria-describedby") || "")
        .split(" ")
        .filter(function (id) {
          return id && id !== noteId;
        });
      field.setCustomValidity(message);
      field.closest(".field").classList.toggle("invalid", Boolean(message));
      if (message) {
        if (!note) {
          note = document.createElement("p");
          note.className = "field-error";
          note.id = noteId;
          field.closest(".field").appendChild(note);
        }
        note.textContent = message;
        described.push(noteId);
        field.setAttribute("aria-invalid", "true");
      } else {
        if (note) {
          note.remove();
        }
        field.removeAttribute("aria-invalid");
      }
      field.setAttribute("aria-describedby", described.join(" "));
    }

    // Check every number field; the first problem also goes to the status line.
    function firstInvalidField() {
      let first = "";
      form.querySelectorAll("input[data-kind]").forEach(function (field) {
        const message = boundMessage(field);
        showFieldError(field, message);
        first = first || message;
      });
      if (first) {
        status.textContent = first;
      }
      return Boolean(first);
    }

    // The shown result no longer matches the form (a run in flight, or one that failed).
    function markStale(stale) {
      const hasResult = result.textContent.trim() !== "";
      result.classList.toggle("stale", stale && hasResult);
      staleNote.hidden = !(stale && hasResult);
    }

    function reportDone(ok) {
      // A check that is not applicable at these parameters is no evidence either way.
      const total = result.querySelectorAll(".check:not(.na)").length;
      const passed = result.querySelectorAll(".check.pass").length;
      status.textContent = ok
        ? status.dataset.done.replace("{passed}", passed).replace("{total}", total)
        : "";
    }

    // Fetch the result fragment; a good one replaces the result, an error (422, 429,
    // 503, 504 come back as rendered fragments too) goes above the old one, marked stale.
    async function loadFragment(query, signal, mine) {
      const response = await fetch(form.dataset.fragment + "?" + query.toString(), {
        headers: { Accept: "text/html" },
        signal: signal,
      });
      const html = await response.text();
      if (mine !== generation) {
        return;
      }
      if (response.ok) {
        result.innerHTML = html;
        markReflowCandidates(result);
        problem.innerHTML = "";
        markStale(false);
      } else {
        problem.innerHTML = html;
        markStale(true);
      }
      reportDone(response.ok);
    }

    // ---- timing experiments: queue a run on the server's one line, follow it, cancel it

    function showProgress(run) {
      const bar = progress.querySelector("progress");
      const text = progress.querySelector("[data-progress-text]");
      progress.hidden = false;
      progress.dataset.runId = run.id;
      // Only whoever queued the run may cancel it (the server refuses anyone else).
      progress.querySelector("[data-cancel]").hidden = !run.yours;
      if (run.state === "running" && run.expected_s) {
        bar.max = 1;
        bar.value = Math.min(run.elapsed_s / run.expected_s, 0.99);
      } else {
        bar.removeAttribute("value"); // indeterminate
      }
      const seconds = { elapsed: run.elapsed_s.toFixed(1), ahead: run.position };
      if (run.state === "queued") {
        text.textContent = fill(progress.dataset.queued, seconds);
      } else if (run.expected_s) {
        seconds.expected = run.expected_s.toPrecision(3);
        text.textContent = fill(progress.dataset.runningExpected, seconds);
      } else {
        text.textContent = fill(progress.dataset.runningFor, seconds);
      }
    }

    async function follow(runId, query, mine) {
      while (mine === generation) {
        const response = await fetch("/api/timing-runs/" + encodeURIComponent(runId), {
          headers: { Accept: "application/json" },
        });
        if (!response.ok) {
          progress.hidden = true;
          markStale(true);
          return;
        }
        const run = await response.json();
        if (mine !== generation) {
          return;
        }
        if (run.state === "done") {
          progress.hidden = true;
          await loadFragment(query, undefined, mine);
          return;
        }
        if (run.state === "cancelled" || run.state === "failed") {
          progress.hidden = true;
          status.textContent =
            run.state === "cancelled" ? progress.dataset.cancelled : run.message;
          markStale(true);
          return;
        }
        showProgress(run);
        await sleep(400);
      }
    }

    async function measure(query, mine) {
      const response = await fetch(form.dataset.timingRuns + "?" + query.toString(), {
        method: "POST",
        headers: { Accept: "application/json" },
      });
      const run = await response.json();
      if (!response.ok) {
        status.textContent = run.detail;
        markStale(true);
        return;
      }
      showProgress(run);
      await follow(run.id, query, mine);
    }

    async function rerun() {
      if (firstInvalidField()) {
        return;
      }
      const values = experimentParams(form);
      const query = new URLSearchParams(Array.from(values.entries()));
      const mine = ++generation;
      if (inFlight) {
        inFlight.abort();
      }
      const controller = new AbortController();
      inFlight = controller;
      result.setAttribute("aria-busy", "true");
      status.textContent = status.dataset.running;
      // Most runs answer within a few hundred milliseconds: only a slower one is marked
      // outdated meanwhile (the note overlays the result, so nothing moves), and only one
      // past a second shows the bar and the seconds.
      const started = performance.now();
      const staleLater = setTimeout(function () {
        if (mine === generation) {
          markStale(true);
        }
      }, 400);
      const clock = setInterval(function () {
        const seconds = (performance.now() - started) / 1000;
        if (seconds >= 1 && mine === generation && !form.dataset.timingRuns) {
          working.hidden = false;
          working.lastChild.textContent = seconds.toFixed(0) + " s";
        }
      }, 250);
      try {
        if (form.dataset.timingRuns) {
          await measure(query, mine);
        } else {
          await loadFragment(query, controller.signal, mine);
        }
      } catch (error) {
        if (error.name !== "AbortError" && mine === generation) {
          status.textContent = String(error.message || error);
          markStale(true);
        }
      } finally {
        clearTimeout(staleLater);
        clearInterval(clock);
        if (inFlight === controller) {
          inFlight = null;
          working.hidden = true;
          result.setAttribute("aria-busy", "false");
        }
      }
    }

    // A field is judged when the reader leaves it (change) or submits, never per
    // keystroke; typing only clears a mark once the value is good again.
    form.querySelectorAll("input[data-kind]").forEach(function (field) {
      field.addEventListener("change", function () {
        showFieldError(field, boundMessage(field));
      });
      field.addEventListener("input", function () {
        if (field.getAttribute("aria-invalid") && !boundMessage(field)) {
          showFieldError(field, "");
        }
      });
    });

    // A float's slider moves with its box, and the box with it; on a log scale the travel
    // is the logarithm of the value. When the slider rests for a moment an experiment that
    // measures no time reruns by itself (a timing one waits for Measure).
    form.querySelectorAll("input[data-slider-for]").forEach(function (slider) {
      const box = document.getElementById(slider.dataset.sliderFor);
      const low = Number(box.min);
      const high = Number(box.max);
      const log = slider.dataset.scale === "log";
      if (log) {
        slider.min = "0";
        slider.max = "1000";
        slider.step = "1";
      }
      const toSlider = function (value) {
        return log ? (1000 * Math.log(value / low)) / Math.log(high / low) : value;
      };
      const fromSlider = function (position) {
        const value = log ? low * Math.pow(high / low, position / 1000) : position;
        const step = Number(box.step) || 0;
        const snapped = step ? Math.round(value / step) * step : value;
        return Math.min(high, Math.max(low, snapped));
      };
      const follow = function () {
        if (box.value !== "" && !boundMessage(box)) {
          slider.value = String(toSlider(Number(box.value)));
        }
      };
      follow();
      slider.hidden = false;
      box.addEventListener("input", follow);
      const runWhenResting = debounce(function () {
        if (!form.dataset.timingRuns) {
          form.requestSubmit();
        }
      }, 350);
      slider.addEventListener("input", function () {
        const value = fromSlider(Number(slider.value));
        // As many decimals as the step has; with no step, three significant digits.
        box.value = Number(box.step)
          ? value.toFixed(Math.min((box.step.split(".")[1] || "").length, 10))
          : String(Number(value.toPrecision(3)));
        if (box.getAttribute("aria-invalid")) {
          showFieldError(box, "");
        }
        runWhenResting();
      });
    });

    // One run per submit (Enter or the button); each submit is a history entry,
    // so Back undoes it.
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (firstInvalidField()) {
        return;
      }
      const url = urlWith(form, experimentParams(form));
      if (url.href !== location.href) {
        history.pushState({ whylab: true }, "", url);
        syncLanguageLinks();
      }
      rerun();
    });

    if (progress) {
      progress.querySelector("[data-cancel]").addEventListener("click", function () {
        const runId = progress.dataset.runId;
        if (runId) {
          fetch("/api/timing-runs/" + encodeURIComponent(runId), { method: "DELETE" });
        }
      });
      if (progress.dataset.runId) {
        // A run was already under way when the page was rendered: follow it.
        const query = new URLSearchParams(Array.from(initial.entries()));
        follow(progress.dataset.runId, query, ++generation);
      }
    }

    experimentForms.push({
      // Back or Forward: show the parameters that URL names, and their result.
      restore: function () {
        const values = valuesFromUrl(form, initial);
        if (sameValues(values, experimentParams(form))) {
          return;
        }
        setFormValues(form, values);
        if (form.dataset.timingRuns) {
          // Show the latest measurement at those parameters; never start one.
          const mine = ++generation;
          loadFragment(new URLSearchParams(Array.from(values.entries())), undefined, mine);
        } else {
          rerun();
        }
      },
    });
  }

  window.addEventListener("popstate", function () {
    syncLanguageLinks();
    experimentForms.forEach(function (entry) {
      entry.restore();
    });
  });

  document.querySelectorAll("form[data-fragment]").forEach(enhanceExperiment);

  // ---------------------------------------------------------------- "Break it"

  // A control run is fetched into the box under its form (without this script the form
  // opens the control run's own page). It never touches the block's real result, the
  // page URL or the history: it is not a state of the page.
  function enhanceBreakIt(form) {
    const box = form.parentElement.querySelector("[data-control-result]");
    if (!box) {
      return;
    }
    const status = form.querySelector("[data-control-status]");
    const select = form.querySelector("select");
    let inFlight = null;
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      if (inFlight) {
        inFlight.abort();
      }
      const controller = new AbortController();
      inFlight = controller;
      const query = new URLSearchParams({ control: select.value });
      status.textContent = form.dataset.running;
      box.setAttribute("aria-busy", "true");
      try {
        const response = await fetch(form.dataset.controlFragment + "?" + query.toString(), {
          headers: { Accept: "text/html" },
          signal: controller.signal,
        });
        const html = await response.text();
        box.innerHTML = html;
        markReflowCandidates(box);
        const counts = box.querySelector("[data-declared]");
        status.textContent = counts
          ? fill(form.dataset.done, { failed: counts.dataset.failed, declared: counts.dataset.declared })
          : "";
      } catch (error) {
        if (error.name !== "AbortError") {
          status.textContent = String(error.message || error);
        }
      } finally {
        if (inFlight === controller) {
          inFlight = null;
          box.setAttribute("aria-busy", "false");
        }
      }
    });
  }

  document.querySelectorAll("form[data-control-fragment]").forEach(enhanceBreakIt);

  // ---------------------------------------------------------------- contents

  // The contents are open in the HTML; on a narrow screen they fold away until
  // asked for, and following one of their links folds them again. On a wide
  // screen they stay open beside the article (the stylesheet makes them sticky).
  const toc = document.querySelector("details[data-toc]");
  if (toc) {
    const narrow = window.matchMedia("(max-width: 63.99rem)");
    const fit = function () {
      toc.open = !narrow.matches;
    };
    fit();
    narrow.addEventListener("change", fit);
    toc.addEventListener("click", function (event) {
      if (event.target.closest("a") && narrow.matches) {
        toc.open = false;
      }
    });
    toc.querySelector("summary").addEventListener("click", function (event) {
      if (!narrow.matches) {
        event.preventDefault(); // beside the article it is always open
      }
    });
  }

  // ---------------------------------------------------------------- search and tags

  const searchForm = document.querySelector("form[data-live-search]");
  const cards = document.querySelector("[data-cards]");
  if (searchForm && cards) {
    const input = searchForm.querySelector('input[name="q"]');
    let tag = new URL(location.href).searchParams.get("tag") || "";
    let inFlight = null;

    async function refresh() {
      const query = new URLSearchParams();
      if (input.value.trim()) {
        query.set("q", input.value.trim());
      }
      if (tag) {
        query.set("tag", tag);
      }
      if (inFlight) {
        inFlight.abort();
      }
      const controller = new AbortController();
      inFlight = controller;
      try {
        const response = await fetch(searchForm.dataset.liveSearch + "?" + query.toString(), {
          headers: { Accept: "text/html" },
          signal: controller.signal,
        });
        cards.innerHTML = await response.text();
        // Announce the outcome (the heading: "Topics matching ..." or the empty state),
        // not the whole list of cards.
        const announce = document.querySelector("[data-cards-status]");
        const empty = cards.querySelector(".empty-title");
        const heading = cards.querySelector("h2");
        announce.textContent = (empty || heading).textContent.trim();
        const url = new URL(location.href);
        url.search = query.toString();
        history.replaceState(null, "", url);
        syncLanguageLinks();
      } catch (error) {
        if (error.name !== "AbortError") {
          cards.setAttribute("data-error", String(error.message || error));
        }
      }
    }

    function showActiveTag() {
      document.querySelectorAll(".tag-filter a[data-tag]").forEach(function (link) {
        if (link.dataset.tag === tag) {
          link.setAttribute("aria-current", "true");
        } else {
          link.removeAttribute("aria-current");
        }
      });
      let hidden = searchForm.querySelector('input[name="tag"]');
      if (tag && !hidden) {
        hidden = document.createElement("input");
        hidden.type = "hidden";
        hidden.name = "tag";
        searchForm.querySelector(".search-row").appendChild(hidden);
      }
      if (hidden) {
        if (tag) {
          hidden.value = tag;
        } else {
          hidden.remove();
        }
      }
    }

    input.addEventListener("input", debounce(refresh, 250));
    searchForm.addEventListener("submit", function (event) {
      event.preventDefault();
      refresh();
    });
    document.querySelectorAll(".tag-filter a[data-tag]").forEach(function (link) {
      link.addEventListener("click", function (event) {
        event.preventDefault();
        tag = link.dataset.tag;
        showActiveTag();
        refresh();
      });
    });
  }
})();
