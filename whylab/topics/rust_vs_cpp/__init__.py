"""Topic: safe Rust's ownership and borrowing against C++'s RAII, checked with real compilers."""
