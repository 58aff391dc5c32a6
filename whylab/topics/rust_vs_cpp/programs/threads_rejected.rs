// Two ways to share data between threads that rustc refuses. Never compiles; whylab
// reads the error codes from rustc's JSON diagnostics.
#![allow(unused)]
use std::rc::Rc;
use std::thread;

// E0499: both threads would hold `&mut counter` at once.
fn two_threads_one_mutable_counter() {
    let mut counter = 0u64;
    thread::scope(|s| {
        s.spawn(|| counter += 1);
        s.spawn(|| counter += 1);
    });
}

// E0277: Rc's reference count is not atomic, so Rc<T> is not Send.
fn rc_to_another_thread() {
    let shared = Rc::new(5);
    let handle = thread::spawn(move || *shared + 1);
    handle.join().unwrap();
}

fn main() {}
