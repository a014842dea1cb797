use super::{Hint, KeyedMap, KeyedSet};

#[test]
fn a_hinted_lookup_finds_what_a_plain_one_finds_whatever_the_hint() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let (mut map, mut set) = (KeyedMap::new(), KeyedSet::new());
    // Hints kept across inserts and removals go stale; some are nonsense from the start.
    let mut hints = [Hint::default(); 12];
    for step in 0..4_000 {
        let key = rng.gen_range(0..12u32);
        match rng.gen_range(0..4) {
            0 => {
                map.insert(key, step);
                set.insert(key);
            }
            1 => {
                map.remove(&key);
                set.remove(&key);
            }
            2 => hints[key as usize] = Hint::of_position(rng.gen_range(0..16)),
            _ => {}
        }
        let k = key as usize;
        let mut hint = hints[k];
        assert_eq!(map.position_hinted(&key, &mut hint), map.position(&key), "step {step}");
        assert_eq!(set.contains_hinted(&key, &mut hints[k]), set.contains(&key), "step {step}");
        if let Some(at) = map.position(&key) {
            assert_eq!(hint, Hint::of_position(at), "a found key's hint is renewed (step {step})");
        }
    }
}

#[test]
fn iteration_is_sorted_whatever_the_history_of_inserts_and_removals() {
    let mut map = KeyedMap::new();
    for name in ["broker-b", "broker-d", "broker-a", "broker-c", "broker-e"] {
        map.insert(name.to_string(), name.len());
    }
    // swap_remove moves the last entry into the hole: storage order is now scrambled.
    map.remove("broker-b");
    map.insert("broker-0".to_string(), 0);
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    assert_eq!(keys, ["broker-0", "broker-a", "broker-c", "broker-d", "broker-e"]);
    assert_eq!(format!("{map:?}"), r#"{"broker-0": 0, "broker-a": 8, "broker-c": 8, "broker-d": 8, "broker-e": 8}"#);
}

#[test]
fn retain_sorted_asks_in_key_order_and_drops_what_it_is_told_to() {
    let mut map: KeyedMap<String, u32> =
        ["t3", "t1", "t5", "t2", "t4"].into_iter().enumerate().map(|(i, k)| (k.to_string(), i as u32)).collect();
    map.remove("t5");
    let mut asked = Vec::new();
    // A pass that stops changing things after its first odd value, as the unregister
    // cleanup's abort does: only key order makes its outcome well defined.
    let mut stopped = false;
    map.retain_sorted(|k, v| {
        asked.push(k.clone());
        *v += 10;
        let keep = stopped || *v % 2 == 0;
        stopped |= *v % 2 == 1;
        keep
    });
    assert_eq!(asked, ["t1", "t2", "t3", "t4"]);
    let left: Vec<(&String, &u32)> = map.iter().collect();
    assert_eq!(left, [(&"t2".to_string(), &13), (&"t3".to_string(), &10), (&"t4".to_string(), &14)]);
}

#[test]
fn a_set_iterates_sorted_after_removals_as_a_btree_set_would() {
    let mut set: KeyedSet<String> = ["b", "d", "a", "c"].into_iter().map(String::from).collect();
    assert!(set.remove("b") && !set.remove("b"));
    assert!(set.insert("0".into()) && !set.insert("a".into()));
    assert_eq!(format!("{set:?}"), r#"{"0", "a", "c", "d"}"#);
    assert_eq!(set.to_btree().into_iter().collect::<Vec<_>>(), ["0", "a", "c", "d"]);
}

#[test]
fn maps_with_the_same_entries_are_equal_in_any_insertion_order() {
    let a: KeyedMap<u32, &str> = [(1, "x"), (2, "y")].into_iter().collect();
    let b: KeyedMap<u32, &str> = [(2, "y"), (1, "x")].into_iter().collect();
    assert_eq!(a, b);
    let c: KeyedMap<u32, &str> = [(2, "y"), (1, "z")].into_iter().collect();
    assert_ne!(a, c);
}
