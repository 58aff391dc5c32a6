// Bounds checks: the same sum written three ways. Arguments: n, passes. Prints the
// fastest nanoseconds per element of each (passes rotate through them) and a checksum.
use std::env;
use std::time::Instant;

// Indexing with a bound the compiler cannot relate to v.len(): every v[i] is checked.
#[inline(never)]
#[no_mangle]
pub fn sum_indexed(v: &[i64], n: usize) -> i64 {
    let mut total = 0i64;
    for i in 0..n {
        total = total.wrapping_add(v[i]);
    }
    total
}

// Indexing up to v.len(): the optimiser proves i < v.len() and removes the check.
#[inline(never)]
#[no_mangle]
pub fn sum_indexed_to_len(v: &[i64]) -> i64 {
    let mut total = 0i64;
    for i in 0..v.len() {
        total = total.wrapping_add(v[i]);
    }
    total
}

// An iterator: no index, so nothing to check.
#[inline(never)]
#[no_mangle]
pub fn sum_iterated(v: &[i64]) -> i64 {
    v.iter().fold(0i64, |total, &x| total.wrapping_add(x))
}

fn main() {
    let args: Vec<String> = env::args().skip(1).collect();
    let (n, passes): (usize, usize) = (args[0].parse().unwrap(), args[1].parse().unwrap());
    let mut v: Vec<i64> = (0..n as i64).collect();
    let mut best = [f64::MAX; 3];
    let mut checksum = 0i64;
    for pass in 0..passes {
        v[pass % n] += 1; // a different sum every pass: no call can be skipped
        for which in 0..3 {
            let start = Instant::now();
            let total = match (which + pass) % 3 {
                0 => sum_indexed(&v, n),
                1 => sum_indexed_to_len(&v),
                _ => sum_iterated(&v),
            };
            let ns = start.elapsed().as_nanos() as f64 / n as f64;
            checksum = checksum.wrapping_add(total);
            let slot = (which + pass) % 3;
            best[slot] = best[slot].min(ns);
        }
    }
    println!("{:.4} {:.4} {:.4} {}", best[0], best[1], best[2], checksum);
}
