// Array of structs against struct of arrays: the sum of one field over n particles.
// Arguments: n, passes, and optionally "aos-twice" (time sum_aos in both slots). Prints the fastest nanoseconds per element of each layout
// (passes alternate AoS and SoA) and a checksum of every sum.
use std::env;
use std::time::Instant;

#[derive(Clone, Copy)]
#[repr(C)]
pub struct Particle {
    x: i64, y: i64, z: i64, vx: i64, vy: i64, vz: i64, mass: i64, charge: i64,
}

#[inline(never)]
#[no_mangle]
pub fn sum_aos(particles: &[Particle]) -> i64 {
    particles.iter().fold(0i64, |total, p| total.wrapping_add(p.x))
}

#[inline(never)]
#[no_mangle]
pub fn sum_soa(xs: &[i64]) -> i64 {
    xs.iter().fold(0i64, |total, &x| total.wrapping_add(x))
}

fn main() {
    let args: Vec<String> = env::args().skip(1).collect();
    let (n, passes): (usize, usize) = (args[0].parse().unwrap(), args[1].parse().unwrap());
    let aos_twice = args.get(2).map(|a| a == "aos-twice").unwrap_or(false);
    let mut aos: Vec<Particle> = (0..n as i64)
        .map(|i| Particle { x: i, y: 1, z: 2, vx: 3, vy: 4, vz: 5, mass: 6, charge: 7 })
        .collect();
    let mut xs: Vec<i64> = (0..n as i64).collect();
    let (mut best_aos, mut best_soa, mut checksum) = (f64::MAX, f64::MAX, 0i64);
    for pass in 0..passes {
        aos[pass % n].x += 1; // a different sum every pass: no call can be skipped
        xs[pass % n] += 1;
        let start = Instant::now();
        checksum = checksum.wrapping_add(sum_aos(&aos));
        let middle = Instant::now();
        checksum = checksum.wrapping_add(if aos_twice { sum_aos(&aos) } else { sum_soa(&xs) });
        let end = Instant::now();
        best_aos = best_aos.min((middle - start).as_nanos() as f64 / n as f64);
        best_soa = best_soa.min((end - middle).as_nanos() as f64 / n as f64);
    }
    println!("{:.4} {:.4} {}", best_aos, best_soa, checksum);
}
