//! `DistroMapper` against the Java formula. Each expected index is worked by hand from
//! `String.hashCode` (`h = 31*h + c` over the characters, wrapping at 32 bits) and
//! `Math.abs(h % Integer.MAX_VALUE) % size`.

use super::distro::{distro_hash, java_string_hash, DistroMapper};
use super::member::MemberView;
use std::sync::Arc;

fn view(me: &str, all: &[&str]) -> MemberView {
    MemberView::new(me, all.iter().map(|n| Arc::from(*n)))
}

#[test]
fn string_hash_is_javas() {
    // "a" = 97; "ab" = 31*97 + 98 = 3105.
    assert_eq!(java_string_hash("a"), 97);
    assert_eq!(java_string_hash("ab"), 3105);
    // "10.0.0.1:8080".hashCode() = -1643343804 (wrapped); the next port is one more.
    assert_eq!(java_string_hash("10.0.0.1:8080"), -1_643_343_804);
    assert_eq!(java_string_hash("10.0.0.1:8081"), -1_643_343_803);
}

#[test]
fn distro_hash_takes_the_remainder_before_the_absolute_value() {
    // -1643343804 % 2147483647 = -1643343804; abs = 1643343804.
    assert_eq!(distro_hash("10.0.0.1:8080"), 1_643_343_804);
    // "polygenelubricants".hashCode() is Integer.MIN_VALUE: MIN % MAX = -1, abs = 1. Math.abs
    // of MIN alone would have stayed negative.
    assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
    assert_eq!(distro_hash("polygenelubricants"), 1);
}

#[test]
fn every_member_agrees_on_the_owner_when_their_views_agree() {
    // Three members: 1643343804 % 3 = 0 → nacos1; 1614714653 % 3 = 2 → nacos3 for 10.0.0.2:8080.
    let all = ["nacos1", "nacos2", "nacos3"];
    for me in all {
        let m = DistroMapper::from_view(&view(me, &all));
        assert_eq!(&**m.map_srv("10.0.0.1:8080"), "nacos1");
        assert_eq!(&**m.map_srv("10.0.0.2:8080"), "nacos3");
        assert_eq!(m.responsible("10.0.0.1:8080"), me == "nacos1");
    }
}

#[test]
fn the_healthy_list_is_sorted_and_includes_self() {
    let m = DistroMapper::from_view(&view("nacos2", &["nacos3", "nacos1", "nacos2"]));
    let names: Vec<&str> = m.healthy_list().iter().map(|s| &**s).collect();
    assert_eq!(names, ["nacos1", "nacos2", "nacos3"]);
}

#[test]
fn a_suspicious_peer_keeps_its_share_and_a_down_one_loses_it() {
    // 10.0.0.3:8080 → 1586085502 % 3 = 1 → nacos2 among three; among two (nacos1, nacos3)
    // 1586085502 % 2 = 0 → nacos1.
    let mut v = view("nacos1", &["nacos1", "nacos2", "nacos3"]);
    v.on_fail("nacos2", false);
    let m = DistroMapper::from_view(&v);
    assert_eq!(&**m.map_srv("10.0.0.3:8080"), "nacos2");
    assert!(!m.responsible("10.0.0.3:8080"));
    v.on_fail("nacos2", true); // "Connection refused": DOWN at once (`MemberUtil#onFail`)
    let m = DistroMapper::from_view(&v);
    assert_eq!(&**m.map_srv("10.0.0.3:8080"), "nacos1");
    assert!(m.responsible("10.0.0.3:8080"));
}

#[test]
fn a_member_alone_in_its_view_owns_everything() {
    // Both peers DOWN: the list is [self], and any hash % 1 is 0.
    let mut v = view("nacos3", &["nacos1", "nacos2", "nacos3"]);
    v.on_fail("nacos1", true);
    v.on_fail("nacos2", true);
    let m = DistroMapper::from_view(&v);
    assert!(m.responsible("10.0.0.1:8080") && m.responsible("10.0.0.2:8080"));
}
