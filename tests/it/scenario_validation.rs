//! The loader refuses exactly what `docs/scenario-format.md` says is wrong — addresses, perms,
//! counts past Java's `int`, partitions, event names that read as times — and one mistake yields
//! one error: the tables after it do not report false "unknown" names. Large inputs load in
//! linear work, and inputs past the documented limits are refused with the limit.

use routesim::sim::scenario::{parse, MAX_BROKERS, MAX_INSTANCES};
use std::path::Path;

use crate::common::{errors, GOOD};

/// The only error, as `line:column: message` plus its help.
fn one(extra: &str) -> String {
    let e = errors(extra);
    assert_eq!(e.0.len(), 1, "expected one error, got: {e}");
    let e = &e.0[0];
    format!("{}:{}: {} / {}", e.line, e.column, e.message, e.help.clone().unwrap_or_default())
}

fn broker_at(addr: &str) -> String {
    format!("\n[[broker]]\nname = \"a1\"\nbroker_name = \"broker-b\"\naddr = \"{addr}\"\n")
}

#[test]
fn a_broker_address_is_an_ipv4_literal_and_a_port_from_1_to_65535() {
    for (addr, why) in [
        ("999.0.0.1:99999999999", "\"999.0.0.1\" is not an IPv4 address"),
        ("10.0.0.1:65536", "port must be 1..=65535, got \"65536\""),
        ("10.0.0.1:0", "port must be 1..=65535, got \"0\""),
        ("localhost:10911", "\"localhost\" is not an IPv4 address"),
        ("10.0.0.1", "no port"),
    ] {
        let e = one(&broker_at(addr));
        assert!(e.starts_with("18:8: invalid address"), "{addr}: {e}");
        assert!(e.contains(why) && e.contains("e.g. \"10.0.0.1:10911\""), "{addr}: {e}");
    }
    parse(Path::new("t.toml"), &format!("{GOOD}{}", broker_at("10.0.0.2:65535"))).expect("valid");
}

#[test]
fn two_brokers_on_one_address_are_refused() {
    let e = one(&broker_at("10.0.0.1:10911"));
    assert!(e.starts_with("18:8: a1 and a0 have the same address 10.0.0.1:10911"), "{e}");
}

#[test]
fn a_nacos_ip_is_an_ipv4_literal() {
    let server = "\n[[nacos_server]]\nname = \"n1\"\n";
    for ip in ["abc", "10.1.0.256", ""] {
        let instance = format!("{server}[[instance]]\nname = \"i1\"\nservice = \"s\"\nip = \"{ip}\"\n");
        let e = one(&instance);
        assert!(e.starts_with(&format!("20:6: invalid ip {ip:?}")) && e.contains("0 to 255"), "{e}");
        let good = format!("{server}[[instance]]\nname = \"i1\"\nservice = \"s\"\nip = \"10.1.0.1\"\n");
        let e = one(&format!("{good}[[subscriber]]\nname = \"g\"\nservices = [\"s\"]\nip = \"{ip}\"\n"));
        assert!(e.starts_with(&format!("24:6: invalid ip {ip:?}")), "{e}");
    }
}

#[test]
fn a_permission_is_one_of_the_four_documented_spellings() {
    for p in ["", "wr", "RW"] {
        let e = one(&format!("{}permission = \"{p}\"\n", broker_at("10.0.0.2:10911")));
        assert!(e.starts_with(&format!("19:14: invalid perm {p:?}")), "{e}");
    }
}

#[test]
fn counts_stop_at_javas_int_and_the_message_gives_both_bounds() {
    let e = one(&format!("{}topics = [{{ name = \"T\", read = 4294967296 }}]\n", broker_at("10.0.0.2:10911")));
    assert!(e.contains("read must be between 0 and 2147483647 (Java's int), got 4294967296"), "{e}");
    let e = one(&format!("{}topics = [{{ name = \"T\", write = -1 }}]\n", broker_at("10.0.0.2:10911")));
    assert!(e.contains("write must be between 0 and 2147483647 (Java's int), got -1"), "{e}");
    let expect = "\n[[expect]]\nname = \"x\"\nat = \"1m\"\nroute = { namesrv = \"ns1\", topic = \"Orders\", queues = { broker-a = { read = 2147483648, write = 1 } } }\n";
    assert!(one(expect).contains("between 0 and 2147483647 (Java's int), got read = 2147483648"));
}

#[test]
fn a_seed_is_between_0_and_2_to_the_63_minus_1_as_on_the_command_line() {
    let text = GOOD.replace("duration = \"5m\"", "duration = \"5m\"\nseed = -1");
    let e = parse(Path::new("t.toml"), &text).expect_err("negative").to_string();
    assert!(e.contains("t.toml:5:8: seed must be between 0 and 9223372036854775807, got -1"), "{e}");
    let text = GOOD.replace("duration = \"5m\"", "duration = \"5m\"\nseed = 9223372036854775807");
    assert_eq!(parse(Path::new("t.toml"), &text).expect("the top of the range").seed, i64::MAX as u64);
}

#[test]
fn a_node_in_two_groups_of_a_partition_is_refused() {
    let e = one("\n[[fault]]\nat = \"1m\"\npartition = [[\"a0\"], [\"a0\", \"ns1\"]]\n");
    assert!(e.starts_with("17:23: \"a0\" is in two groups of this partition (1 and 2)"), "{e}");
}

#[test]
fn a_partition_with_an_unknown_node_says_the_node_is_unknown() {
    let e = one("\n[[fault]]\nat = \"1m\"\npartition = [[\"a9\"], [\"ns1\"]]\n");
    assert!(e.starts_with("17:15: unknown process \"a9\" / did you mean \"a0\"?"), "{e}");
}

#[test]
fn an_event_name_that_reads_as_a_time_is_refused() {
    for name in ["61s", "1m30s", "kill + 5s"] {
        let e = one(&format!("\n[[fault]]\nat = \"1m\"\nname = \"{name}\"\ncrash = \"a0\"\n"));
        assert!(e.starts_with(&format!("17:8: the event name {name:?} reads as a time")), "{e}");
    }
}

#[test]
fn an_anchor_on_a_default_name_holding_a_plus_finds_its_event() {
    // The default name of a latency fault is "latency a0 -> ns1 5ms+0s".
    let text = format!(
        "{GOOD}\n[[fault]]\nat = \"1m\"\nlatency = {{ from = \"a0\", to = \"ns1\", base = \"5ms\" }}\n\
         [[expect]]\nname = \"x\"\nat = \"latency a0 -> ns1 5ms+0s\"\nlive = {{ namesrv = \"ns1\", broker = \"a0\", present = true }}\n"
    );
    parse(Path::new("t.toml"), &text).expect("the whole name is the anchor");
}

/// One wrong value, one error: what follows must not report the table it was in as missing.
#[test]
fn a_wrong_value_reports_only_itself_not_the_references_to_its_table() {
    let expect = "[[expect]]\nname = \"e\"\nafter = \"kill\"\nwithin = \"5s\"\nlive = { namesrv = \"ns1\", broker = \"a0\", present = false }\n";
    let e = one(&format!("\n[[fault]]\nat = \"1x\"\nname = \"kill\"\ncrash = \"a0\"\n{expect}"));
    assert!(e.starts_with("16:6: invalid duration \"1x\""), "{e}");
    let e = one(&format!("\n[[fault]]\nat = \"1m\"\nname = \"kill\"\ncrash = \"a9\"\n{expect}"));
    assert!(e.starts_with("18:9: unknown process \"a9\""), "{e}");
    // A broker with a wrong id still has its group and topics.
    let broker = format!("{}id = -1\ntopics = [{{ name = \"T\", read = -1 }}]\n", broker_at("10.0.0.2:10911"));
    let client = "[[client]]\nname = \"c\"\ntopics = [\"T\"]\n[[action]]\nat = \"1m\"\nwipe_write_perm = { broker_name = \"broker-b\" }\n";
    let e = errors(&format!("{broker}{client}"));
    assert_eq!(e.0.len(), 2, "{e}");
    assert!(e.0[0].message.contains("id must be between 0 and 9223372036854775807 (Java's long), got -1"), "{e}");
    assert!(e.0[1].message.contains("read must be between 0 and 2147483647"), "{e}");
    // An instance with a wrong port is still an instance.
    let nacos = "\n[[nacos_server]]\nname = \"n1\"\n[[instance]]\nname = \"i1\"\nservice = \"s\"\nip = \"10.1.0.1\"\nport = 0\n\
                 [[subscriber]]\nname = \"g\"\nservices = [\"s\"]\nudp_port = 0\n\
                 [[expect]]\nname = \"x\"\nat = \"1m\"\ninstance = { server = \"n1\", instance = \"i1\", state = \"present\" }\n\
                 [[expect]]\nname = \"y\"\nat = \"1m\"\nsubscriber = { subscriber = \"g\", service = \"s\", instances = [\"i1\"] }\n";
    let e = errors(nacos);
    assert_eq!(e.0.len(), 2, "{e}");
    assert!(e.0[0].message.contains("port must be 1..=65535, got 0"), "{e}");
    assert!(e.0[1].message.contains("udp_port must be 1..=65535, got 0"), "{e}");
}

#[test]
fn an_ambiguous_anchor_does_not_suggest_the_name_it_already_is() {
    let two = "\n[[fault]]\nat = \"1m\"\nname = \"kill\"\ncrash = \"a0\"\n[[fault]]\nat = \"2m\"\nname = \"kill\"\nrestart = \"a0\"\n";
    let e = one(&format!("{two}[[expect]]\nname = \"e\"\nafter = \"kill\"\nwithin = \"5s\"\nlive = {{ namesrv = \"ns1\", broker = \"a0\", present = false }}\n"));
    assert!(e.contains("2 events are named \"kill\""), "{e}");
    assert!(!e.contains("did you mean"), "{e}");
}

/// `broker0` ... with every broker on its own address.
fn brokers(n: usize) -> String {
    let mut t = String::from("[scenario]\nname = \"many\"\nduration = \"1m\"\n\n[[namesrv]]\nname = \"ns1\"\n\n[[namesrv]]\nname = \"ns2\"\n");
    for i in 0..n {
        let addr = format!("10.{}.{}.{}:10911", i / 65536, i / 256 % 256, i % 256);
        t += &format!("\n[[broker]]\nname = \"b{i}\"\nbroker_name = \"g{i}\"\naddr = \"{addr}\"\n");
    }
    t
}

#[test]
fn ten_thousand_brokers_without_namesrvs_load_and_each_registers_with_all() {
    // Each broker without `namesrvs` gets "every name server": once a scan of every process per
    // broker (quadratic: 16 s here), now a lookup.
    let s = parse(Path::new("many.toml"), &brokers(MAX_BROKERS)).expect("valid");
    assert_eq!(s.brokers.len(), MAX_BROKERS);
    assert!(s.brokers.iter().all(|b| b.namesrvs == ["ns1", "ns2"]));
}

#[test]
fn more_brokers_or_instances_than_the_limit_are_refused_at_the_first_one_past_it() {
    let e = parse(Path::new("many.toml"), &brokers(MAX_BROKERS + 1)).expect_err("over the limit");
    assert_eq!(e.0.len(), 1, "{e}");
    let text = e.to_string();
    assert!(text.contains("too many [[broker]] tables: routesim loads at most 10000"), "{text}");
    assert_eq!(e.0[0].line, 11 + 5 * MAX_BROKERS, "{text}");
    let mut t = String::from("[scenario]\nname = \"n\"\nduration = \"1m\"\n[[nacos_server]]\nname = \"n1\"\n");
    for i in 0..=MAX_INSTANCES {
        t += &format!("[[instance]]\nname = \"i{i}\"\nservice = \"s\"\nip = \"10.1.0.1\"\nport = {}\n", 1 + i);
    }
    let e = parse(Path::new("n.toml"), &t).expect_err("over the limit").to_string();
    assert!(e.contains("too many [[instance]] tables: routesim loads at most 20000"), "{e}");
}
