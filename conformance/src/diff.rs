//! The comparison, pure: the model's routes (a step function per key) against the real
//! server's samples, within a tolerance.
//!
//! A sample agrees when the model showed the same route at some instant within `tolerance` of
//! it: the real server's scan runs on its own phase (up to one scan interval off the model's),
//! and the driver, the poller and the server are scheduled by a loaded OS (the slack). Every
//! model change is also matched with the first sample showing it, and the lag reported.

use crate::route::Route;
use routesim::sim::clock::{SimDuration, SimTime};
use std::collections::BTreeMap;

/// The model's route at `t`.
fn at(model: &[(SimTime, Route)], t: SimTime) -> Option<&Route> {
    model.iter().take_while(|(s, _)| *s <= t).last().map(|(_, r)| r)
}

/// Whether the real route `r` could be the model's at `t`: each of its parts — every broker
/// address (group, id) and every group's queues — was shown the same way (present with that
/// value, or absent) by the model within `tol` of `t`. Parts are judged one by one because
/// brokers register on separate connections, which the server serves concurrently: two
/// registrations the model applies in one instant (a master and its slave, or two groups) can
/// land in either order, and the mixed state in between is no disagreement.
fn agrees(model: &[(SimTime, Route)], r: &Route, t: SimTime, tol: SimDuration) -> bool {
    let seen = around(model, t, tol);
    if seen.contains(&r) {
        return true;
    }
    let Some(real) = parts(r) else { return false };
    let shown: Vec<_> = seen.iter().filter_map(|m| parts(m)).collect();
    let mut keys: Vec<&String> = real.keys().collect();
    keys.extend(shown.iter().flat_map(|p| p.keys()));
    keys.iter().all(|k| shown.iter().any(|p| p.get(*k) == real.get(*k)))
}

/// One group: its name, its addresses by id, its queues if the route has them.
type GroupParts<'a> = (&'a String, &'a BTreeMap<u64, String>, Option<(u32, u32, u32)>);

/// A route as its parts: `group#id` -> address and `group queues` -> the queue numbers and perm;
/// a part that is absent is not in the map. `None` for a name server that did not answer.
fn parts(r: &Route) -> Option<BTreeMap<String, String>> {
    let groups: Vec<GroupParts> = match r {
        Route::Present(g) => g.iter().map(|(n, (a, q))| (n, a, *q)).collect(),
        Route::Cluster(g) => g.iter().map(|(n, a)| (n, a, None)).collect(),
        Route::Absent => Vec::new(),
        Route::Down => return None,
    };
    let mut out = BTreeMap::new();
    for (name, addrs, queues) in groups {
        out.extend(addrs.iter().map(|(id, a)| (format!("{name}#{id}"), a.clone())));
        if let Some(q) = queues {
            out.insert(format!("{name} queues"), format!("{q:?}"));
        }
        // A group listed with no addresses (cluster info) is still a fact to compare.
        out.entry(format!("{name} listed")).or_insert_with(String::new);
    }
    Some(out)
}

/// Every route the model showed in `[t - tol, t + tol]`.
fn around(model: &[(SimTime, Route)], t: SimTime, tol: SimDuration) -> Vec<&Route> {
    let lo = SimTime(t.millis().saturating_sub(tol.millis()));
    let hi = SimTime(t.millis() + tol.millis());
    let mut out: Vec<&Route> = at(model, lo).into_iter().collect();
    out.extend(model.iter().filter(|(s, _)| *s > lo && *s <= hi).map(|(_, r)| r));
    out
}

/// A run of consecutive disagreeing samples.
#[derive(Debug, PartialEq)]
pub struct Disagreement {
    pub from: SimTime,
    pub to: SimTime,
    pub real: Route,
    pub model: Route,
}

/// One model change and when the real server first showed it.
#[derive(Debug, PartialEq)]
pub struct Change {
    pub at: SimTime,
    pub route: Route,
    /// Real minus model, in model milliseconds; `None`: never seen.
    pub lag_ms: Option<i64>,
}

pub fn disagreements(model: &[(SimTime, Route)], real: &[(SimTime, Route)], tol: SimDuration) -> Vec<Disagreement> {
    let mut out: Vec<Disagreement> = Vec::new();
    let mut open = false;
    for (t, r) in real {
        if agrees(model, r, *t, tol) {
            open = false;
            continue;
        }
        let m = at(model, *t).cloned().unwrap_or(Route::Absent);
        match out.last_mut() {
            Some(d) if open && d.real == *r && d.model == m => d.to = *t,
            _ => out.push(Disagreement { from: *t, to: *t, real: r.clone(), model: m }),
        }
        open = true;
    }
    out
}

/// Each model change (after the first state) with the lag of the first real sample showing it,
/// looked for from `tol` before the change until the model's next change plus `tol`.
pub fn changes(model: &[(SimTime, Route)], real: &[(SimTime, Route)], tol: SimDuration, end: SimTime) -> Vec<Change> {
    let mut out = Vec::new();
    for (i, (t, route)) in model.iter().enumerate().skip(1) {
        let lo = t.millis().saturating_sub(tol.millis());
        let hi = model.get(i + 1).map_or(end, |(n, _)| *n).millis() + tol.millis();
        let seen = real.iter().find(|(s, r)| s.millis() >= lo && s.millis() <= hi && r == route);
        let lag_ms = seen.map(|(s, _)| s.millis() as i64 - t.millis() as i64);
        out.push(Change { at: *t, route: route.clone(), lag_ms });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn present(name: &str) -> Route {
        Route::Present(BTreeMap::from([(
            name.to_string(),
            (BTreeMap::from([(0, "a:1".to_string())]), Some((4, 4, 6))),
        )]))
    }

    #[test]
    fn a_real_change_within_the_tolerance_agrees_and_its_lag_is_measured() {
        // The model drops broker a at 100 s; the real server does at 104 s (its scan phase).
        let model = vec![(SimTime(0), present("a")), (SimTime(100_000), Route::Absent)];
        let real: Vec<_> =
            (0..200).map(|s| (SimTime(s * 1000), if s < 104 { present("a") } else { Route::Absent })).collect();
        let tol = SimDuration::from_millis(7_500);
        assert!(disagreements(&model, &real, tol).is_empty());
        assert_eq!(changes(&model, &real, tol, SimTime(200_000))[0].lag_ms, Some(4_000));
    }

    #[test]
    fn a_slave_applied_before_its_master_is_no_disagreement() {
        // The model applies master and slave in one instant; the real server, serving two
        // connections at once, may apply the slave's registration first.
        let both = Route::Present(BTreeMap::from([(
            "a".to_string(),
            (BTreeMap::from([(0, "m:1".to_string()), (1, "s:1".to_string())]), Some((4, 4, 6))),
        )]));
        let slave_only = Route::Present(BTreeMap::from([(
            "a".to_string(),
            (BTreeMap::from([(1, "s:1".to_string())]), Some((4, 4, 6))),
        )]));
        let model = vec![(SimTime(0), Route::Absent), (SimTime(3), both.clone())];
        let real = vec![(SimTime(50), slave_only), (SimTime(600), both)];
        assert!(disagreements(&model, &real, SimDuration::from_millis(5_000)).is_empty());
        // But a slave alone long after the model stopped showing the master absent disagrees.
        let model = vec![(SimTime(0), Route::Absent), (SimTime(3), model[1].1.clone())];
        let late = vec![(
            SimTime(9_000),
            Route::Present(BTreeMap::from([(
                "a".to_string(),
                (BTreeMap::from([(1, "s:1".to_string())]), Some((4, 4, 6))),
            )])),
        )];
        assert_eq!(disagreements(&model, &late, SimDuration::from_millis(5_000)).len(), 1);
    }

    #[test]
    fn a_real_change_past_the_tolerance_is_one_disagreement_with_its_span() {
        let model = vec![(SimTime(0), present("a")), (SimTime(100_000), Route::Absent)];
        let real: Vec<_> =
            (0..200).map(|s| (SimTime(s * 1000), if s < 110 { present("a") } else { Route::Absent })).collect();
        let d = disagreements(&model, &real, SimDuration::from_millis(5_000));
        assert_eq!(d.len(), 1);
        // The model last showed `a` just before 100 s: the 105 s sample is already more than
        // 5 s from it (the window [100 s, 110 s] holds only the absent state).
        assert_eq!((d[0].from, d[0].to), (SimTime(105_000), SimTime(109_000)));
    }
}
