"""Experiment ``drop-order``: when destructors and Drop run, printed by the programs.

``programs/drop_order.rs`` and ``drop_order.cpp`` make three locals a, b, c and then a
struct of three fields, each printing ``drop NAME`` as it dies. The rules they are
checked against: locals are destroyed in reverse order of construction in both
languages (the Rust Reference, "Destructors"; C++ [stmt.jump]/[basic.life]); a
struct's fields are dropped in *declaration* order in Rust, but a class's members are
destroyed in *reverse* declaration order in C++ ([class.dtor]).
"""

from __future__ import annotations

from whylab.explorer.experiment import Check, Control, Result, T, Table, control_active, experiment
from whylab.topics.rust_vs_cpp import toolchain
from whylab.topics.rust_vs_cpp.compiled_checks import NEEDS_CXX, NEEDS_RUSTC
from whylab.topics.rust_vs_cpp.recorded import shown_where_not_applicable

LOCALS = ["a", "b", "c"]  # in order of construction
FIELDS = ["field_1", "field_2", "field_3"]  # in order of declaration


def order_check(check_id, name, build, run, expected, needs) -> Check:
    if build is None:
        return Check.not_applicable(id=check_id, name=name, expected=" ".join(expected),
                                    why=needs)
    names = set(expected)
    seen = [n for n in _names(run) if n in names]
    return Check(id=check_id, name=name, passed=seen == expected, measured=" → ".join(seen),
                 expected=" → ".join(expected))


def _names(run) -> list[str]:
    if run is None:
        return []
    return [row.split(" ", 1)[1] for row in run.stdout.splitlines() if row.startswith("drop ")]


@experiment(
    name="drop-order",
    title=T("RAII and Drop: who is destroyed when", "RAII 与 Drop：谁在什么时候被销毁"),
    description=T(
        "Runs the Rust and C++ programs that print each destructor as it runs: three locals, "
        "then a struct of three fields.",
        "运行在每个析构函数执行时打印一行的 Rust 与 C++ 程序：先是三个局部变量，"
        "然后是一个有三个字段的结构体。"),
    time_limit_s=120.0,
    controls=[
        Control("b-dropped-early",
                T("b is dropped by hand before the end of its scope",
                  "b 在作用域结束之前被手动销毁"),
                breaks=("rust-locals-reverse", "cpp-locals-reverse")),
        Control("one-rule-for-fields",
                T("the claim assumes C++'s rule (reverse declaration order) for Rust's fields too",
                  "断言假定 Rust 的字段也遵循 C++ 的规则（按声明的逆序）"),
                breaks=("rust-fields-in-order",)),
        Control("rust-rule-for-members",
                T("the claim assumes Rust's rule (declaration order) for C++'s members too",
                  "断言假定 C++ 的成员也遵循 Rust 的规则（按声明顺序）"),
                breaks=("cpp-members-reversed",)),
    ],
)
@shown_where_not_applicable("drop-order")
def drop_order() -> Result:
    args = ("early",) if control_active("b-dropped-early") else ()
    rust = toolchain.build("drop_order.rs")
    cpp = toolchain.build("drop_order.cpp", ("-O2",))
    rust_run = toolchain.run(rust.binary, args) if rust and rust.ok else None
    cpp_run = toolchain.run(cpp.binary, args) if cpp and cpp.ok else None
    reversed_locals = LOCALS[::-1]
    rust_fields = FIELDS[::-1] if control_active("one-rule-for-fields") else FIELDS
    cpp_members = FIELDS if control_active("rust-rule-for-members") else FIELDS[::-1]
    checks = [
        order_check("rust-locals-reverse", T("Rust drops the locals in reverse order of "
                                             "construction", "Rust 按构造的逆序销毁局部变量"),
                    rust, rust_run, reversed_locals, NEEDS_RUSTC),
        order_check("cpp-locals-reverse", T("C++ destroys the locals in reverse order of "
                                            "construction", "C++ 按构造的逆序销毁局部变量"),
                    cpp, cpp_run, reversed_locals, NEEDS_CXX),
        order_check("rust-fields-in-order", T("Rust drops a struct's fields in declaration "
                                              "order", "Rust 按声明顺序销毁结构体的字段"),
                    rust, rust_run, rust_fields, NEEDS_RUSTC),
        order_check("cpp-members-reversed", T("C++ destroys a class's members in reverse "
                                              "declaration order", "C++ 按声明的逆序销毁类的成员"),
                    cpp, cpp_run, cpp_members, NEEDS_CXX),
    ]
    rows = [[T("drop_order.rs prints", "drop_order.rs 打印"),
             " → ".join(_names(rust_run)) or "—"],
            [T("drop_order.cpp prints", "drop_order.cpp 打印"),
             " → ".join(_names(cpp_run)) or "—"]]
    table = Table(title=T("Destructors in the order they ran", "析构函数的实际运行顺序"),
                  columns=[T("program", "程序"), T("order", "顺序")], rows=rows)
    return Result(checks=checks, tables=[table])
