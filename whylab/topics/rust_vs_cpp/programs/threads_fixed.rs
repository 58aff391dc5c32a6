// The synchronised versions: an atomic counter shared by scoped threads, and Arc in place
// of Rc. Prints the final count (2 x the first argument) and the Arc's value plus one.
use std::env;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

fn main() {
    let per_thread: u64 = env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let counter = AtomicU64::new(0);
    thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..per_thread {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let shared = Arc::new(5);
    let moved = Arc::clone(&shared);
    let plus_one = thread::spawn(move || *moved + 1).join().unwrap();
    println!("{} {}", counter.load(Ordering::Relaxed), plus_one);
}
