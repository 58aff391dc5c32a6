// Five functions the borrow checker rejects, one error code each. This file never
// compiles: whylab runs rustc on it and reads the codes from its JSON diagnostics.
#![allow(unused)]

// E0499: the loop holds a mutable borrow of v (iter_mut) while push needs another.
fn e0499_two_mutable_borrows() {
    let mut v = vec![1, 2, 3];
    for x in v.iter_mut() {
        v.push(*x);
    }
}

// E0502: first is a shared borrow into v's buffer; push needs v mutably while first lives.
fn e0502_shared_then_mutable() {
    let mut v = vec![1, 2, 3];
    let first = &v[0];
    v.push(4);
    println!("{}", first);
}

// E0505: b is moved (and dropped) while r still borrows the box's contents.
fn e0505_move_while_borrowed() {
    let b = Box::new(vec![1, 2, 3]);
    let r = &b[0];
    drop(b);
    println!("{}", r);
}

// E0597: r outlives the block that owns the vector it points into.
fn e0597_does_not_live_long_enough() {
    let r;
    {
        let v = vec![1, 2, 3];
        r = &v[0];
    }
    println!("{}", r);
}

// E0382: v's buffer moved to w; v may not be used again.
fn e0382_use_after_move() {
    let v = vec![1, 2, 3];
    let w = v;
    println!("{} {}", v.len(), w.len());
}

fn main() {}
