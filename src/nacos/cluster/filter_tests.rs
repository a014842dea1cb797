//! `DistroFilter#doFilter`'s decision against the Java. The owners are those of
//! `tests/it/nacos_distro.rs`'s table: `10.1.0.1:8080` hashes to 1839857309, which is 2 (nacos3)
//! over three members and 1 (nacos2) over two.

use super::distro::DistroMapper;
use super::filter::{route, tag_of, Route};
use super::member::MemberView;
use crate::nacos::types::ServiceKey;
use crate::nacos::wire::{BeatReq, DeregisterReq, NacosMsg};
use crate::sim::name::Name;
use std::sync::Arc;

fn mapper(me: &str, all: &[&str]) -> DistroMapper {
    DistroMapper::from_view(&MemberView::new(me, all.iter().map(|n| Arc::from(*n))))
}

const ALL: [&str; 3] = ["nacos1", "nacos2", "nacos3"];

#[test]
fn a_request_for_another_members_instance_is_forwarded_to_it() {
    assert_eq!(route(&mapper("nacos1", &ALL), "10.1.0.1:8080", None), Route::Forward(Arc::from("nacos3")));
}

#[test]
fn a_request_for_this_members_instance_is_handled_here() {
    assert_eq!(route(&mapper("nacos3", &ALL), "10.1.0.1:8080", None), Route::Local);
    // Proxied here by a peer that saw it the same way: handled as well.
    assert_eq!(route(&mapper("nacos3", &ALL), "10.1.0.1:8080", Some("nacos1")), Route::Local);
}

#[test]
fn a_peers_request_this_member_is_not_responsible_for_is_refused_not_forwarded_again() {
    let Route::Refuse { status, message } = route(&mapper("nacos2", &ALL), "10.1.0.1:8080", Some("nacos1")) else {
        panic!("refused")
    };
    assert_eq!(status, 400);
    assert_eq!(&*message, "receive invalid redirect request from peer nacos1");
}

#[test]
fn the_tag_is_ip_colon_port_and_only_instance_requests_have_one() {
    let service = ServiceKey::new("public", "DEFAULT_GROUP", "orders");
    let (ip, cluster): (Name, Arc<str>) = ("10.1.0.1".into(), Arc::from("DEFAULT"));
    let beat = BeatReq { service: service.clone(), cluster: Name::new(&cluster), ip, port: 8080, body: None };
    assert_eq!(tag_of(&NacosMsg::Beat(beat)).as_deref(), Some("10.1.0.1:8080"));
    let dereg = DeregisterReq { service, cluster, ip, port: 8081 };
    assert_eq!(tag_of(&NacosMsg::Deregister(Arc::new(dereg))).as_deref(), Some("10.1.0.1:8081"));
    assert_eq!(tag_of(&NacosMsg::PushAck { ack: 1 }), None);
}

#[test]
fn a_failed_proxy_answers_500_with_the_exceptions_text_and_relays_an_http_error_as_it_is() {
    use super::filter::failure_answer;
    use crate::nacos::http::Failure;
    // `HttpClient#request` catches what the Apache client throws: `RestResult(500, e.toString())`.
    let (status, message) = failure_answer(&Failure::ReadTimeout);
    assert_eq!((status, &*message), (500, "java.net.SocketTimeoutException: Read timed out"));
    assert_eq!(failure_answer(&Failure::Refused).0, 500);
    assert_eq!(failure_answer(&Failure::ConnectTimeout).0, 500);
    assert_eq!(failure_answer(&Failure::Closed).0, 500);
    let http = Failure::Http { status: 503, message: Arc::from("server is DOWN now") };
    assert_eq!(failure_answer(&http), (503, Arc::from("server is DOWN now")));
}
