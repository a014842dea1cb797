//! Process histories that make sense: the faults and actions on each process, in time order,
//! find it in the state they need (no resuming what is not hung, no restarting what runs).

use super::ctx::Ctx;
use super::timeline::Placed;
use super::Action;
use crate::sim::clock::SimTime;
use std::collections::BTreeMap;

/// Process life: what each fault needs the target to be doing, checked in time order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Life {
    NotStarted,
    Running,
    Hung,
    Down,
}

pub fn check_lifecycles(ctx: &mut Ctx, events: &[Placed], starts: &BTreeMap<String, SimTime>) {
    // Only processes some fault has touched are here; the others are running once started.
    // (Thousands of processes and faults: keep this linear.)
    let mut life: BTreeMap<&str, Life> = BTreeMap::new();
    for p in events {
        let at = p.event.at;
        let (target, need, next): (&str, &[Life], Life) = match &p.event.action {
            Action::Crash(t) | Action::HostDown(t) => (t, &[Life::Running, Life::Hung], Life::Down),
            Action::Shutdown(t) => (t, &[Life::Running], Life::Down),
            Action::Hang(t) => (t, &[Life::Running], Life::Hung),
            Action::Resume(t) => (t, &[Life::Hung], Life::Running),
            Action::Restart(t) => (t, &[Life::Down], Life::Running),
            // mqadmin commands need a running broker; a new brokerId is an edit of broker.conf,
            // possible while it is down (it takes effect at the restart).
            Action::Topic { broker, .. } | Action::BrokerPermission { broker, .. } => {
                (broker, &[Life::Running], Life::Running)
            }
            // Only a running application calls NamingService#deregisterInstance.
            Action::Deregister { app, .. } => (app, &[Life::Running], Life::Running),
            _ => continue,
        };
        let Some(&start) = starts.get(target) else { continue };
        let now = match life.get(target) {
            Some(&state) => state,
            None if start <= at => Life::Running,
            None => Life::NotStarted,
        };
        if !need.contains(&now) {
            let state = match now {
                Life::NotStarted => format!("has not started yet (it starts at {})", starts[target]),
                Life::Running => "is running".into(),
                Life::Hung => "is hung".into(),
                Life::Down => "is down".into(),
            };
            let help = match (now, need[0]) {
                (Life::Hung, Life::Running) => "resume it first",
                (Life::Down, _) => "restart it first",
                (Life::Running, Life::Down) => "crash or shut it down first",
                (Life::Running, Life::Hung) => "hang it first",
                _ => "check the order of the timeline",
            };
            ctx.error(p.span.clone(), format!("`{}` at {at}: {target} {state}", p.event.name), Some(help.into()));
            continue;
        }
        life.insert(target, next);
    }
}
