"""Mutation testing of the topics' checks: bugs nobody chose, caught or not.

A negative control is a wrong answer the topic's author expected; a *mutant* is one
nobody expected: the code under test (meta.toml's ``under_test``) with one small
mechanical change -- ``<`` made ``<=``, ``+`` made ``-``, a constant off by one, a loop
that never runs. If every experiment of the topic still passes at its defaults with the
mutant in place, the mutant *survived*: no check of the page would notice that bug.

``whylab check --mutants [--topic SLUG] [--sample N] [--write-table]`` runs this:

* :mod:`whylab.mutation.mutants` lists the mutants of a topic's files and applies one;
* :mod:`whylab.mutation.worker` is the process that runs a topic's experiments against
  one mutant;
* :mod:`whylab.mutation.runner` copies the package, runs the baseline and every mutant
  with a timeout, and classifies each: killed, survived, timed out or equivalent;
* :mod:`whylab.mutation.report` reads each topic's ``equivalent_mutants.toml`` and
  writes the table, ``whylab/topics/MUTANTS.md``.

**Which tool, and why cosmic-ray.** Both mutmut 3 and cosmic-ray 8 install here.
mutmut 3 compiles every mutant into the source at once behind *trampolines* -- each
function becomes a dispatcher that picks the original or a mutant from an environment
variable at call time -- and drives pytest. A numba ``@njit`` kernel cannot call such
a trampoline (it is a Python-level dispatch numba does not compile), so mutmut cannot
mutate the compiled kernels that three topics put under test, and it would run our
pytest suite rather than the topics' own experiments. cosmic-ray 8 (its operators and
its parso-based mutation, used here as a library: ``mutation_positions`` to list,
``mutate_code`` to apply) writes one mutant as plain source and leaves running it to
us, so a mutated kernel is compiled like any other code and the "test" is exactly the
topic's experiments at their defaults.

**Numba and stale code.** Every mutant runs in a fresh process, on a private copy of
the package, with ``PYTHONDONTWRITEBYTECODE=1`` and its own empty ``NUMBA_CACHE_DIR``.
A shared numba cache would be unsafe: numba validates a cached kernel by its own
file's modification time and size (a ``<`` → ``>`` mutant keeps the size, and two
mutants can land in the same second), and not at all by the kernels it calls from
other files. ``NUMBA_DISABLE_JIT`` would be cheaper but dishonest: interpreted, a
kernel has Python's integers and bounds checks instead of the compiled semantics the
page measures, and is slow enough to time out.
"""
