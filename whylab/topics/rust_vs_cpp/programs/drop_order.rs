// Drop order: three locals, then a struct with three fields. "early" drops b by hand first.
use std::env;

struct Noisy(&'static str);

impl Drop for Noisy {
    fn drop(&mut self) {
        println!("drop {}", self.0);
    }
}

#[allow(dead_code)]
struct Fields {
    field_1: Noisy,
    field_2: Noisy,
    field_3: Noisy,
}

fn main() {
    let early = env::args().nth(1).as_deref() == Some("early");
    {
        let a = Noisy("a");
        let b = Noisy("b");
        let c = Noisy("c");
        if early {
            drop(b);
        }
        let _ = (&a, &c);
    }
    {
        let _fields = Fields {
            field_1: Noisy("field_1"),
            field_2: Noisy("field_2"),
            field_3: Noisy("field_3"),
        };
    }
}
