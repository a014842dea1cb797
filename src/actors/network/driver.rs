//! The driver: the network's one loop, a task of the run, which moves virtual time and delivers
//! each instant's entries.

use super::idle::Woken;
use super::kernel::Due;
use super::Net;
use crate::sim::clock::{SimDuration, SimTime};
use crate::sim::invariants::Arrival;
use crate::sim::packet::Packet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

impl Net {
    /// Drives the run until `end`, then returns `None`; or, once the trace holds `max_events`
    /// events, stops where it is and returns that instant. This is the network's one loop.
    ///
    /// The budget is checked once per pass, before an instant's entries are delivered: a loop
    /// that never lets time move (a timer re-armed every 0 ms) still comes back here between
    /// its rounds, because its actors run only while this loop waits.
    /// `stop`, set from another thread (`check --timeout`), stops the run the same way at the
    /// next pass.
    pub async fn drive(&self, end: SimTime, max_events: u64, stop: Option<Arc<AtomicBool>>) -> Option<SimTime> {
        // The observer never changes during a run: one handle for all of it, not a clone of
        // its half-dozen shared parts at every instant.
        let (gate, obs) = {
            let k = self.0.borrow();
            (k.gate.clone(), k.obs.clone())
        };
        // The earliest entry; past the end, one millisecond beyond it: reaching that proves
        // instant `end` is complete, so the observer sees its final state.
        let target = || {
            let next = self.0.borrow().agenda.next_time();
            next.filter(|t| *t <= end).unwrap_or(end + SimDuration(1))
        };
        loop {
            if target() > self.now() && gate.wait().await == Woken::Idle {
                // Every actor has finished with what was delivered, so nothing more can happen
                // before the earliest entry (which they may have moved earlier): time jumps
                // there. (Poked, it stays at this instant: an actor added an entry for it.)
                let target = target();
                let mut k = self.0.borrow_mut();
                k.now = target.max(k.now);
            }
            let now = self.now();
            obs.before_instant(now);
            if now > end {
                obs.finish(end);
                return None;
            }
            if obs.trace.borrow().count() >= max_events || stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
                return Some(now);
            }
            self.dispatch_due(now);
        }
    }

    /// What reaches a (naming) server — registrations, heartbeats, beats — is the monitor's
    /// ground truth; `Arrival::of` picks those out. Asked only when the observer watches the
    /// network.
    fn note_arrival(&self, now: SimTime, p: &Packet) {
        let k = self.0.borrow();
        if let Some(arrival) = Arrival::of(&p.body) {
            let (from, to) = (k.core.name(p.from).to_string(), k.core.name(p.to).to_string());
            let obs = k.obs.clone();
            drop(k);
            obs.arrived(now, &from, &to, arrival);
        }
    }

    /// Delivers everything due at `now`. Packets for one endpoint are gathered into one
    /// message; a batch is sent before any timer of the same process runs, so each process
    /// still sees its packets and timers in agenda order.
    fn dispatch_due(&self, now: SimTime) {
        let (mut batches, watches) = {
            let mut k = self.0.borrow_mut();
            (std::mem::take(&mut k.batches), k.obs.watches_network())
        };
        loop {
            // One borrow of the network per entry, let go only where someone else may look:
            // before a timer's closure runs, and before the monitor hears of an arrival.
            let mut k = self.0.borrow_mut();
            let Some((_, due)) = k.agenda.pop_due(now) else { break };
            match due {
                Due::Timer { owner, epoch, id, fire } => {
                    if let Some(fire) = k.admit_timer(owner, epoch, id, fire) {
                        batches.flush(owner, &k.endpoints);
                        drop(k);
                        fire();
                    }
                }
                Due::Deliver(packet) => {
                    let (arrival, deliver) = k.arrival(now, &packet);
                    if !deliver {
                        k.turn_away(now, arrival, packet);
                    } else if watches {
                        drop(k);
                        self.note_arrival(now, &packet);
                        let k = self.0.borrow();
                        batches.gather(packet, &k.endpoints, || k.agenda.due_len(now));
                    } else {
                        batches.gather(packet, &k.endpoints, || k.agenda.due_len(now));
                    }
                }
                Due::Datagram(packet) => {
                    if let Some(packet) = k.arrive_datagram(now, packet) {
                        batches.gather(packet, &k.endpoints, || 0);
                    }
                }
                Due::Notice { to, epoch, notice } => {
                    if let Some(packet) = k.admit_notice(to, epoch, notice) {
                        batches.gather(packet, &k.endpoints, || 0);
                    }
                }
                Due::IdleCheck { channel, node, epoch } => k.idle_check(now, channel, node, epoch),
                Due::Retransmit { channel, dir } => k.retransmit(now, channel, dir),
                Due::Syn { channel } => k.syn_retry(now, channel),
            }
        }
        let mut k = self.0.borrow_mut();
        batches.flush_all(&k.endpoints);
        k.batches = batches;
    }
}

impl Net {
    /// Starts [`Net::drive`] as a task of the run's `LocalSet`, beside the actors; its handle
    /// resolves to what `drive` returns.
    ///
    /// The loop is a plain task, not an actor's future. It takes no messages: actors reach the
    /// network synchronously through [`Net`], and it reaches them with actix messages. Until
    /// 2026-12-05 it ran inside an otherwise empty `NetworkActor`, and every wake-up of the loop
    /// — one per instant, 512,449 in the RocketMQ bench hour — also went through that actor's
    /// context: a poll of its (empty) mailbox, of its item list and of the future's adapter,
    /// about 280 instructions, 5% of the bench. The task sits where the actor's did in the
    /// runtime's queue, so every run is the same event for event.
    pub fn start_driver(
        &self,
        end: SimTime,
        max_events: u64,
        stop: Option<Arc<AtomicBool>>,
    ) -> tokio::task::JoinHandle<Option<SimTime>> {
        let net = self.clone();
        tokio::task::spawn_local(async move { net.drive(end, max_events, stop).await })
    }
}
