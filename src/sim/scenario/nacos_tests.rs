//! Validation of the Nacos tables: defaults, apps, references and positioned errors.

use super::{parse, Action, ScenarioErrors};
use crate::nacos::types::ServiceKey;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::expect::{InstanceState, NacosSubject, Subject};
use std::path::Path;

const HEAD: &str = "[scenario]\nname = \"t\"\nduration = \"1m\"\n";

fn errors(body: &str) -> ScenarioErrors {
    parse(Path::new("t.toml"), &format!("{HEAD}{body}")).expect_err("should be invalid")
}

/// The one error's `line:column: message`, and its help.
fn one(body: &str) -> (String, String) {
    let e = errors(body);
    assert_eq!(e.0.len(), 1, "{e}");
    let e = &e.0[0];
    (format!("{}:{}: {}", e.line, e.column, e.message), e.help.clone().unwrap_or_default())
}

const SERVER: &str = "[[nacos_server]]\nname = \"nacos1\"\n";

#[test]
fn a_scenario_can_hold_rocketmq_and_nacos_side_by_side() {
    let s = parse(
        Path::new("t.toml"),
        &format!(
            "{HEAD}[[namesrv]]\nname = \"ns1\"\n\
             [[broker]]\nname = \"a0\"\nbroker_name = \"broker-a\"\naddr = \"10.0.0.1:10911\"\n\
             {SERVER}[[instance]]\nname = \"orders-1\"\nservice = \"orders\"\nip = \"10.1.0.1\"\n\
             [[subscriber]]\nname = \"gateway\"\nservices = [\"orders\"]\n\
             [[fault]]\nat = \"10s\"\ncrash = \"orders-1\"\n\
             [[fault]]\nat = \"10s\"\npartition = [[\"a0\"], [\"nacos1\", \"ns1\"]]\n\
             [[expect]]\nname = \"x\"\nat = \"20s\"\ninstance = {{ server = \"nacos1\", instance = \"orders-1\", state = \"present\" }}\n"
        ),
    )
    .expect("valid");
    assert_eq!(s.brokers.len(), 1);
    let n = &s.nacos;
    assert!(n.servers[0].config.light_beat_enabled, "defaults to Nacos's switch");
    assert_eq!(n.servers[0].push_delay, SimDuration::from_millis(500));
    let app = &n.apps[0];
    assert_eq!((app.name.as_str(), app.servers.as_slice()), ("orders-1", ["nacos1".to_string()].as_slice()));
    assert_eq!(app.read_timeout, SimDuration::from_secs(50));
    let i = &app.instances[0];
    assert_eq!(i.service, ServiceKey::new("public", "DEFAULT_GROUP", "orders"));
    assert_eq!((i.instance.port, &*i.instance.cluster), (8080, "DEFAULT"));
    assert_eq!(i.period, SimDuration::from_secs(5));
    assert_eq!(n.subscribers[0].ip, "10.255.0.1");
    assert_eq!(s.timeline[0].action, Action::Crash("orders-1".into()));
    assert_eq!(
        s.expects[0].subject,
        Subject::Nacos(NacosSubject::Instance {
            servers: vec!["nacos1".into()],
            instance: "orders-1".into(),
            state: InstanceState::Present
        })
    );
}

#[test]
fn instances_of_one_app_share_a_process_that_starts_with_the_first() {
    let s = parse(
        Path::new("t.toml"),
        &format!(
            "{HEAD}{SERVER}[[instance]]\nname = \"orders-1\"\napp = \"shop\"\nservice = \"orders\"\nip = \"10.1.0.1\"\nstart = \"5s\"\n\
             [[instance]]\nname = \"pay-1\"\napp = \"shop\"\nservice = \"pay\"\nip = \"10.1.0.1\"\nstart = \"2s\"\n\
             [[fault]]\nat = \"10s\"\nshutdown = \"shop\"\n"
        ),
    )
    .expect("valid");
    let app = &s.nacos.apps[0];
    assert_eq!(s.nacos.apps.len(), 1);
    assert_eq!(app.start, SimTime(2_000));
    assert_eq!(app.instances.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), ["orders-1", "pay-1"]);
}

#[test]
fn a_fault_must_target_the_app_not_an_instance_inside_it() {
    let (msg, help) = one(&format!(
        "{SERVER}[[instance]]\nname = \"orders-1\"\napp = \"shop\"\nservice = \"orders\"\nip = \"10.1.0.1\"\n\
         [[fault]]\nat = \"10s\"\ncrash = \"orders-1\"\n"
    ));
    assert_eq!(msg, "13:9: unknown process \"orders-1\"");
    assert!(help.contains("shop"), "the app is listed among the processes: {help}");
}

#[test]
fn an_interval_longer_than_a_timeout_is_refused_like_check_instance_is_legal() {
    // Nacos NamingUtils#checkInstanceIsLegal
    let (msg, help) = one(&format!(
        "{SERVER}[[instance]]\nname = \"a\"\nservice = \"s\"\nip = \"10.1.0.1\"\n\
         metadata = {{ \"preserved.heart.beat.interval\" = \"20000\" }}\n"
    ));
    assert!(msg.starts_with("10:12: instance a: Instance 'heart beat interval' must less than"), "{msg}");
    assert!(help.contains("checkInstanceIsLegal"));
}

#[test]
fn a_non_numeric_timeout_is_accepted_because_nacos_accepts_it() {
    let body = format!(
        "{SERVER}[[instance]]\nname = \"a\"\nservice = \"s\"\nip = \"10.1.0.1\"\n\
         metadata = {{ \"preserved.heart.beat.timeout\" = \"15s\" }}\n"
    );
    assert!(parse(Path::new("t.toml"), &format!("{HEAD}{body}")).is_ok());
}

#[test]
fn an_app_whose_instances_disagree_on_servers_is_an_error() {
    let (msg, help) = one(&format!(
        "{SERVER}[[nacos_server]]\nname = \"nacos2\"\n\
         [[instance]]\nname = \"a\"\napp = \"shop\"\nservice = \"s\"\nip = \"10.1.0.1\"\nservers = [\"nacos1\"]\n\
         [[instance]]\nname = \"b\"\napp = \"shop\"\nservice = \"t\"\nip = \"10.1.0.1\"\nservers = [\"nacos2\"]\n"
    ));
    assert_eq!(
        msg,
        "16:7: b is in app shop but its `servers`, `namespace`, `read_timeout`, `cores`, `beat_threads` or `transport` differ"
    );
    assert!(help.contains("one NamingService"));
}

#[test]
fn two_instances_nacos_would_see_as_one_are_an_error() {
    let (msg, _) = one(&format!(
        "{SERVER}[[instance]]\nname = \"a\"\nservice = \"s\"\nip = \"10.1.0.1\"\n\
         [[instance]]\nname = \"b\"\nservice = \"s\"\nip = \"10.1.0.1\"\n"
    ));
    assert_eq!(msg, "13:6: b and a are the same instance to Nacos (same service, ip and port)");
}

#[test]
fn nacos_expectations_report_unknown_names_and_words_with_positions() {
    let setup = format!(
        "{SERVER}[[instance]]\nname = \"orders-1\"\nservice = \"orders\"\nip = \"10.1.0.1\"\n\
         [[subscriber]]\nname = \"gateway\"\nservices = [\"orders\"]\n"
    );
    let (msg, help) = one(&format!(
        "{setup}[[expect]]\nname = \"x\"\nat = \"5s\"\ninstance = {{ server = \"nacos1\", instance = \"orders-2\", state = \"healthy\" }}\n"
    ));
    assert_eq!(msg, "16:44: unknown instance \"orders-2\"");
    assert_eq!(help, "did you mean \"orders-1\"?");
    let (msg, _) = one(&format!(
        "{setup}[[expect]]\nname = \"x\"\nat = \"5s\"\ninstance = {{ server = \"nacos1\", instance = \"orders-1\", state = \"sick\" }}\n"
    ));
    assert_eq!(msg, "16:64: unknown state \"sick\"");
    let (msg, help) = one(&format!(
        "{setup}[[expect]]\nname = \"x\"\nat = \"5s\"\nsubscriber = {{ subscriber = \"gateway\", service = \"pay\", healthy = [] }}\n"
    ));
    assert_eq!(msg, "16:50: gateway does not subscribe to DEFAULT_GROUP@@pay");
    assert_eq!(help, "it subscribes to: DEFAULT_GROUP@@orders");
    let (msg, _) = one(&format!(
        "{setup}[[expect]]\nname = \"x\"\nat = \"5s\"\nservice = {{ server = \"nacos1\", service = \"orders\" }}\n"
    ));
    assert_eq!(msg, "16:11: a service subject needs `healthy` or `total` (or both)");
}

#[test]
fn an_instance_subject_names_one_server_or_several_never_both_nor_none() {
    let setup = format!("{SERVER}[[instance]]\nname = \"orders-1\"\nservice = \"orders\"\nip = \"10.1.0.1\"\n");
    let expect = |on: &str| {
        format!("{setup}[[expect]]\nname = \"x\"\nat = \"5s\"\ninstance = {{ {on}instance = \"orders-1\", state = \"healthy\" }}\n")
    };
    let s =
        parse(Path::new("t.toml"), &format!("{HEAD}{}", expect("servers = [\"nacos1\"], "))).expect("a list of one");
    let Subject::Nacos(NacosSubject::Instance { servers, .. }) = &s.expects[0].subject else { panic!() };
    assert_eq!(servers, &["nacos1".to_string()]);
    let (msg, help) = one(&expect("server = \"nacos1\", servers = [\"nacos1\"], "));
    assert_eq!(msg, "13:43: both `server` and `servers`");
    assert!(help.contains("holds on any of several"), "{help}");
    let (msg, _) = one(&expect("servers = [], "));
    assert_eq!(msg, "13:24: `servers` is empty");
    let (msg, help) = one(&expect(""));
    assert_eq!(msg, "13:12: an instance subject names no server");
    assert!(help.contains("servers = [...]"), "{help}");
    let (msg, _) = one(&expect("servers = [\"nacos1\", \"nacos9\"], "));
    assert!(msg.starts_with("13:35: ") && msg.contains("\"nacos9\""), "each listed server must exist: {msg}");
}

#[test]
fn a_subscriber_of_an_unknown_service_gets_a_suggestion() {
    let (msg, help) = one(&format!(
        "{SERVER}[[instance]]\nname = \"a\"\nservice = \"orders\"\nip = \"10.1.0.1\"\n\
         [[subscriber]]\nname = \"gateway\"\nservices = [\"order\"]\n"
    ));
    assert_eq!(msg, "12:13: unknown service \"order\" in namespace public");
    assert_eq!(help, "did you mean \"DEFAULT_GROUP@@orders\"?");
}

#[test]
fn a_misspelt_instance_key_suggests_the_right_one() {
    let (msg, help) =
        one(&format!("{SERVER}[[instance]]\nname = \"a\"\nservice = \"s\"\nip = \"10.1.0.1\"\nread_timout = \"3s\"\n"));
    assert!(msg.ends_with("unknown key `read_timout`"), "{msg}");
    assert!(help.starts_with("did you mean `read_timeout`?"), "{help}");
}

#[test]
fn a_standalone_invariant_in_a_distro_cluster_is_refused_where_it_is_listed() {
    let body =
        "[scenario]\nname = \"t\"\nduration = \"1m\"\ninvariants = [\"distro_agreement\", \"nacos_bounded_expiry\"]\n\
                [[nacos_server]]\nname = \"nacos1\"\ncluster = \"east\"\n\
                [[nacos_server]]\nname = \"nacos2\"\ncluster = \"east\"\n";
    let e = parse(Path::new("t.toml"), body).expect_err("a cluster");
    assert_eq!(e.0.len(), 1, "{e}");
    let (line, column, msg) = (e.0[0].line, e.0[0].column, &e.0[0].message);
    assert_eq!((line, column), (4, 35), "{msg}");
    assert!(
        msg.contains("\"nacos_bounded_expiry\" judges standalone naming servers") && msg.contains("nacos1"),
        "{msg}"
    );
    assert!(e.0[0].help.as_deref().is_some_and(|h| h.contains("distro_agreement")));
    // One member alone in its cluster is responsible for every client: allowed.
    let alone = body.replace("[[nacos_server]]\nname = \"nacos2\"\ncluster = \"east\"\n", "");
    assert!(parse(Path::new("t.toml"), &alone).is_ok());
}
