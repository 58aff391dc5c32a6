// The fixed versions of borrow_rejected.rs, one per error code, chosen by the first
// argument. Each prints what it computed.
use std::env;

fn e0499() -> Vec<i32> {
    let mut v = vec![1, 2, 3];
    let copies: Vec<i32> = v.iter().copied().collect(); // finish reading before writing
    v.extend(copies);
    v
}

fn e0502() -> Vec<i32> {
    let mut v = vec![1, 2, 3];
    let first = v[0]; // a copy of the value, not a reference into the buffer
    v.push(4);
    vec![first, v.len() as i32]
}

fn e0505() -> Vec<i32> {
    let b = Box::new(vec![1, 2, 3]);
    let value = b[0]; // read before the move
    drop(b);
    vec![value]
}

fn e0597() -> Vec<i32> {
    let v = vec![1, 2, 3]; // the owner lives as long as the reference
    let r = &v[0];
    vec![*r]
}

fn e0382() -> Vec<i32> {
    let v = vec![1, 2, 3];
    let w = v.clone(); // two owners need two buffers
    vec![v.len() as i32, w.len() as i32]
}

fn main() {
    let case = env::args().nth(1).unwrap_or_default();
    let out = match case.as_str() {
        "E0499" => e0499(),
        "E0502" => e0502(),
        "E0505" => e0505(),
        "E0597" => e0597(),
        "E0382" => e0382(),
        _ => {
            eprintln!("unknown case {}", case);
            std::process::exit(2);
        }
    };
    let shown: Vec<String> = out.iter().map(|x| x.to_string()).collect();
    println!("{}", shown.join(" "));
}
