"""Experiments for "Safe Rust vs C++": real compilers on fixed programs in ``programs/``.

``borrow-checker`` (ownership_experiment): rustc's refusals beside C++ twins under
AddressSanitizer; ``threads`` (threads_experiment): shared mutation across threads,
rustc against ThreadSanitizer; ``drop-order`` (drop_experiment): destructors and Drop;
``layout`` (layout_experiment): AoS against SoA in both, timed, and their assembly;
``bounds-checks`` (bounds_experiment): Rust's index checks kept and removed;
``python-analogues`` (python_experiment): the same questions in NumPy, no compiler needed.
Compiling and running live in :mod:`~whylab.topics.rust_vs_cpp.toolchain`.
"""

from whylab.topics.rust_vs_cpp.bounds_experiment import bounds_checks
from whylab.topics.rust_vs_cpp.drop_experiment import drop_order
from whylab.topics.rust_vs_cpp.layout_experiment import layout
from whylab.topics.rust_vs_cpp.ownership_experiment import borrow_checker
from whylab.topics.rust_vs_cpp.python_experiment import python_analogues
from whylab.topics.rust_vs_cpp.threads_experiment import threads

EXPERIMENTS = [borrow_checker, threads, drop_order, layout, bounds_checks, python_analogues]
