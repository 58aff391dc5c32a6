// whylab explorer: progressive enhancement, no framework, no third-party code.
// Every page works without this script (forms submit by GET). With it:
//  * changing an experiment parameter reruns the experiment: the server renders the
//    result fragment, we swap it in, and the URL (and the language switch) follow;
//  * the home page search and tag filter update the topic cards as you type.
"use strict";

(function () {
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

  function updatePageUrl(form, values) {
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
    history.replaceState(null, "", url);
    syncLanguageLinks();
  }

  function enhanceExperiment(form) {
    const result = document.getElementById(form.dataset.result);
    const status = form.querySelector("[data-status]");
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

    async function rerun() {
      if (firstInvalidField()) {
        return;
      }
      const values = experimentParams(form);
      const query = new URLSearchParams(Array.from(values.entries()));
      if (inFlight) {
        inFlight.abort();
      }
      const controller = new AbortController();
      inFlight = controller;
      result.setAttribute("aria-busy", "true");
      status.textContent = status.dataset.running;
      try {
        const response = await fetch(form.dataset.fragment + "?" + query.toString(), {
          headers: { Accept: "text/html" },
          signal: controller.signal,
        });
        // Errors (422 bad parameter, 429, 503, 504) come back as rendered fragments too.
        result.innerHTML = await response.text();
        updatePageUrl(form, values);
        // A check that is not applicable at these parameters is no evidence either way.
        const total = result.querySelectorAll(".check:not(.na)").length;
        const passed = result.querySelectorAll(".check.pass").length;
        status.textContent = response.ok
          ? status.dataset.done.replace("{passed}", passed).replace("{total}", total)
          : "";
      } catch (error) {
        if (error.name !== "AbortError") {
          status.textContent = String(error.message || error);
        }
      } finally {
        if (inFlight === controller) {
          inFlight = null;
          result.setAttribute("aria-busy", "false");
        }
      }
    }

    const scheduled = debounce(rerun, 300);
    form.addEventListener("input", scheduled);
    form.addEventListener("change", scheduled);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      rerun();
    });
  }

  document.querySelectorAll("form[data-fragment]").forEach(enhanceExperiment);

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
